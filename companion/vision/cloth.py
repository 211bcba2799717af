"""Cells of a patterned cloth taken for cards: what repeats around itself is the cloth.

A gingham's dark squares seen at a slant are card-shaped, plain and dark, and
under a coloured lamp read as the back of a card; a table of them would show
dozens of cards that are not there.  But a cloth repeats itself: the picture
of a cell is found again a period away, in every direction, while a card's
picture is not (its neighbours in a snake bear other art, and no two cards
lie on a lattice).  A quad is a cell of the cloth when the picture of its box
is found again, nearly unchanged, at several other places around it.
"""
from __future__ import annotations

import cv2
import numpy as np

ALIKE = 0.8          # normalised correlation of a copy with the quad's picture
COPIES = 3           # copies around it that make it the cloth's (gingham shows eight)
REACH = 2.5          # the box's sizes searched on each side: a period or two of a cloth
FLAT = 6.0           # grey levels: a picture plainer than this correlates with noise alone
DETAIL = 16          # px: the box's short side is compared at this size (a cloth's cell is plain)


def cloth_cells(gray: np.ndarray, quads: list[np.ndarray]) -> list[bool]:
    """For each quad (corners in `gray`'s pixels), whether its picture repeats around it."""
    return [_repeats(gray, q) for q in quads]


def _repeats(gray: np.ndarray, quad: np.ndarray) -> bool:
    h, w = gray.shape
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
    bw, bh = x1 - x0, y1 - y0
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h or min(bw, bh) < 4:
        return False
    sx0, sy0 = max(0, int(x0 - REACH * bw)), max(0, int(y0 - REACH * bh))
    sx1, sy1 = min(w, int(x1 + REACH * bw)), min(h, int(y1 + REACH * bh))
    f = min(1.0, DETAIL / min(bw, bh))
    around = gray[sy0:sy1, sx0:sx1]
    if f < 1.0:
        around = cv2.resize(around, (max(1, round((sx1 - sx0) * f)), max(1, round((sy1 - sy0) * f))),
                            interpolation=cv2.INTER_AREA)
    px0, py0 = round((x0 - sx0) * f), round((y0 - sy0) * f)
    pw, ph = max(2, round(bw * f)), max(2, round(bh * f))
    patch = around[py0:py0 + ph, px0:px0 + pw]
    if patch.shape != (ph, pw) or float(patch.std()) < FLAT:
        return False
    score = cv2.matchTemplate(around, patch, cv2.TM_CCOEFF_NORMED)
    # separate copies: local maxima at least half the box apart, not the quad itself
    k = max(3, (min(pw, ph) // 2) | 1)
    ys, xs = np.nonzero((score >= ALIKE) & (score == cv2.dilate(score, np.ones((k, k), np.uint8))))
    others = np.hypot(xs - px0, ys - py0) > 0.5 * min(pw, ph)
    return int(others.sum()) >= COPIES
