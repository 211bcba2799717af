"""Art styles of printed Hisss decks, and the variation between two printings.

A *style* is a way the card art is drawn (flat cartoon, painted with scales,
glossy photographic, an old offset print).  A *print* is one physical deck in
that style: its paper tone, how its press shifted hue and saturation, how thick
its lines came out.  Recognisers are trained on some styles and measured on the
held-out one, so nothing they learn may depend on one style's exact drawing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# The deck's palette names (CONTRACT.md) with a nominal printed hue (OpenCV HSV
# hue, 0-180) and saturation/value: the printing jitter moves around these.
PALETTE_HSV: dict[str, tuple[float, float, float]] = {
    "red": (178.0, 0.85, 0.86),
    "orange": (10.0, 0.92, 0.97),
    "yellow": (27.0, 0.85, 0.98),
    "green": (60.0, 0.75, 0.68),
    "blue": (108.0, 0.80, 0.80),
    "purple": (140.0, 0.60, 0.62),
}

# name -> what it looks like; the order is stable (seeds index into it).
STYLES: dict[str, str] = {
    "cartoon": "flat fills, thick dark outline, round cartoon eyes, white paper",
    "painted": "textured cream paper, watercolour body with scales, soft brush outline",
    "photo": "glossy: shaded round body with specular sheen, dark photo backdrop",
    "retro": "old offset print: yellowed paper, halftone dots, misregistered outline",
}
# Measured, never trained on: the test of whether recognition generalises.
HELD_OUT_STYLE = "retro"
TRAIN_STYLES: tuple[str, ...] = tuple(s for s in STYLES if s != HELD_OUT_STYLE)

# How glossy each style's card stock is (0 matt .. 1 mirror-like): drives glare.
GLOSS = {"cartoon": 0.35, "painted": 0.1, "photo": 0.9, "retro": 0.2}


class StyleError(ValueError):
    """An art style name that is not one of STYLES."""


def check_style(style: str) -> str:
    if style not in STYLES:
        raise StyleError(f"unknown style {style!r}; choose from {', '.join(STYLES)}")
    return style


@dataclass(frozen=True)
class Print:
    """One printing of a deck: what differs between two copies of the same style."""

    style: str
    paper_bgr: tuple[float, float, float]  # paper tone, 0-255
    hue_shift: float        # OpenCV hue units (0-180 scale), whole print
    saturation: float       # multiplier
    value: float            # multiplier on brightness of inks
    line_weight: float      # multiplier on outline thickness
    seed: int               # texture seed of this print (paper grain, scales)

    def ink(self, colour: str) -> tuple[float, float, float]:
        """The BGR ink this print uses for a palette colour (unknown names get grey)."""
        h, s, v = PALETTE_HSV.get(colour, (0.0, 0.0, 0.6))
        h = (h + self.hue_shift) % 180.0
        s = float(np.clip(s * self.saturation, 0.0, 1.0))
        v = float(np.clip(v * self.value, 0.0, 1.0))
        return hsv_to_bgr(h, s, v)


_PAPER = {  # base BGR paper tone per style and how far prints wander from it
    "cartoon": ((246, 248, 250), 8),
    "painted": ((205, 230, 240), 14),
    "photo": ((70, 78, 62), 18),
    "retro": ((170, 212, 228), 16),
}
# How far a print's paper may have yellowed with age (1: blue channel down by YELLOWED_BLUE):
# old decks and cheap stock go from white to cream to yellow, and the recognisers, which
# white-balance each card on its paper, must meet papers that are not white.  The retro
# style's base tone is already its yellowed paper; the photo style's stock is dark.
_YELLOWING = {"cartoon": 0.6, "painted": 0.6, "photo": 0.0, "retro": 0.0}
YELLOWED_BLUE, YELLOWED_GREEN = 0.3, 0.08


def sample_print(style: str, rng: np.random.Generator) -> Print:
    """Draw one printing of `style`: paper tone, hue, saturation, line weight."""
    check_style(style)
    base, spread = _PAPER[style]
    # papers differ in brightness and in warmth (yellowed vs blue-white), not at random per channel
    bright, warm = rng.normal(0, spread / 2), rng.normal(0, spread / 3)
    paper = tuple(float(np.clip(c + bright + warm * k, 0, 255)) for c, k in zip(base, (-1.0, 0.1, 0.6)))
    drawn = Print(
        style=style,
        paper_bgr=paper,  # type: ignore[arg-type]
        hue_shift=float(rng.uniform(-4.0, 4.0)),
        saturation=float(rng.uniform(0.75, 1.15)),
        value=float(rng.uniform(0.85, 1.08)),
        line_weight=float(rng.uniform(0.7, 1.4)),
        seed=int(rng.integers(0, 2**31 - 1)),
    )
    if not _YELLOWING[style]:
        return drawn   # (no further draw: such a style's prints are what they always were)
    age = float(rng.uniform(0.0, _YELLOWING[style]))
    b, g, r = paper
    return replace(drawn, paper_bgr=(b * (1 - YELLOWED_BLUE * age), g * (1 - YELLOWED_GREEN * age), r))


def hsv_to_bgr(h: float, s: float, v: float) -> tuple[float, float, float]:
    """OpenCV-scale hue (0-180), s and v in 0-1 -> BGR floats 0-255."""
    hh = (h % 180.0) / 30.0
    i = int(hh) % 6
    f = hh - int(hh)
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    r, g, b = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)][i]
    return (b * 255.0, g * 255.0, r * 255.0)
