"""Light and sensor: colour cast, uneven light, vignetting, soft shadows, glare, blur, noise, JPEG.

All of it is drawn once per picture as a `Look`; a video's frames share one
Look and only drift it a little (`Look.drifted`).  The light field is built at
1/8 resolution and resized, so it costs a few milliseconds at 1280x720.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from statistics import NormalDist

import cv2
import numpy as np

from .tiers import Tier


def kelvin_gains(kelvin: float) -> np.ndarray:
    """BGR multipliers of a black body at `kelvin`, green = 1 (Tanner Helland's fit)."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * np.log(t) - 161.1195681661 if t <= 66 else 288.1221695283 * (t - 60) ** -0.0755148492
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5177312231 * np.log(t - 10) - 305.0447927307)
    bgr = np.clip(np.array([b, g, r], np.float64), 1, 255)
    return (bgr / bgr[1]).astype(np.float32)


@dataclass
class Shadow:
    kind: str            # head | hand
    centre: tuple[float, float]   # fraction of the picture
    size: float          # fraction of the picture's width
    angle: float         # degrees
    depth: float         # fraction of light removed at its core


@dataclass
class Look:
    kelvin: float
    white_balance: float
    exposure: float
    gradient: tuple[float, float, float]   # strength, direction (rad), lamp-pool share
    lamp: tuple[float, float, float]       # lamp pool centre x, y (fraction), radius (fraction of width)
    vignetting: float
    shadows: list[Shadow] = field(default_factory=list)
    glare: tuple[float, float, float, float] = (0.0, 0.5, 0.5, 0.2)  # strength, x, y, radius (fractions)
    noise_sigma: float = 0.0
    focus_blur: float = 0.0
    motion: tuple[float, float] = (0.0, 0.0)                # length px, angle rad
    jpeg_quality: int = 95

    def drifted(self, rng: np.random.Generator, within: tuple[float, float],
                exposure_sd: float = 0.015) -> "Look":
        """The same room a moment later: exposure creeps, noise is new.

        The creep is a random walk turned back at the ends of `within` (the tier's exposure
        range): unbounded, a thousand frames of it wander by a factor of 1.6 either way
        (one standard deviation), and hard-tier games ended with up to nine tenths of
        their picture burnt white, beyond the tier's own range."""
        exposure = self.exposure * float(np.exp(rng.normal(0, exposure_sd)))
        low, high = within
        if exposure > high:
            exposure = high * high / exposure
        elif exposure < low:
            exposure = low * low / exposure
        # (a step longer than the range is wide would be turned back past its other end)
        return replace(self, exposure=float(min(max(exposure, low), high)))

    def describe(self) -> dict:
        d = dict(self.__dict__)
        d["shadows"] = [dict(s.__dict__) for s in self.shadows]
        return d


def sample_look(tier: Tier, rng: np.random.Generator) -> Look:
    u = lambda r: float(rng.uniform(*r))  # noqa: E731
    shadows = []
    for _ in range(int(rng.integers(tier.shadows[0], tier.shadows[1] + 1))):
        kind = "head" if rng.uniform() < 0.5 else "hand"
        shadows.append(Shadow(kind, (float(rng.uniform(-0.1, 1.1)), float(rng.uniform(-0.1, 1.1))),
                              float(rng.uniform(0.25, 0.5) if kind == "head" else rng.uniform(0.15, 0.3)),
                              float(rng.uniform(0, 360)), u(tier.shadow_depth)))
    return Look(
        kelvin=u(tier.kelvin), white_balance=u(tier.white_balance), exposure=u(tier.exposure),
        gradient=(u(tier.uneven_light), float(rng.uniform(0, 2 * np.pi)), float(rng.uniform())),
        lamp=(float(rng.uniform(0, 1)), float(rng.uniform(0, 1)), float(rng.uniform(0.4, 1.0))),
        vignetting=u(tier.vignetting), shadows=shadows,
        glare=(u(tier.glare), float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.06, 0.2))),
        noise_sigma=u(tier.noise_sigma), focus_blur=u(tier.focus_blur_px),
        motion=(u(tier.motion_blur_px), float(rng.uniform(0, np.pi))),
        jpeg_quality=int(rng.integers(tier.jpeg_quality[0], tier.jpeg_quality[1] + 1)),
    )


def light_field_small(look: Look, size: tuple[int, int]) -> np.ndarray:
    """Brightness multiplier (exposure and shadows included) at 1/8 of the picture `size`.

    Light varies slowly, so it is drawn small; pixel (i, j) covers the picture
    the way `cv2.resize` to `size` spreads it.
    """
    w, h = size
    sw, sh = max(8, w // 8), max(6, h // 8)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    fx, fy = (xx + 0.5) / sw, (yy + 0.5) / sh
    strength, direction, pool = look.gradient
    lin = (fx - 0.5) * np.cos(direction) + (fy - 0.5) * np.sin(direction) * (h / w)
    lx, ly, lr = look.lamp
    lamp = np.exp(-(((fx - lx) ** 2 + ((fy - ly) * h / w) ** 2) / (lr * lr)))
    field_ = 1.0 + strength * ((1 - pool) * lin * 1.6 + pool * (lamp - 0.5))
    r2 = ((fx - 0.5) ** 2 + ((fy - 0.5) * h / w) ** 2) / 0.34
    field_ *= 1.0 - look.vignetting * np.clip(r2, 0, 1.5) ** 1.3
    shade = np.zeros((sh, sw), np.float32)
    for s in look.shadows:
        blob = np.zeros((sh, sw), np.float32)
        c = (int(s.centre[0] * sw), int(s.centre[1] * sh))
        a = max(1, int(s.size * sw / 2))
        if s.kind == "head":
            cv2.ellipse(blob, c, (a, int(a * 1.25)), s.angle, 0, 360, 1.0, -1)
        else:   # a hand: palm and a forearm running off the picture
            cv2.ellipse(blob, c, (int(a * 0.5), int(a * 0.6)), s.angle, 0, 360, 1.0, -1)
            far = (int(c[0] + np.cos(np.radians(s.angle)) * sw * 2), int(c[1] + np.sin(np.radians(s.angle)) * sw * 2))
            cv2.line(blob, c, far, 1.0, max(1, int(a * 0.7)))
        blob = cv2.GaussianBlur(blob, (0, 0), max(0.8, a * 0.35))
        shade = np.maximum(shade, blob * s.depth)
    field_ *= 1.0 - shade
    return (field_ * look.exposure).astype(np.float32)


def light_field(look: Look, size: tuple[int, int]) -> np.ndarray:
    """Brightness multiplier over the picture (float32 h x w), shadows included."""
    return cv2.resize(light_field_small(look, size), size, interpolation=cv2.INTER_LINEAR)


def colour_cast(look: Look) -> np.ndarray:
    """BGR gains of the light the white balance did not correct (mean 1)."""
    cast = kelvin_gains(look.kelvin) ** (1.0 - look.white_balance)
    return cast / cast.mean()


def expose(img: np.ndarray, look: Look, field_small: np.ndarray, gloss: np.ndarray | None = None,
           glare_at: tuple[float, float, float] | None = None) -> np.ndarray:
    """Light a float32 BGR picture: uint8 out (saturated), as the sensor records it.

    `field_small` is the brightness (`light_field_small`) sampled for this
    picture's pixels; `glare_at` (x, y, radius in pixels) the lamp's reflection,
    added where `gloss` (0-1 per pixel) says the surface shines.  Full-size
    work is one resize and one multiply; the glare touches only its own box.
    """
    h, w = img.shape[:2]
    field3 = cv2.merge([field_small * float(g) for g in colour_cast(look)])
    out = cv2.multiply(np.asarray(img, np.float32), cv2.resize(field3, (w, h), interpolation=cv2.INTER_LINEAR),
                       dtype=cv2.CV_8U)
    strength = look.glare[0]
    if gloss is not None and glare_at is not None and strength > 0:
        gx, gy, r = glare_at
        reach = 3.0 * r          # exp(-9) of the peak: far below one grey level
        x0, x1 = max(0, int(gx - reach)), min(w, int(gx + reach) + 1)
        y0, y1 = max(0, int(gy - reach)), min(h, int(gy + reach) + 1)
        if x1 > x0 and y1 > y0:
            bx = np.exp(-((np.arange(x0, x1, dtype=np.float32) - gx) / r) ** 2)
            by = np.exp(-((np.arange(y0, y1, dtype=np.float32) - gy) / r) ** 2)
            sheen = cv2.multiply(np.outer(by, bx).astype(np.float32), gloss[y0:y1, x0:x1], scale=strength * 230.0)
            s8 = cv2.convertScaleAbs(sheen)
            out[y0:y1, x0:x1] = cv2.add(out[y0:y1, x0:x1], cv2.merge([s8, s8, s8]))
    return out


def apply_sensor(img: np.ndarray, look: Look, rng: np.random.Generator) -> np.ndarray:
    """Blur, noise and 8-bit quantisation: uint8 BGR out (float input is saturated first)."""
    if img.dtype != np.uint8:
        img = cv2.convertScaleAbs(np.asarray(img, np.float32))   # saturating cast; the input is >= 0
    if look.focus_blur > 0.25:
        img = cv2.GaussianBlur(img, (0, 0), look.focus_blur)
    length, angle = look.motion
    if length >= 1.5:
        k = int(np.ceil(length)) | 1
        kernel = np.zeros((k, k), np.float32)
        c = k // 2
        dx, dy = np.cos(angle) * length / 2, np.sin(angle) * length / 2
        cv2.line(kernel, (int(round(c - dx)), int(round(c - dy))), (int(round(c + dx)), int(round(c + dy))), 1.0, 1, cv2.LINE_AA)
        img = cv2.filter2D(img, -1, kernel / kernel.sum())
    if look.noise_sigma > 0:
        h, w = img.shape[:2]
        sigma = float(look.noise_sigma)
        # as a camera's JPEG shows it: fine grain in brightness, per pixel; colour noise
        # coarser (demosaicing and chroma subsampling smear it over a few pixels) and
        # blotchy.  Random bytes read through a normal's 256 quantiles make the grain
        # (a fifth of the cost of drawing normals; the noise is whole grey levels anyway).
        grain = cv2.LUT(_random_bytes(rng, (h, w)), _normal_levels(0.85 * sigma))
        hh, hw = max(2, h // 2), max(2, w // 2)
        colour = cv2.LUT(_random_bytes(rng, (hh, hw, 3)), _normal_levels(0.7 * sigma))
        blotch = (rng.standard_normal((max(2, h // 6), max(2, w // 6), 3)) * (0.4 * sigma)).astype(np.int16)
        noise = cv2.add(cv2.resize(colour, (w, h), interpolation=cv2.INTER_LINEAR),
                        cv2.resize(blotch, (w, h), interpolation=cv2.INTER_LINEAR))
        noise = cv2.add(noise, cv2.merge([grain, grain, grain]))
        img = cv2.add(img, noise, dtype=cv2.CV_8U)
    return img


def _random_bytes(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(rng.bytes(int(np.prod(shape))), np.uint8).reshape(shape)


def _normal_levels(sigma: float) -> np.ndarray:
    """256 equally likely levels of a normal distribution of `sigma`, rounded (int16 LUT)."""
    z = np.array([_NORMAL.inv_cdf((i + 0.5) / 256) for i in range(256)])
    return np.round(z * sigma).astype(np.int16)


_NORMAL = NormalDist()


def jpeg_round_trip(img: np.ndarray, quality: int) -> tuple[np.ndarray, bytes]:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    data = buf.tobytes()
    return cv2.imdecode(buf, cv2.IMREAD_COLOR), data
