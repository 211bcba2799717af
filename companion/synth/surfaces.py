"""Table surfaces: procedural wood, cloth weave, felt, laminate, patterned cloth, or photos.

A surface is made as a top-view texture of the table at a given resolution
(pixels per millimetre) over a given table rectangle, so that wood grain and
thread sizes stay physically plausible at any camera distance.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

SURFACES = ("wood", "weave", "felt", "laminate", "pattern")
# resolution at which each surface is made, as a fraction of the final texture's
DETAIL = {"wood": 0.5, "weave": 1.0, "felt": 0.7, "laminate": 0.5, "pattern": 0.6}
PHOTO_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp")


def list_textures(textures_dir: str | Path | None) -> list[Path]:
    if not textures_dir:
        return []
    folder = Path(textures_dir)
    if not folder.is_dir():
        raise ValueError(f"textures folder {folder} does not exist")
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in PHOTO_EXTENSIONS)


def make_surface(kind: str, rng: np.random.Generator, width: int, height: int,
                 px_per_mm: float, photo: Path | None = None) -> np.ndarray:
    """A BGR uint8 top view of the table, `width` x `height` pixels."""
    if photo is not None:
        return _photo(photo, rng, width, height, px_per_mm)
    make = {"wood": _wood, "weave": _weave, "felt": _felt, "laminate": _laminate, "pattern": _pattern}[kind]
    # Smooth surfaces are made at a fraction of the resolution and enlarged: the
    # camera cannot tell, and it keeps a 1280x720 table at a few milliseconds.
    f = DETAIL[kind]
    sw, sh = max(16, int(width * f)), max(16, int(height * f))
    img = np.clip(make(rng, sw, sh, px_per_mm * f), 0, 255).astype(np.uint8)
    if (sw, sh) != (width, height):
        img = cv2.resize(img, (width, height), interpolation=cv2.INTER_LINEAR)
    return img


def _smooth(rng, h, w, cell_px, stretch=(1.0, 1.0)) -> np.ndarray:
    """Smooth noise ~N(0, 0.5) with features of cell_px (x, y stretch multiply it)."""
    gh = max(2, int(h / (cell_px * stretch[1])) + 2)
    gw = max(2, int(w / (cell_px * stretch[0])) + 2)
    if gh * gw > 40000:     # fine fibres: OpenCV's generator (seeded from ours) is far faster
        small = np.empty((gh, gw), np.float32)
        cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))
        cv2.randn(small, 0.0, 1.0)
    else:
        small = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC) * 0.5


def _jitter(rng, bgr, amount=18):
    """A nearby shade: mostly brighter or darker, a little warmer or cooler."""
    warm = rng.normal(0, amount / 3) * np.array([-1.0, 0.1, 0.7])
    return np.clip(np.array(bgr, np.float32) * np.exp(rng.normal(0, amount / 150)) + warm, 0, 255)


def _wood(rng, w, h, ppm):
    base = _jitter(rng, rng.choice([(60, 105, 160), (40, 70, 110), (110, 160, 205), (75, 120, 170), (70, 95, 120)]))
    base = np.minimum(base, (base[2] * 0.8, base[2] * 0.95, 255))     # wood stays warm
    plank = rng.uniform(90, 200) * ppm          # plank width in px
    y = np.arange(h, dtype=np.float32)[:, None]   # rows: planks and seams run along x
    warp = _smooth(rng, h, w, 60 * ppm, (8.0, 1.0)) * 10 * ppm
    rings = np.sin((y + warp) / max(1.0, rng.uniform(1.5, 4.0) * ppm))
    rings = rings * rings * rings      # sharp rings (float32 ** is a slow pow)
    streak = _smooth(rng, h, w, 2.5 * ppm, (40.0, 1.0))
    tone = 1.0 + 0.07 * rings + 0.12 * streak + 0.08 * _smooth(rng, h, w, 60 * ppm, (4.0, 1.0))
    seams = (np.abs(((y + plank * rng.uniform()) % plank)) < max(1.0, 0.8 * ppm))
    # planks differ in tone; a seam is a dark line
    pid = np.floor((y + plank * 0.3) / plank).astype(np.int64)
    plank_tone = 1.0 + 0.08 * np.sin(pid * 12.9898 + rng.uniform(0, 6))
    row = (plank_tone * np.where(seams, 0.55, 1.0)).astype(np.float32)
    img = cv2.merge([(tone * (row * float(c))).astype(np.float32) for c in base])
    angle = rng.uniform(0, 180)
    return _rotate(img, angle)


def _weave(rng, w, h, ppm):
    base = _jitter(rng, rng.choice([(200, 210, 215), (150, 120, 90), (120, 150, 180), (90, 90, 150), (190, 200, 205)]), 25)
    pitch = rng.uniform(0.8, 1.6) * ppm          # thread pitch in px
    # threads over and under: sign(a) |a|^0.5 of a = sin(x) sin(y) is a product of rows and columns
    sx, sy = np.sin(np.pi * np.arange(w) / pitch), np.sin(np.pi * np.arange(h) / pitch)
    threads = np.outer(np.sign(sy) * np.abs(sy) ** 0.5, np.sign(sx) * np.abs(sx) ** 0.5).astype(np.float32)
    tone = 1.0 + 0.1 * threads + 0.06 * _smooth(rng, h, w, 8 * ppm) + 0.05 * _smooth(rng, h, w, 80 * ppm)
    return _rotate(_tinted(tone, base), rng.uniform(0, 180))


def _felt(rng, w, h, ppm):
    base = _jitter(rng, rng.choice([(60, 110, 30), (40, 80, 20), (110, 50, 30), (40, 40, 120), (50, 50, 50)]), 12)
    tone = 1.0 + 0.05 * _smooth(rng, h, w, 0.6 * ppm) + 0.05 * _smooth(rng, h, w, 20 * ppm) + 0.04 * _smooth(rng, h, w, 150 * ppm)
    return _tinted(tone, base)


def _laminate(rng, w, h, ppm):
    """Plain or stone-look laminate: a flat colour, fine speckle, faint cloudy marbling."""
    base = _jitter(rng, rng.choice([(225, 228, 230), (200, 205, 210), (170, 175, 178), (215, 225, 235), (90, 92, 95)]), 10)
    speck = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), max(0.5, 0.25 * ppm))
    tone = 1.0 + 0.04 * speck + 0.035 * _smooth(rng, h, w, 25 * ppm) + 0.03 * _smooth(rng, h, w, 150 * ppm)
    return _tinted(tone, base)


def _pattern(rng, w, h, ppm):
    """Gingham, stripes or polka dots on cloth."""
    y, x = np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]
    a = _jitter(rng, rng.choice([(235, 240, 245), (210, 230, 240)]), 8)
    b = _jitter(rng, rng.choice([(40, 40, 190), (160, 90, 30), (50, 130, 60), (30, 160, 220)]), 20)
    period = rng.uniform(12, 35) * ppm
    which = rng.integers(3)
    if which == 0:     # gingham: the crossing of two stripe sets
        sx = ((x / period) % 1.0) < 0.5
        sy = ((y / period) % 1.0) < 0.5
        mix = 0.5 * sx + 0.5 * sy
    elif which == 1:   # stripes
        mix = (((x + 0.3 * y) / period) % 1.0 < 0.35).astype(np.float32)
    else:              # dots
        gx = (x / period) % 1.0 - 0.5
        gy = (y / period) % 1.0 - 0.5
        mix = (gx * gx + gy * gy < 0.06).astype(np.float32)
    mix = cv2.GaussianBlur(mix.astype(np.float32), (0, 0), max(0.5, 0.3 * ppm))
    weave = 1.0 + 0.05 * np.sin(np.pi * y / (1.0 * ppm)) * np.sin(np.pi * x / (1.0 * ppm))
    tone = (weave * (1.0 + 0.05 * _smooth(rng, h, w, 60 * ppm))).astype(np.float32)
    img = cv2.merge([tone * (float(ca) + (float(cb) - float(ca)) * mix) for ca, cb in zip(a, b)])
    return _rotate(img, rng.uniform(0, 90))


def _tinted(tone: np.ndarray, bgr) -> np.ndarray:
    """A colour times a per-pixel tone (float32 h x w x 3), without numpy's slow broadcast."""
    return cv2.merge([tone.astype(np.float32) * float(c) for c in bgr])


def _rotate(img, angle_deg):
    """Turned on the table; 8-bit first (a quarter of the work of turning floats)."""
    h, w = img.shape[:2]
    M = cv2.getRotationMatrix2D((w / 2, h / 2), float(angle_deg), 1.0)
    return cv2.warpAffine(np.clip(img, 0, 255).astype(np.uint8), M, (w, h), borderMode=cv2.BORDER_REFLECT)


def _photo(path: Path, rng, w, h, ppm):
    tex = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if tex is None:
        raise ValueError(f"cannot read texture image {path}")
    # a texture photo shows roughly 40-90 cm of table across
    span_mm = rng.uniform(400, 900)
    s = span_mm * ppm / max(tex.shape[:2])
    tex = cv2.resize(tex, None, fx=s, fy=s, interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    if rng.uniform() < 0.5:
        tex = cv2.flip(tex, int(rng.integers(-1, 2)))
    reps_y, reps_x = -(-h // tex.shape[0]), -(-w // tex.shape[1])
    # mirror-tile so the repeats have no seams
    row = np.concatenate([tex if i % 2 == 0 else tex[:, ::-1] for i in range(reps_x)], 1)
    tiled = np.concatenate([row if j % 2 == 0 else row[::-1] for j in range(reps_y)], 0)
    oy = int(rng.integers(0, tiled.shape[0] - h + 1))
    ox = int(rng.integers(0, tiled.shape[1] - w + 1))
    return np.ascontiguousarray(tiled[oy:oy + h, ox:ox + w])
