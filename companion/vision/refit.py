"""A second look at faces the recogniser doubted because their outline is too large.

A face whose outline takes in part of its neighbour (a row cut at the wrong
seam, two cards fitted as one) is read with the neighbour's paper and ink at
one end: the kind model still names the face, but its evidence is unlike a
true face's, so the recogniser reports it `unknown` (`Recogniser.believed_kinds`),
and the snake it lies in is broken there.  Inside such an outline, the
card-sized rectangle whose sides lie most on edges (the fans' search) is read
again; it replaces the doubted reading when it reads as a face.
"""
from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

from .fans import card_on_edges, card_size_near
from .find import refine_corners
from .outline import CardOutline, order_corners, polygon_iou, share_inside
from .recognise import FACE_KINDS, CardReading

OVERSIZED = 1.15   # cards: a doubted face's outline this large holds more than its card
SEAM_ON_EDGE = 0.5  # the least share of its sides on edges (a seam between cards shows faintly)
APART = 0.2        # overlap with another reading under which a refitted card is not that one
INSIDE = 0.85      # the least share of a refitted card inside the doubted outline


def refit_doubted_faces(image: np.ndarray, readings: list[CardReading],
                        recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]]
                        ) -> list[CardReading]:
    """`readings`, each face doubted for an outline larger than a card read again from the
    card-sized rectangle in it, where that reads as a face."""
    faces = [r for r in readings if r.kind in FACE_KINDS]
    doubted = [i for i, r in enumerate(readings) if r.kind == "unknown" and r.kind_probs
               and max(r.kind_probs, key=r.kind_probs.get) in FACE_KINDS]
    if not faces or not doubted:
        return readings
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    refitted: dict[int, tuple[int, CardOutline]] = {}   # id of an outline -> (the reading it would replace, it)
    for i in doubted:
        outline = readings[i].outline
        short, long_ = card_size_near(outline.centre, faces)
        if outline.area < OVERSIZED * short * long_:
            continue
        found = card_on_edges(gray, outline, short, long_, SEAM_ON_EDGE)
        if found is None:
            continue
        card = refine_corners(gray, CardOutline(order_corners(found[0]), outline.score))
        # a rectangle reaching out of the outline is a card beside it, or the table: the
        # doubted reading matched its card better than that would
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
