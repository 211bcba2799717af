"""Card faces and the common back, drawn in any style and print.

A face is drawn portrait: the short edges are the connecting edges, at the top
(y = 0) and the bottom (y = height).  A middle's first colour meets the top
edge and its second the bottom edge, the body fading between them; a head or
tail connects at the top and ends in a head (with eyes) or a point near the
bottom.  So a card's ends, in the order of its colours, are the midpoints of
the top edge and then the bottom edge (`face_ends`).

Everything is computed with whole-array numpy over the face's pixel grid (the
body is a curve x = centre(y) with a half-width profile(y)), which keeps a face
at a few hundred microseconds to a couple of milliseconds.
"""
from __future__ import annotations

import zlib
from functools import lru_cache

import cv2
import numpy as np

from companion.game.cards import Card, Kind

from .styles import PALETTE_HSV, Print, check_style, hsv_to_bgr, sample_print

RAINBOW = ("red", "orange", "yellow", "green", "blue", "purple")


def face_size(short_side_px: int, aspect: float) -> tuple[int, int]:
    """(width, height) of a portrait face; aspect is long/short, 1.0-1.6."""
    if not 1.0 <= aspect <= 1.6:
        raise ValueError(f"card aspect must be between 1.0 and 1.6, got {aspect}")
    w = max(8, int(round(short_side_px)))
    return w, max(w, int(round(w * aspect)))


def face_ends(card: Card | None, width: int, height: int) -> list[tuple[float, float]]:
    """The card's ends in face pixels, in the order of its colours (contract order)."""
    if card is None or not card.kind.is_face:
        return []
    top, bottom = (width / 2.0, 0.0), (width / 2.0, float(height))
    return [top, bottom] if card.kind is Kind.MIDDLE else [top]


@lru_cache(maxsize=64)
def card_alpha(width: int, height: int, corner: float = 0.07) -> np.ndarray:
    """Anti-aliased coverage (float32 0-1) of a rounded-corner card (or phone) of this size.

    `corner` is the corner radius as a fraction of the short side."""
    r = corner * min(width, height)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32) + 0.5
    dx = np.maximum(np.maximum(r - x, x - (width - r)), 0)
    dy = np.maximum(np.maximum(r - y, y - (height - r)), 0)
    inside = r - np.sqrt(dx * dx + dy * dy) + 0.5
    edge = np.minimum(np.minimum(x, width - x), np.minimum(y, height - y)) + 0.5
    return np.clip(np.minimum(inside, edge), 0, 1).astype(np.float32)


def render_card(card: Card | None, style: str, rng: np.random.Generator,
                short_side_px: int, aspect: float, print_: Print | None = None) -> np.ndarray:
    """A card face (or the back, for None / Kind.BACK) as a BGR uint8 portrait image.

    `rng` draws the print (paper, hue, saturation, line weight) unless `print_`
    is given: pass one `Print` to draw a whole deck from the same printing.
    """
    check_style(style)
    pr = print_ if print_ is not None else sample_print(style, rng)
    w, h = face_size(short_side_px, aspect)
    if card is None or card.kind is Kind.BACK:
        return _render_back(pr, w, h)
    if not card.kind.is_face:
        raise ValueError(f"render_card draws Hisss faces and the back, not {card.kind.value}")
    return _render_face(card, pr, w, h)


# --------------------------------------------------------------------------- faces

def _art_rng(pr: Print, card: Card) -> np.random.Generator:
    # The same card of the same print always has the same drawing.
    return np.random.default_rng([pr.seed, zlib.crc32(card.code.encode())])


def _render_face(card: Card, pr: Print, w: int, h: int) -> np.ndarray:
    style = pr.style
    art = _art_rng(pr, card)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    yy += 0.5
    xx += 0.5
    img = _paper(pr, w, h, art)

    # The body: centre line x = c(y) that leaves each connecting edge squarely.
    t = np.linspace(0.0, 1.0, h, dtype=np.float32) + 0.5 / h
    amp = art.uniform(0.08, 0.17) * w * art.choice([-1, 1])
    waves = art.choice([1.0, 1.5, 2.0])
    centre = w / 2.0 + amp * np.sin(np.pi * t) * np.sin(2 * np.pi * waves * t * 0.5 + art.uniform(-0.3, 0.3))
    half = np.full(h, 0.17 * w, np.float32) * art.uniform(0.9, 1.1)
    kind = card.kind
    if kind.is_end_piece:
        # An end piece runs from the top edge to a head or a point near the bottom.
        end_y = h * art.uniform(0.8, 0.86)
        centre = w / 2.0 + amp * 0.7 * np.sin(np.pi * np.clip(t * h / end_y, 0, 1))
        if kind.is_head:
            head_len, head_half = 0.2 * h, 0.29 * w * art.uniform(0.92, 1.05)
            head_c = end_y - head_len
            v = (t * h - head_c) / head_len
            bulge = head_half * np.sqrt(np.clip(1 - v * v, 0, 1))
            half = np.where(t * h > head_c - 0.5 * head_len, np.maximum(half * (t * h < head_c), bulge), half)
            half = np.where(t * h > end_y, 0, half)
        else:
            # a tail tapers to a point over its last part
            taper_from = 0.35 * h
            k = np.clip((end_y - t * h) / (end_y - taper_from), 0, 1)
            half = half * np.where(t * h > taper_from, k ** 0.8, 1.0)
    centre = centre.astype(np.float32)[:, None]
    half = half.astype(np.float32)[:, None]
    dx = xx - centre
    lw = max(1.0, 0.028 * w * pr.line_weight * {"cartoon": 1.6, "painted": 0.8, "photo": 0.5, "retro": 1.1}[style])
    body = np.clip(half - np.abs(dx) + 0.5, 0, 1) * (half > 0)   # no hairline past the tip
    outline = np.clip(half + lw - np.abs(dx) + 0.5, 0, 1) * (half > 0.2)

    colour = _body_colour(card, pr, t, xx, yy, dx, h)           # h x w x 3 float
    u = np.clip(dx / np.maximum(half, 1e-3), -1, 1)              # across the body
    colour = _shade_body(style, colour, u, xx, yy, w, art)

    ink_dark = np.array(_dark_line(pr), np.float32)
    img = img * (1 - outline[..., None]) + ink_dark * outline[..., None]
    img = img * (1 - body[..., None]) + colour * body[..., None]

    if kind.is_head:
        _draw_eyes(img, pr, float(centre[int(min(h - 1, head_c)), 0]), head_c, head_half, head_len, w)
        if style in ("cartoon", "painted"):
            ty = int(end_y)
            tx = int(round(float(centre[min(h - 1, ty), 0])))
            tongue = (60, 40, 200)
            t_len = int(0.06 * h)
            cv2.line(img, (tx, ty), (tx, ty + t_len), tongue, max(1, int(lw * 0.6)), cv2.LINE_AA)
            cv2.line(img, (tx, ty + t_len), (tx - int(0.03 * w), ty + t_len + int(0.025 * h)), tongue, max(1, int(lw * 0.5)), cv2.LINE_AA)
            cv2.line(img, (tx, ty + t_len), (tx + int(0.03 * w), ty + t_len + int(0.025 * h)), tongue, max(1, int(lw * 0.5)), cv2.LINE_AA)
    img = _finish(pr, img, art)
    return np.clip(img, 0, 255).astype(np.uint8)


def _body_colour(card: Card, pr: Print, t, xx, yy, dx, h) -> np.ndarray:
    kind = card.kind
    if kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL):
        inks = np.array([pr.ink(c) for c in RAINBOW], np.float32)
        period = 0.085 * h
        idx = np.floor((yy + 0.5 * dx) / period).astype(np.int64) % len(inks)
        return inks[idx]
    c0 = np.array(pr.ink(card.colours[0]), np.float32)
    if kind is Kind.MIDDLE:
        c1 = np.array(pr.ink(card.colours[1]), np.float32)
        s = np.clip((t - 0.22) / 0.56, 0, 1)
        s = s * s * (3 - 2 * s)                                  # pure colour at each edge, fade between
        line = c0[None, :] * (1 - s[:, None]) + c1[None, :] * s[:, None]
        return np.broadcast_to(line[:, None, :], xx.shape + (3,)).astype(np.float32)
    return np.broadcast_to(c0, xx.shape + (3,)).astype(np.float32)


def _shade_body(style: str, colour, u, xx, yy, w, art) -> np.ndarray:
    if style == "cartoon":
        belly = 0.3 * np.clip(1 - np.abs(u) * 3.2, 0, 1)[..., None]    # a lighter belly stripe
        return colour + (255.0 - colour) * belly
    if style == "painted":
        period = 0.09 * w
        row = np.floor(yy / period)
        sx = (xx / period + 0.5 * (row % 2)) % 1.0 - 0.5
        sy = (yy / period) % 1.0
        scale = np.sqrt(sx * sx + (1 - sy) ** 2)              # scallops opening down the body
        shade = 0.78 + 0.22 * np.clip(1.2 - scale * 1.3, 0, 1)
        wash = 0.9 + 0.1 * np.cos(u * 1.4)
        return colour * (shade * wash)[..., None]
    if style == "photo":
        round_ = np.sqrt(np.clip(1 - u * u, 0, 1))
        shade = 0.45 + 0.6 * round_
        spec = np.exp(-((u + 0.35) / 0.16) ** 2) * 90.0           # sheen along the body
        period = 0.06 * w
        row = np.floor(yy / period)
        sx = (xx / period + 0.5 * (row % 2)) % 1.0 - 0.5
        sy = (yy / period) % 1.0 - 0.5
        scales = 0.9 + 0.1 * np.clip(1 - 3.2 * (sx * sx + sy * sy), 0, 1)
        return colour * (shade * scales)[..., None] + spec[..., None]
    # retro: flat ink, printed later through a halftone screen
    return colour


def _dark_line(pr: Print) -> tuple[float, float, float]:
    return {"cartoon": (25, 25, 30), "painted": (40, 55, 70), "photo": (10, 12, 10), "retro": (50, 40, 45)}[pr.style]


def _draw_eyes(img, pr: Print, cx: float, cy: float, head_half: float, head_len: float, w: int) -> None:
    r = max(1.5, 0.085 * w)
    for side in (-1, 1):
        ex, ey = cx + side * head_half * 0.48, cy + head_len * 0.25
        white = (245, 245, 245) if pr.style != "photo" else (40, 200, 230)
        cv2.circle(img, (int(round(ex * 4)), int(round(ey * 4))), int(round(r * 4)), white, -1, cv2.LINE_AA, shift=2)
        cv2.circle(img, (int(round(ex * 4)), int(round(ey * 4))), int(round(r * 4)), _dark_line(pr), max(1, int(r * 0.25)), cv2.LINE_AA, shift=2)
        cv2.circle(img, (int(round(ex * 4)), int(round((ey + 0.2 * r) * 4))), int(round(r * 0.5 * 4)), (15, 15, 15), -1, cv2.LINE_AA, shift=2)


# --------------------------------------------------------------------------- paper and print

def _paper(pr: Print, w: int, h: int, art: np.random.Generator) -> np.ndarray:
    img = np.empty((h, w, 3), np.float32)
    img[:] = pr.paper_bgr
    if pr.style == "cartoon":
        # a thin printed frame, interrupted by the body at the connecting edges
        m = max(2, int(0.06 * w))
        frame = tuple(float(c) * 0.75 for c in pr.ink("green"))
        cv2.rectangle(img, (m, m), (w - 1 - m, h - 1 - m), frame, max(1, int(0.02 * w * pr.line_weight)), cv2.LINE_AA)
    elif pr.style == "painted":
        grain = _noise(art, h, w, max(3, w / 12)) * 8 + _noise(art, h, w, 1) * 4
        img += grain[..., None]
    elif pr.style == "photo":
        # an out-of-focus photographic backdrop: soft light patches, darker towards the edges
        glow = cv2.GaussianBlur(_noise(art, h, w, max(4, w / 4)), (0, 0), max(1, w / 25))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        edge = 1 - 0.35 * (((xx / w - 0.5) * 2) ** 2 + ((yy / h - 0.5) * 2) ** 2)
        img *= ((0.85 + 0.45 * glow) * edge)[..., None]
    else:
        img += (_noise(art, h, w, 3) * 10)[..., None]
    return img


def _finish(pr: Print, img: np.ndarray, art: np.random.Generator) -> np.ndarray:
    if pr.style == "retro":
        h, w = img.shape[:2]
        period = max(2.0, w / 30.0)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a, b = (xx + yy) / period, (xx - yy) / period
        dots = 0.5 + 0.25 * (np.cos(2 * np.pi * a) + np.cos(2 * np.pi * b))
        paper = np.array(pr.paper_bgr, np.float32)
        ink = np.clip((paper - img) / np.maximum(paper, 1), 0, 1)
        coverage = np.clip(ink * 1.15 + (dots[..., None] - 0.5) * 0.5, 0, 1)
        img = paper * (1 - coverage)
    elif pr.style == "painted":
        img = cv2.GaussianBlur(img, (0, 0), max(0.4, img.shape[1] / 260))
    return img


def _noise(rng: np.random.Generator, h: int, w: int, cell: float) -> np.ndarray:
    """Smooth noise in about -1..1 with features of `cell` pixels."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    small = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC) * 0.7


# --------------------------------------------------------------------------- the back

def _render_back(pr: Print, w: int, h: int) -> np.ndarray:
    """One common back for every style: dark green, a scale lattice, a coiled snake."""
    shift = pr.hue_shift * 0.5
    base = np.array(hsv_to_bgr(75 + shift, 0.7, 0.32 * pr.value), np.float32)
    light = np.array(hsv_to_bgr(70 + shift, 0.55, 0.55 * pr.value), np.float32)
    gold = np.array(hsv_to_bgr(24 + shift, 0.75, 0.93 * pr.value), np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32) + 0.5
    period = 0.16 * w
    a, b = (xx + yy) / period, (xx - yy) / period
    lattice = np.minimum(np.abs(a - np.round(a)), np.abs(b - np.round(b)))
    lines = np.clip(1.0 - lattice * period / max(1.0, 0.03 * w), 0, 1)
    img = base * (1 - 0.6 * lines[..., None]) + light * (0.6 * lines[..., None])
    m = max(2, int(0.07 * w))
    cv2.rectangle(img, (m, m), (w - 1 - m, h - 1 - m), tuple(map(float, gold)), max(1, int(0.025 * w)), cv2.LINE_AA)
    cx, cy = w / 2.0, h / 2.0
    cv2.ellipse(img, (int(cx), int(cy)), (int(0.32 * w), int(0.32 * w)), 0, 0, 360, tuple(map(float, base * 0.7)), -1, cv2.LINE_AA)
    # a coiled snake: a thick spiral in gold
    th = np.linspace(0.0, 4.2 * np.pi, 120)
    rad = 0.05 * w + 0.022 * w * th
    pts = np.stack([cx + rad * np.cos(th), cy + rad * np.sin(th)], 1)
    pts = np.round(pts * 4).astype(np.int32)
    cv2.polylines(img, [pts], False, tuple(map(float, gold)), max(1, int(0.035 * w)), cv2.LINE_AA, shift=2)
    cv2.circle(img, (int(pts[-1, 0] / 4), int(pts[-1, 1] / 4)), max(1, int(0.04 * w)), tuple(map(float, gold)), -1, cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8)


def palette_bgr(colour: str) -> tuple[float, float, float]:
    """The nominal (unjittered) printed ink of a palette colour."""
    return hsv_to_bgr(*PALETTE_HSV[colour])
