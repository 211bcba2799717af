"""A second look at faces whose outline holds more than their card.

A face whose outline takes in part of its neighbour (a row cut at the wrong
seam, two cards fitted as one) is read with the neighbour's paper and ink at
one end.  Often the kind model still names the face, but its evidence is
unlike a true face's, so the recogniser reports it `unknown`
(`Recogniser.believed_kinds`); or the face is read whole, as the card it
mostly holds, and the part of the next card is lost with it.  Either way the
snake it lies in is broken there.  Inside such an outline, the card-sized
rectangle whose sides lie most on edges (the fans' search) is read again; it
replaces the reading when it reads as a face, and `extend` then finds the
neighbour beyond its open end.
"""
from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

from .fans import card_on_edges, card_size_near
from .find import refine_corners
from .outline import CardOutline, order_corners, polygon_iou, share_inside
from .recognise import FACE_KINDS, CardReading

OVERSIZED = 1.15    # cards: a doubted face's outline this large holds more than its card
# A face read as one is refitted only when its outline is also longer than a card: a nearer
# card looks larger under a slanted view, but not longer against its width.
LONG_AREA = 1.2     # cards
LONGER = 1.3        # its long side over its short, against the cards around
SEAM_ON_EDGE = 0.5  # the least share of its sides on edges (a seam between cards shows faintly)
APART = 0.2         # overlap with another reading under which a refitted card is not that one
INSIDE = 0.85       # the least share of a refitted card inside the outline it replaces


def refit_oversized_faces(image: np.ndarray, readings: list[CardReading],
                          recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]]
                          ) -> list[CardReading]:
    """`readings`, each face whose outline holds more than a card (`_holds_more`) read
    again from the card-sized rectangle in it, where that reads as a face."""
    faces = [r for r in readings if r.kind in FACE_KINDS]
    if not faces:
        return readings
    gray = None
    refitted: dict[int, tuple[int, CardOutline]] = {}   # id of an outline -> (the reading it would replace, it)
    for i, reading in enumerate(readings):
        if reading.kind != "unknown" and reading.kind not in FACE_KINDS:
            continue      # (a back, say: no need to size the cards around it)
        others = [r for r in faces if r is not reading]
        if not others:
            continue
        short, long_ = card_size_near(reading.outline.centre, others)
        if not _holds_more(reading, short, long_):
            continue
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if gray is None else gray
        outline = reading.outline
        found = card_on_edges(gray, outline, short, long_, SEAM_ON_EDGE)
        if found is None:
            continue
        card = refine_corners(gray, CardOutline(order_corners(found[0]), outline.score))
        # a rectangle reaching out of the outline is a card beside it, or the table: the
        # reading matched its card better than that would
        if share_inside(card.corners, outline.corners) < INSIDE:
            continue
        if not any(polygon_iou(card.corners, r.outline.corners) > APART for j, r in enumerate(readings) if j != i):
            refitted[id(card)] = (i, card)
    out = list(readings)
    if refitted:
        for reading in recognise(image, [card for _, card in refitted.values()]):
            i = refitted[id(reading.outline)][0]
            if reading.kind in FACE_KINDS:
                out[i] = reading
    return out


def _holds_more(reading: CardReading, short: float, long_: float) -> bool:
    """Whether a reading's outline holds more than its card, the cards around being
    `short` x `long_`: a face doubted (`unknown`, its likeliest kind a face) with an outline
    larger than a card, or a face with one both larger and longer than a card."""
    outline = reading.outline
    if reading.kind == "unknown":
        likeliest = max(reading.kind_probs, key=reading.kind_probs.get) if reading.kind_probs else None
        return likeliest in FACE_KINDS and outline.area >= OVERSIZED * short * long_
    return reading.kind in FACE_KINDS and outline.area >= LONG_AREA * short * long_ \
        and outline.long_side / outline.short_side >= LONGER * long_ / short
