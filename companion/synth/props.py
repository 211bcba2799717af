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
    bgr: np.ndarray      # uint8 h x w x 3
    alpha: np.ndarray    # float32 h x w, 0-1
    size_mm: tuple[float, float]
    height_mm: float = 0.3   # how far it stands off the table (drives its shadow)

    def bgra(self) -> np.ndarray:
        """The sprite as one BGRA uint8 picture (made once: a video warps it every frame)."""
        cached = getattr(self, "_bgra", None)
        if cached is None:
            cached = np.dstack([self.bgr, (self.alpha * 255).astype(np.uint8)])
            self._bgra = cached
        return cached


def coin(rng: np.random.Generator, ppm: float) -> Sprite:
    d = rng.uniform(17, 28)
    n = max(8, int(round(d * ppm)))
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) + 0.5
    r = np.hypot(xx - n / 2, yy - n / 2) / (n / 2)
    gold = rng.uniform() < 0.5
    base = np.array((60, 160, 200) if gold else (175, 175, 170), np.float32)
    shade = 0.75 + 0.35 * ((xx - yy) / n) + 0.1 * np.cos(r * 9)
    rim = (r > 0.86) * 0.2
    img = base * (shade - rim)[..., None]
    alpha = np.clip((1 - r) * n / 2 + 0.5, 0, 1)
    return Sprite(np.clip(img, 0, 255).astype(np.uint8), alpha.astype(np.float32), (d, d), 2.0)


def phone(rng: np.random.Generator, ppm: float) -> Sprite:
    wmm, hmm = rng.uniform(68, 78), rng.uniform(140, 162)
    w, h = max(8, int(wmm * ppm)), max(12, int(hmm * ppm))
    img = np.empty((h, w, 3), np.float32)
    img[:] = rng.choice([(25, 25, 28), (22, 22, 24), (150, 150, 155), (60, 40, 30)])
    m = max(1, int(0.04 * w))
    screen = np.full((h - 2 * m, w - 2 * m, 3), (18, 16, 16), np.float32)
    yy, xx = np.mgrid[0:h - 2 * m, 0:w - 2 * m].astype(np.float32)
    screen += (40 * np.clip(1 - np.abs((xx + yy * 0.6) / max(w, 1) - rng.uniform(0.2, 1.0)) * 5, 0, 1))[..., None]
    if rng.uniform() < 0.4:   # screen lit
        screen = screen * 0.3 + np.array(rng.choice([(220, 160, 90), (240, 240, 240), (90, 200, 120)]), np.float32) * 0.7
    img[m:h - m, m:w - m] = screen
    alpha = card_alpha(w, h, 0.12).copy()
    return Sprite(np.clip(img, 0, 255).astype(np.uint8), alpha, (wmm, hmm), 8.0)


def mug(rng: np.random.Generator, ppm: float) -> Sprite:
    d = rng.uniform(78, 92)
    handle = 0.3 * d
    n = max(12, int((d + handle) * ppm))
    img = np.zeros((n, n, 3), np.float32)
    alpha = np.zeros((n, n), np.float32)
    c = (int(d / 2 * ppm), n // 2)
    colour = tuple(float(v) for v in rng.choice([(240, 240, 240), (40, 40, 160), (150, 90, 40), (40, 140, 200)]))
    # the handle, seen from above: a thick bar standing out from the side
    hx = int((d / 2 + handle * 0.5) * ppm)
    hw, hh = int(handle * 0.55 * ppm), int(6 * ppm)
    cv2.rectangle(img, (int(d / 2 * ppm), c[1] - hh), (hx + hw // 2, c[1] + hh), tuple(v * 0.85 for v in colour), -1, cv2.LINE_AA)
    cv2.rectangle(alpha, (int(d / 2 * ppm), c[1] - hh), (hx + hw // 2, c[1] + hh), 1.0, -1, cv2.LINE_AA)
    cv2.circle(img, c, int(d / 2 * ppm), colour, -1, cv2.LINE_AA)
    cv2.circle(alpha, c, int(d / 2 * ppm), 1.0, -1, cv2.LINE_AA)
    inside = tuple(v * 0.8 for v in colour)
    cv2.circle(img, c, int((d / 2 - 5) * ppm), inside, -1, cv2.LINE_AA)
    drink = tuple(float(v) for v in rng.choice([(20, 40, 70), (40, 90, 150), (210, 225, 235)]))
    cv2.circle(img, c, int((d / 2 - 7) * ppm), drink, -1, cv2.LINE_AA)
    return Sprite(np.clip(img, 0, 255).astype(np.uint8), alpha, ((d + handle), (d + handle)), 95.0)


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
    """A hand and forearm pointing along +y (fingertips at the bottom of the sprite).

    The sprite is `length_mm` long so the arm reaches out of the picture.
    """
    wmm = 110.0
    w, h = max(8, int(wmm * ppm)), max(20, int(length_mm * ppm))
    if skin is None:
        skin = tuple(float(v) for v in rng.choice([(150, 180, 225), (120, 160, 210), (80, 120, 170), (50, 80, 120), (165, 195, 235)]))
    alpha = np.zeros((h, w), np.float32)
    cx = w / 2
    palm_y = h - 95 * ppm
    # forearm (maybe in a sleeve), palm, fingers as thick rounded lines
    sleeve = rng.uniform() < 0.6
    sleeve_col = tuple(float(v) for v in rng.choice([(120, 60, 30), (40, 40, 40), (180, 180, 190), (60, 60, 150)]))
    img = np.zeros((h, w, 3), np.float32)
    img[:] = skin
    arm_w = int(62 * ppm)
    cv2.line(alpha, (int(cx), 0), (int(cx), int(palm_y - 30 * ppm)), 1.0, arm_w, cv2.LINE_AA)
    if sleeve:
        cv2.line(img, (int(cx), 0), (int(cx), int(palm_y - 70 * ppm)), sleeve_col, arm_w + 4, cv2.LINE_AA)
    cv2.ellipse(alpha, (int(cx), int(palm_y)), (int(42 * ppm), int(50 * ppm)), 0, 0, 360, 1.0, -1, cv2.LINE_AA)
    spread = rng.uniform(0.05, 0.25)
    for i, (dx, ln) in enumerate(((-30, 62), (-11, 78), (8, 82), (26, 70))):
        a = spread * (i - 1.5)
        x0, y0 = cx + dx * ppm, palm_y + 20 * ppm
        x1, y1 = x0 + np.sin(a) * ln * ppm, y0 + np.cos(a) * ln * ppm
        cv2.line(alpha, (int(x0), int(y0)), (int(x1), int(min(h - 8 * ppm, y1))), 1.0, max(1, int(17 * ppm)), cv2.LINE_AA)
    # thumb off to one side
    side = rng.choice([-1, 1])
    cv2.line(alpha, (int(cx + side * 30 * ppm), int(palm_y - 20 * ppm)), (int(cx + side * 52 * ppm), int(palm_y + 30 * ppm)), 1.0, max(1, int(20 * ppm)), cv2.LINE_AA)
    xx = np.arange(w, dtype=np.float32)[None, :]      # the shade varies across the arm only
    shade = 0.8 + 0.25 * np.cos((xx - cx) / (w / 2) * 1.3)
    # fingers and palm are rounded: darker towards their outlines, a little mottled
    sigma = max(1.0, 5 * ppm)
    if sigma < 4 or min(h, w) < 32:
        rounded = cv2.GaussianBlur(alpha, (0, 0), sigma)
    else:       # a wide blur costs the same at a quarter of the size
        small = cv2.resize(alpha, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
        rounded = cv2.resize(cv2.GaussianBlur(small, (0, 0), sigma / 4), (w, h), interpolation=cv2.INTER_LINEAR)
    mottle = cv2.resize(rng.standard_normal((max(2, h // 12), max(2, w // 12))).astype(np.float32), (w, h))
    img *= (shade * (0.62 + 0.38 * rounded) * (1 + 0.03 * mottle))[..., None]
    return Sprite(np.clip(img, 0, 255).astype(np.uint8), alpha, (wmm, length_mm), 80.0)
