"""Where the picture changed since the table was last judged.

A turn changes a small part of the table (a card laid, a snake taken, a chain
pushed aside).  Comparing the next still picture with the picture the table
was last judged from (the change gate's small copies) gives a box around what
changed; grown by more than a card's length, it holds every card a changed card
touches.  Outside it the pixels say nothing happened, so what the reader says
there is judged by them (`Tracker._compare`), not by reading the picture again:
two readings that agree inside the box are enough (`Tracker._agreed`).
"""
from __future__ import annotations

import cv2
import numpy as np

from .gate import ChangeGate
from .reading import Reading, without_cards

Box = tuple[int, int, int, int]   # x0, y0, x1, y1 in full-image pixels, x1 and y1 excluded


def changed_box(gate: ChangeGate, now: np.ndarray, before: np.ndarray, shape: tuple[int, ...],
                reach: float) -> Box | None:
    """The box around every change between two small pictures, grown by `reach` full-image
    pixels and clipped to the picture; None when nothing changed but scattered noise.
    Only changed pixels with a changed neighbour count, as for motion (`ChangeGate.moving`)."""
    if now.shape != before.shape:
        return None
    mask = gate.changed_mask(now, before).astype(np.uint8)
    neighbours = cv2.boxFilter(mask, -1, (3, 3), normalize=False) - mask
    ys, xs = np.nonzero(mask & (neighbours > 0))
    if not len(xs):
        return None
    h, w = shape[:2]
    sx, sy = w / now.shape[1], h / now.shape[0]
    return (max(0, int(xs.min() * sx - reach)), max(0, int(ys.min() * sy - reach)),
            min(w, int(np.ceil((xs.max() + 1) * sx + reach))),
            min(h, int(np.ceil((ys.max() + 1) * sy + reach))))


def only_in(reading: Reading, box: Box) -> Reading:
    """The reading of the cards whose centre lies in the box."""
    x0, y0, x1, y1 = box
    return without_cards(reading, {c.index for c in reading.cards
                                   if not (x0 <= c.centre[0] < x1 and y0 <= c.centre[1] < y1)})
