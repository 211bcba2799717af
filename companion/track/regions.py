"""Where the picture changed since the table was last judged.

A turn changes a small part of the table (a card laid, a snake taken, a chain
pushed aside).  Comparing the next still picture with the picture the table
was last judged from (the change gate's small copies) gives a box around what
changed; grown by more than a card's length, it holds every card a changed card
touches.  Outside it the pixels say nothing happened, so what the reader says
there is judged by them (`Tracker._compare`), not by reading the picture again:
two readings that agree inside the box are enough (`Tracker._agreed`).

Nor need the rest of the picture be read at all: a full 720p analysis costs
~200-350 ms whatever is on the table (the finder's maps cover every pixel),
one of the part around a change ~20-250 ms.  A tracker given a region reader
(`TableReader.region`: the part read as part of the whole picture, against the same
empty table; `crop_reader` for any other analyser) reads only that part
(`Tracker._read`); the cards outside it are the settled table's, kept by the pixels
as for any card the reader did not see where nothing changed.  The part read is the
box grown by one more card length, so that every card whose centre lies in the box
lies whole in the picture read (a card cut by the picture's edge would be misread),
and only those cards are kept.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import cv2
import numpy as np

from .gate import ChangeGate
from .reading import AnalyzeFn, Reading, without_cards

Box = tuple[int, int, int, int]   # x0, y0, x1, y1 in full-image pixels, x1 and y1 excluded
# (image BGR, box) -> the analyze dict of the part of the image in the box, in full-image pixels
RegionFn = Callable[[np.ndarray, Box], Mapping[str, Any]]


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


def grown(box: Box, by: float, shape: tuple[int, ...]) -> Box:
    """The box grown by `by` pixels on every side, clipped to a picture of this shape."""
    x0, y0, x1, y1 = box
    h, w = shape[:2]
    return (max(0, int(x0 - by)), max(0, int(y0 - by)),
            min(w, int(np.ceil(x1 + by))), min(h, int(np.ceil(y1 + by))))


def shifted(data: Mapping[str, Any], dx: float, dy: float) -> dict:
    """An analyze dict of a part of a picture with its points moved to the whole picture's
    pixels (the part's top-left corner at dx, dy)."""
    out = dict(data)
    cards = []
    for card in data.get("cards", []):
        card = dict(card)
        for key in ("corners", "ends"):
            if key in card:
                card[key] = [[x + dx, y + dy] for x, y in card[key]]
        cards.append(card)
    out["cards"] = cards
    return out


def crop_reader(analyze: AnalyzeFn) -> RegionFn:
    """A region reader for an analyser of whole pictures: it analyses the part in the box
    (the analyser is a pure function of the picture it is given) and moves the points back."""
    def read(image: np.ndarray, box: Box) -> Mapping[str, Any]:
        x0, y0, x1, y1 = box
        return shifted(analyze(np.ascontiguousarray(image[y0:y1, x0:x1])), x0, y0)
    return read
