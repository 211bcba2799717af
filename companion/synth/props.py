"""Things on the table that are not Hisss cards: coins, a phone, a mug, other games' cards, hands.

Each prop is a top-view sprite (BGR uint8 + float alpha) drawn at a given
resolution; the scene places it on the table like a card.  Only the other
games' cards are card-like rectangles, so only they appear in truth (as
`unknown`); coins, phones, mugs and hands are not in truth at all.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .cards import card_alpha

PROPS = ("coin", "phone", "mug", "foreign_card")
# Sizes in mm (width, height) of each prop's sprite.
FOREIGN_CARDS = {"playing": (63.0, 88.0), "uno": (56.0, 87.0), "set": (57.0, 89.0), "tichu": (59.0, 92.0)}


@dataclass
class Sprite:
    bgr: np.ndarray      # uint8 h x w x 3: the colours under flat, even light
    alpha: np.ndarray    # float32 h x w, 0-1
    size_mm: tuple[float, float]
    height_mm: float = 0.3   # how far it stands off the table (drives its shadow)
    relief: np.ndarray | None = None   # float32 h x w: surface height in sprite pixels (None = flat)

    def bgra(self, light: tuple[float, float] | None = None) -> np.ndarray:
        """The sprite as one BGRA uint8 picture, its relief lit from `light` (the direction,
        in sprite pixels x right and y down, that the light comes from; None = from above).

        Made once per light direction (sixteenths of a turn are told apart): a video
        warps the same hand every frame.
        """
        key = None
        if self.relief is not None and light is not None and np.hypot(*light) > 1e-6:
            key = int(round(np.arctan2(light[1], light[0]) / (np.pi / 8))) % 16
        cache = self.__dict__.setdefault("_bgra", {})
        if key not in cache:
            bgr = self.bgr
            if key is not None:
                a = key * np.pi / 8
                shade = relief_shade(self.relief, (np.cos(a), np.sin(a)))
                bgr = cv2.convertScaleAbs(cv2.multiply(bgr.astype(np.float32), cv2.merge([shade] * 3)))
            cache[key] = np.dstack([bgr, (self.alpha * 255).astype(np.uint8)])
        return cache[key]


def relief_shade(height: np.ndarray, light: tuple[float, float], elevation_deg: float = 40.0) -> np.ndarray:
    """Lambert shading of a height field (sprite pixels) under a light from `light` at
    `elevation_deg` above the table, with some light from the room; flat ground is 1."""
    gx = cv2.Sobel(height, cv2.CV_32F, 1, 0, ksize=3, scale=1 / 8)
    gy = cv2.Sobel(height, cv2.CV_32F, 0, 1, ksize=3, scale=1 / 8)
    e = np.radians(elevation_deg)
    lx, ly = np.asarray(light, np.float64) / max(1e-9, float(np.hypot(*light))) * np.cos(e)
    lz = np.sin(e)
    facing = (lz - lx * gx - ly * gy) / np.sqrt(1.0 + gx * gx + gy * gy)   # n . l, n = (-gx, -gy, 1) / |.|
    return (0.42 + 0.58 * np.clip(facing / lz, 0.0, 1.45)).astype(np.float32)


def _dome(mask: np.ndarray, radius_px: float) -> np.ndarray:
    """A rounded height field over a 0/1 mask: a quarter circle of `radius_px` from its edge."""
    d = cv2.distanceTransform((mask > 0.5).astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    t = np.clip(d / max(radius_px, 1e-3), 0.0, 1.0)
    return (radius_px * np.sqrt(1.0 - (1.0 - t) ** 2)).astype(np.float32)


def _capsule(canvas: np.ndarray, p0, p1, r0: float, r1: float, value=1.0) -> None:
    """A tapered limb with round ends: the hull of a circle of r0 at p0 and of r1 at p1."""
    pts = []
    for (x, y), r in ((p0, r0), (p1, r1)):
        a = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        pts.append(np.stack([x + r * np.cos(a), y + r * np.sin(a)], 1))
    hull = cv2.convexHull(np.round(np.concatenate(pts) * 16).astype(np.int32))
    cv2.fillConvexPoly(canvas, hull, value, cv2.LINE_AA, shift=4)


def coin(rng: np.random.Generator, ppm: float) -> Sprite:
    d = rng.uniform(17, 28)
    n = max(8, int(round(d * ppm)))
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) + 0.5
    r = np.hypot(xx - n / 2, yy - n / 2) / (n / 2)
    gold = rng.uniform() < 0.5
    base = np.array((60, 160, 200) if gold else (175, 175, 170), np.float32)
    shade = 0.85 + 0.1 * np.cos(r * 9)
    img = base * shade[..., None]
    alpha = np.clip((1 - r) * n / 2 + 0.5, 0, 1)
    # a raised rim and a low embossed face; metal shows its relief strongly
    relief = (np.clip((r - 0.82) * 12, 0, 1) * (r < 0.97) * 1.2 + 0.4 * np.cos(r * 7) * (r < 0.82)) * max(1.0, 0.6 * ppm)
    relief = cv2.GaussianBlur(relief.astype(np.float32), (0, 0), max(0.5, 0.3 * ppm))
    return Sprite(np.clip(img, 0, 255).astype(np.uint8), alpha.astype(np.float32), (d, d), 2.0, relief=relief)


def phone(rng: np.random.Generator, ppm: float) -> Sprite:
    """A phone lying face up (screen dark or lit) or face down (its camera showing)."""
    wmm, hmm = rng.uniform(68, 78), rng.uniform(140, 162)
    w, h = max(8, int(wmm * ppm)), max(12, int(hmm * ppm))
    img = np.empty((h, w, 3), np.float32)
    body = np.array(rng.choice([(25, 25, 28), (22, 22, 24), (150, 150, 155), (60, 40, 30), (190, 200, 215), (70, 90, 60)]), np.float32)
    img[:] = body
    alpha = card_alpha(w, h, 0.12).copy()
    relief = _dome(alpha, max(1.0, 2.5 * ppm))          # the rounded frame catches the light
    if rng.uniform() < 0.65:        # face up: the glass
        m = max(1, int(0.04 * w))
        screen = np.full((h - 2 * m, w - 2 * m, 3), (18, 16, 16), np.float32)
        yy, xx = np.mgrid[0:h - 2 * m, 0:w - 2 * m].astype(np.float32)
        screen += (40 * np.clip(1 - np.abs((xx + yy * 0.6) / max(w, 1) - rng.uniform(0.2, 1.0)) * 5, 0, 1))[..., None]
        if rng.uniform() < 0.4:   # screen lit
            screen = screen * 0.3 + np.array(rng.choice([(220, 160, 90), (240, 240, 240), (90, 200, 120)]), np.float32) * 0.7
        img[m:h - m, m:w - m] = screen
        cv2.circle(img, (w // 2, int(m * 1.8)), max(1, int(1.5 * ppm)), (8, 8, 8), -1, cv2.LINE_AA)   # the front camera
    else:                           # face down: a raised camera block with its lenses
        side = int(rng.integers(2))
        bx0, by0 = int((0.08 if side == 0 else 0.55) * w), int(0.05 * h)
        bw, bh = int(0.37 * w), int(0.22 * h)
        block = np.zeros((h, w), np.float32)
        cv2.rectangle(block, (bx0, by0), (bx0 + bw, by0 + bh), 1.0, -1, cv2.LINE_AA)
        block = cv2.GaussianBlur(block, (0, 0), max(0.7, 1.5 * ppm))
        relief += block * max(1.0, 1.5 * ppm)
        img = img * (1 - 0.15 * block[..., None])
        for k in range(int(rng.integers(1, 4))):
            cxy = (bx0 + int(bw * (0.3 if k % 2 == 0 else 0.72)), by0 + int(bh * (0.3 if k < 2 else 0.72)))
            rad = max(1, int(min(bw, bh) * 0.2))
            cv2.circle(img, cxy, rad, (70, 70, 72), -1, cv2.LINE_AA)
            cv2.circle(img, cxy, max(1, int(rad * 0.75)), (12, 12, 14), -1, cv2.LINE_AA)
            cv2.circle(img, (cxy[0] - rad // 3, cxy[1] - rad // 3), max(1, rad // 5), (150, 150, 160), -1, cv2.LINE_AA)
    return Sprite(np.clip(img, 0, 255).astype(np.uint8), alpha, (wmm, hmm), 8.0, relief=relief)


def mug(rng: np.random.Generator, ppm: float) -> Sprite:
    """A mug seen from above: its rim, the inside wall going down to the drink, the handle."""
    d = rng.uniform(78, 92)
    handle = 0.3 * d
    n = max(12, int((d + handle) * ppm))
    colour = np.array(rng.choice([(240, 240, 240), (40, 40, 160), (150, 90, 40), (40, 140, 200), (60, 60, 60)]), np.float32)
    drink = np.array(rng.choice([(20, 40, 70), (40, 90, 150), (210, 225, 235), (30, 60, 110)]), np.float32)
    c = np.array([d / 2 * ppm, n / 2])
    R = d / 2 * ppm
    rim, wall = max(1.0, 4.5 * ppm), max(1.0, 7.0 * ppm)
    r = np.hypot(np.arange(n, dtype=np.float32)[None, :] + 0.5 - c[0], np.arange(n, dtype=np.float32)[:, None] + 0.5 - c[1])
    alpha = np.clip(R - r + 0.5, 0, 1)
    # the handle, seen from above: a loop standing out from the side
    loop = np.zeros((n, n), np.float32)
    cv2.ellipse(loop, (int(d * ppm * 4), int(c[1] * 4)), (int(handle * 0.78 * ppm * 4), int(14 * ppm * 4)), 0, 0, 360,
                1.0, max(1, int(6.5 * ppm)), cv2.LINE_AA, shift=2)
    loop *= (r > R - 1).astype(np.float32)
    alpha = np.maximum(alpha, loop)
    # height: the rim rounds over, the inside wall falls to the drink (its two sides lit unlike)
    top = 30.0 * ppm
    t = (r - (R - rim / 2)) / (rim / 2)
    relief = np.where(np.abs(t) <= 1, top + rim / 2 * np.sqrt(np.clip(1 - t * t, 0, 1)), 0.0).astype(np.float32)
    inner = R - rim
    relief = np.where(r < inner, top - 15.0 * ppm * np.clip((inner - r) / wall, 0, 1), relief)
    right = int(R)          # the loop lies right of the mug's centre: its rounding is worked out there only
    relief[:, right:] = np.maximum(relief[:, right:], _dome(loop[:, right:], 3 * ppm) + top * 0.4 * (loop[:, right:] > 0.5))
    relief = cv2.GaussianBlur(relief.astype(np.float32), (0, 0), max(0.6, 0.6 * ppm))
    shade = 1 - 0.12 * np.clip(inner - r + 0.5, 0, 1)          # the inside lies a little in shade
    liquid = np.clip(inner - wall - r + 0.5, 0, 1)
    meniscus = np.exp(-((r - (inner - wall)) / max(1.0, 1.2 * ppm)) ** 2)
    planes = [cv2.convertScaleAbs(float(c) * shade * (1 - liquid) + float(k) * (1 + 0.25 * meniscus) * liquid)
              for c, k in zip(colour, drink)]       # per plane: numpy's 3-channel broadcasts are slow
    return Sprite(cv2.merge(planes), alpha.astype(np.float32), ((d + handle), (d + handle)), 95.0, relief=relief)


def foreign_card(rng: np.random.Generator, ppm: float) -> tuple[str, Sprite]:
    """A card of another game (face or back), which the camera must call `unknown`."""
    kind = str(rng.choice(list(FOREIGN_CARDS)))
    wmm, hmm = FOREIGN_CARDS[kind]
    w, h = max(8, int(wmm * ppm)), max(10, int(hmm * ppm))
    img = np.full((h, w, 3), 245, np.uint8)   # putText draws only on 8-bit pictures
    s = w / 60.0
    if kind == "playing":
        red = rng.uniform() < 0.5
        ink = (30, 30, 200) if red else (20, 20, 20)
        if rng.uniform() < 0.3:     # its back: a red or blue diamond pattern
            back = (40, 40, 170) if red else (150, 60, 30)
            img[:] = back
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            lat = (np.sin((xx + yy) / (2.5 * s)) * np.sin((xx - yy) / (2.5 * s)) > 0)
            img[lat] = (np.array(back) * 0.7 + 70).astype(np.uint8)
        else:
            for _ in range(int(rng.integers(1, 9))):
                x, y = rng.uniform(0.25, 0.75) * w, rng.uniform(0.2, 0.8) * h
                cv2.circle(img, (int(x), int(y)), max(1, int(4 * s)), ink, -1, cv2.LINE_AA)
            cv2.putText(img, str(rng.choice(list("A2345678910JQK"))), (int(3 * s), int(12 * s)), cv2.FONT_HERSHEY_SIMPLEX, 0.35 * s, ink, max(1, int(s)), cv2.LINE_AA)
    elif kind == "uno":
        colour = tuple(float(v) for v in rng.choice([(40, 40, 210), (40, 180, 240), (60, 160, 40), (170, 100, 20), (25, 25, 25)]))
        img[:] = 245
        m = max(1, int(3 * s))
        img[m:h - m, m:w - m] = colour
        cv2.ellipse(img, (w // 2, h // 2), (int(w * 0.36), int(h * 0.42)), 40, 0, 360, (245, 245, 245), -1, cv2.LINE_AA)
        cv2.putText(img, str(rng.integers(0, 10)), (int(w * 0.33), int(h * 0.62)), cv2.FONT_HERSHEY_DUPLEX, 0.9 * s, colour, max(1, int(2 * s)), cv2.LINE_AA)
    elif kind == "set":
        colour = tuple(float(v) for v in rng.choice([(40, 30, 210), (40, 150, 30), (140, 40, 120)]))
        n = int(rng.integers(1, 4))
        for i in range(n):
            cy = int(h * (0.5 + (i - (n - 1) / 2) * 0.25))
            cv2.ellipse(img, (w // 2, cy), (int(w * 0.3), int(h * 0.08)), 0, 0, 360, colour, -1 if rng.uniform() < 0.5 else max(1, int(s)), cv2.LINE_AA)
    else:  # tichu: cream card with a big coloured suit symbol and border
        img[:] = (200, 225, 235)
        colour = tuple(float(v) for v in rng.choice([(40, 40, 30), (150, 60, 20), (40, 120, 30), (20, 20, 170)]))
        cv2.rectangle(img, (int(3 * s), int(3 * s)), (w - int(3 * s), h - int(3 * s)), colour, max(1, int(s)))
        cv2.circle(img, (w // 2, h // 2), int(w * 0.22), colour, -1, cv2.LINE_AA)
    return kind, Sprite(img.astype(np.uint8), card_alpha(w, h).copy(), (wmm, hmm), 0.3)


def hand(rng: np.random.Generator, ppm: float, length_mm: float = 420.0, skin=None) -> Sprite:
    """The back of a hand and its forearm seen from above, pointing along +y (fingertips at
    the bottom of the sprite), with its relief for the scene's light.

    The sprite is `length_mm` long so the arm reaches out of the picture.  It takes
    one number from `rng`: the hand's look never shifts its caller's other draws.
    """
    art = np.random.default_rng(int(rng.integers(2**63)))
    wmm = 110.0
    w, h = max(8, int(wmm * ppm)), max(20, int(length_mm * ppm))
    if skin is None:
        skin = tuple(float(v) for v in art.choice([(150, 180, 225), (120, 160, 210), (80, 120, 170), (50, 80, 120), (165, 195, 235)]))
    skin = np.array(skin, np.float32)
    mm = lambda v: float(v) * ppm  # noqa: E731
    cx = w / 2
    size = art.uniform(0.88, 1.02)               # hands differ in size
    curl = art.uniform(0.8, 0.97)                # bent fingers look shorter from above
    thumb_side = float(art.choice([-1.0, 1.0]))  # a left or a right hand
    spread = art.uniform(0.03, 0.13)             # radians between neighbouring fingers
    tip_y = h - mm(4)
    knuckle_y = tip_y - mm(80 * size * curl)
    wrist_y = knuckle_y - mm(86 * size)

    # the forearm: a tapered, slightly flattened cylinder from beyond the picture to the wrist
    x = np.arange(w, dtype=np.float32)[None, :]
    y = np.arange(h, dtype=np.float32)[:, None]
    arm_end = wrist_y + mm(20)
    s_ = np.clip((y + mm(40)) / max(1.0, arm_end + mm(40)), 0, 1)
    r = mm(37 * size) + (mm(26 * size) - mm(37 * size)) * s_
    dx = x - (cx + mm(art.uniform(-4, 4)) * (1 - s_))
    inside = (y <= arm_end).astype(np.float32)
    alpha = np.clip(r - np.abs(dx) + 0.5, 0, 1) * inside
    relief = 0.75 * np.sqrt(np.maximum(r * r - dx * dx, 0)) * inside
    body = [np.full((h, w), c, np.float32) for c in skin]     # B, G, R planes (no slow 3-channel broadcasts)
    if art.uniform() < 0.6:            # a sleeve, folded along the arm
        cuff = wrist_y - mm(art.uniform(15, 90))
        colour = np.array(art.choice([(110, 70, 45), (45, 42, 40), (170, 172, 178), (60, 60, 130), (70, 100, 70), (205, 205, 210), (130, 105, 90)]), np.float32)
        rs = r + mm(6)
        hem = cuff + mm(3) * np.sin(x / mm(art.uniform(25, 45)) + art.uniform(0, 6))     # a cuff is never cut straight
        cloth = np.clip(rs - np.abs(dx) + 0.5, 0, 1) * np.clip(hem - y, 0, 1)
        # folds: sin(a(y) + b(x)) as products of rows and columns
        ay = y / mm(art.uniform(7, 12)) + art.uniform(0, 6)
        bx = 0.9 * np.sin(x / mm(18) + art.uniform(0, 6))
        folds = np.sin(ay) * np.cos(bx) + np.cos(ay) * np.sin(bx)
        folds = folds * (0.6 + 0.4 * np.sin(y / mm(art.uniform(30, 50))))           # bunched here, smooth there
        relief = np.where(cloth > 0, 0.85 * np.sqrt(np.maximum(rs * rs - dx * dx, 0)) + mm(4) * folds, relief)
        fabric = 1.0 + 0.05 * cv2.resize(art.standard_normal((max(2, h // 3), max(2, w // 3))).astype(np.float32), (w, h))
        for k in range(3):
            body[k] += (colour[k] * fabric - body[k]) * cloth
        alpha = np.maximum(alpha, cloth)

    # the hand, worked on in its own rows
    top = max(0, int(wrist_y - mm(10)))
    hh = h - top
    fingers = []       # (base, tip, base radius, tip radius)
    for i, (fx, length, width, drop) in enumerate(((27, 72, 18.5, 4), (9, 80, 19, 0), (-9, 75, 17.5, 3), (-26, 60, 15.5, 11))):
        a = spread * (1.5 - i) * thumb_side
        base = np.array([cx + thumb_side * mm(fx * size), knuckle_y - mm(drop * size) - top])
        ln = mm(length * size * curl * art.uniform(0.95, 1.05))
        fingers.append((base, base + np.array([np.sin(a), np.cos(a)]) * ln, mm(width * size / 2), mm(width * size * 0.4)))
    wrist = wrist_y - top
    # the back of the hand: the hull of the wrist and the knuckles, rather flat
    palm = np.zeros((hh, w), np.float32)
    circles = [(np.array([cx + k * mm(16 * size), wrist + mm(12)]), mm(11 * size)) for k in (-1, 1)]
    circles += [(b, r0 * 1.05) for b, _, r0, _ in fingers]
    t = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    pts = np.concatenate([np.stack([c[0] + rad * np.cos(t), c[1] + rad * np.sin(t)], 1) for c, rad in circles])
    cv2.fillConvexPoly(palm, cv2.convexHull(np.round(pts * 16).astype(np.int32)), 1.0, cv2.LINE_AA, shift=4)
    height = _dome(palm, mm(18)) * 0.75 + mm(4)
    hand_alpha = palm
    # the thumb lies along the hand's side, pointing forwards and in; fingers are round limbs
    t0 = np.array([cx + thumb_side * mm(25 * size), wrist + mm(24)])
    t1 = t0 + np.array([thumb_side * mm(art.uniform(6, 16)), mm(art.uniform(48, 58) * size)])
    _limb(hand_alpha, height, t0, t1, mm(12.5 * size), mm(9.5 * size), mm(2))
    for base, tip, r0, _ in fingers:
        _limb(hand_alpha, height, base, tip, r0, r0 * 0.8, mm(3))
    flush = np.zeros((hh, w), np.float32)     # knuckles and fingertips are a little redder
    for base, tip, r0, _ in fingers:
        bump = _spot(height.shape, base, r0 * 0.7)
        height += mm(2.5) * bump
        flush += bump + _spot(height.shape, tip, r0 * 0.8)
    f = np.clip(flush, 0, 1) * 0.5
    redder = skin * np.array([0.9, 0.86, 1.04], np.float32)
    colour = cv2.merge([float(c) + float(rc - c) * f for c, rc in zip(skin, redder)])
    # nails near the tips (a little paler and pinker), creases at the finger joints
    nail = tuple(float(v) for v in np.array([200, 205, 238], np.float32) * 0.22 + skin * 0.78)
    crease = tuple(float(v) for v in skin * 0.85)
    for base, tip, r0, _ in fingers:
        d = (tip - base) / max(1e-6, np.linalg.norm(tip - base))
        n = np.array([-d[1], d[0]])
        centre = tip - d * (r0 * 0.8 + mm(5))
        ang = float(np.degrees(np.arctan2(d[1], d[0])))
        cv2.ellipse(colour, (int(centre[0] * 4), int(centre[1] * 4)), (int(mm(5.5) * 4), int(r0 * 0.6 * 4)),
                    ang, 0, 360, nail, -1, cv2.LINE_AA, shift=2)
        for k in (0.42, 0.7):
            p = base + (tip - base) * k
            q0, q1 = p - n * r0 * 0.5, p + n * r0 * 0.5
            cv2.line(colour, (int(q0[0] * 4), int(q0[1] * 4)), (int(q1[0] * 4), int(q1[1] * 4)),
                     crease, max(1, int(mm(0.7))), cv2.LINE_AA, shift=2)
    # the hand over the arm's end; its relief is smoothed so limbs round off without creases
    # (the smoothing fades in above the hand, so the arm shows no seam)
    for k, plane in enumerate(cv2.split(colour)):
        body[k][top:] += (plane - body[k][top:]) * hand_alpha
    relief[top:] = np.maximum(relief[top:], height * (hand_alpha > 0.02))
    sigma = max(0.8, mm(2.5))
    start = max(0, top - int(6 * sigma))
    smooth = cv2.GaussianBlur(relief[start:], (0, 0), sigma)
    ramp = np.clip((np.arange(start, h, dtype=np.float32)[:, None] - start) / max(1.0, top - start), 0, 1)
    relief[start:] += (smooth - relief[start:]) * ramp
    alpha[top:] = np.maximum(alpha[top:], hand_alpha)
    # skin is mottled, a little; the gaps between fingers lie in their own shade
    mottle = cv2.resize(art.standard_normal((max(2, h // 12), max(2, w // 12))).astype(np.float32), (w, h))
    occlusion = cv2.GaussianBlur(alpha, (0, 0), max(1.0, mm(2.5)))
    k = (1 + 0.03 * mottle) * (0.72 + 0.28 * np.clip(occlusion * 1.6 - 0.3, 0, 1))
    bgr = cv2.merge([cv2.convertScaleAbs(plane * k) for plane in body])
    return Sprite(bgr, alpha.astype(np.float32), (wmm, length_mm), 80.0, relief=relief.astype(np.float32))


def _limb(alpha: np.ndarray, height: np.ndarray, p0, p1, r0: float, r1: float, lift: float) -> None:
    """Add a tapered round limb from p0 (radius r0) to p1 (r1): its coverage and a round
    cross-section `lift` above the ground, worked out only within its own box."""
    p0, p1 = np.asarray(p0, np.float32), np.asarray(p1, np.float32)
    r = max(r0, r1) + 2
    x0, x1 = max(0, int(min(p0[0], p1[0]) - r)), min(alpha.shape[1], int(max(p0[0], p1[0]) + r) + 1)
    y0, y1 = max(0, int(min(p0[1], p1[1]) - r)), min(alpha.shape[0], int(max(p0[1], p1[1]) + r) + 1)
    if x1 <= x0 or y1 <= y0:
        return
    X = np.arange(x0, x1, dtype=np.float32)[None, :] + 0.5 - p0[0]
    Y = np.arange(y0, y1, dtype=np.float32)[:, None] + 0.5 - p0[1]
    d = p1 - p0
    t = np.clip((X * d[0] + Y * d[1]) / max(1e-6, float(d @ d)), 0, 1)
    ex, ey = X - t * d[0], Y - t * d[1]
    dist2 = ex * ex + ey * ey
    rad = r0 + (r1 - r0) * t
    cover = np.clip(rad - np.sqrt(dist2) + 0.5, 0, 1)
    box = (slice(y0, y1), slice(x0, x1))
    alpha[box] = np.maximum(alpha[box], cover)
    height[box] = np.maximum(height[box], np.where(cover > 0, np.sqrt(np.maximum(rad * rad - dist2, 0)) + lift, 0))


def _spot(shape: tuple[int, int], centre, sigma: float) -> np.ndarray:
    """A Gaussian spot (peak 1) of `sigma` pixels, worked out only within 3 sigma of it."""
    out = np.zeros(shape, np.float32)
    x0, x1 = max(0, int(centre[0] - 3 * sigma)), min(shape[1], int(centre[0] + 3 * sigma) + 1)
    y0, y1 = max(0, int(centre[1] - 3 * sigma)), min(shape[0], int(centre[1] + 3 * sigma) + 1)
    if x1 > x0 and y1 > y0:
        gx = np.exp(-((np.arange(x0, x1, dtype=np.float32) - centre[0]) ** 2) / (2 * sigma * sigma))
        gy = np.exp(-((np.arange(y0, y1, dtype=np.float32) - centre[1]) ** 2) / (2 * sigma * sigma))
        out[y0:y1, x0:x1] = np.outer(gy, gx)
    return out
