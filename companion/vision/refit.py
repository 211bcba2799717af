"""A second look at outlines whose first reading lost a card.

A face whose outline takes in part of its neighbour (a row cut at the wrong
seam, two cards fitted as one) is read with the neighbour's paper and ink at
one end.  Often the kind model still names the face, but its evidence is
unlike a true face's, so the recogniser reports it `unknown`
(`Recogniser.believed_kinds`); or the face is read whole, as the card it
mostly holds, and the part of the next card is lost with it.  Either way the
snake it lies in is broken there.  Inside such an outline, the card-sized
rectangle whose sides lie most on edges (the fans' search) is read again; it
replaces the reading when it reads as a face, and `extend` then finds the
neighbour beyond its open end (`refit_oversized_faces`).

Two cards end to end outlined as one are read from the outline's halves: when
the recogniser turned the outline down (`pairs_read_apart`), and when it read
the outline as one of the two faces (`faces_read_apart`).

A face outlined loosely (its outline slid a fifth of a card along its snake,
or fitted to its body on a patterned cloth) is read as `unknown`: the kind
model still names a face, but its evidence is not a true face's.  Once every
other card is read, card-sized rectangles moved a little along and across
such an outline are read again, and the surest face among them replaces it
(`doubted_faces_refitted`).
"""
from __future__ import annotations

import math
from typing import Callable

import cv2
import numpy as np

from .fans import card_on_edges, card_size_near, rectangles
from .outline import CardOutline, order_corners, polygon_iou, share_inside
from .quads import apparent_aspect
from .recognise import FACE_KINDS, CardReading, one_colour_middle
from .refine import refine_corners
from .sizes import PAIR_ASPECT

OVERSIZED = 1.15    # cards: a doubted face's outline this large holds more than its card
# A face read as one is refitted only when its outline is also longer than a card: a nearer
# card looks larger under a slanted view, but not longer against its width.
LONG_AREA = 1.2     # cards
LONGER = 1.3        # its long side over its short, against the cards around
OVER_FACE = 0.25    # or the share of another face's outline it covers
SEAM_ON_EDGE = 0.5  # the least share of its sides on edges (a seam between cards shows faintly)
APART = 0.2         # overlap with another reading under which a refitted card is not that one
INSIDE = 0.85       # the least share of a refitted card inside the outline it replaces
PAIR_LONGER = 1.5   # an outline of two cards end to end is this much longer against its width
                    # than the faces read, at least (twice, less what the view squeezes)
# Two of the deck's widest cards (1:1.6, `CARDS.md`) side by side, joined at their long edges:
# with no face read to size the cards by, an outline this much longer than wide may be two
PAIR_WIDEST = 2.0 / 1.6
# A doubted face's outline is read again moved by these shares of a card's length along it and of
# its width across it, sized as the faces around it and as itself (a slanted view changes a
# card's apparent size from place to place)
DOUBT_ALONG = (-0.25, -0.15, -0.05, 0.0, 0.05, 0.15, 0.25)
DOUBT_ACROSS = (-0.1, 0.0, 0.1)
DOUBT_SURE = 0.8    # the least confidence of a face read there that replaces the doubted outline
# (at 0.5, 4 more cards right on 120 hard development tables, but 7 more phantom moves in 10
# development games against 2 at 0.8)


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
        if not _holds_more(reading, short, long_, others):
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


def pairs_read_apart(image: np.ndarray, readings: list[CardReading], unread: list[CardOutline],
                     recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]]
                     ) -> list[CardReading]:
    """`readings` and the faces read in the halves of outlines the recogniser turned down
    that are twice as long as wide (`sizes.PAIR_ASPECT`) and far longer than the faces read
    (`PAIR_LONGER`): cards nearly square, lying end to end with no seam the finder could see,
    outlined as one.  Read as one card, a pair is read as none, and with no face there
    `extend` has no end to follow.  (Where the deck's cards are themselves twice as long as
    wide, such an outline is one card the recogniser doubted, and its halves are no cards.)
    With no face read to size the cards by (the first cards of a game), any outline as long as
    two of the widest cards side by side (`PAIR_WIDEST`) is cut, and kept cut only when both
    its halves read as faces."""
    aspects = [r.outline.long_side / r.outline.short_side for r in readings if r.kind in FACE_KINDS]
    if not aspects:
        pairs = [o for o in unread if apparent_aspect(o.corners) >= PAIR_WIDEST]
        found = [f for faces in _faces_in_halves(image, pairs, recognise) if len(faces) == 2 for f in faces]
        return list(readings) + [f for f in found if not any(
            polygon_iou(f.outline.corners, r.outline.corners) > APART for r in readings)]
    longest = max(PAIR_ASPECT, PAIR_LONGER * float(np.median(aspects)))
    halves = [half for outline in unread if apparent_aspect(outline.corners) >= longest
              for half in _halves(outline)]
    out = list(readings)
    for reading in recognise(image, halves) if halves else []:
        if reading.kind in FACE_KINDS and \
                not any(polygon_iou(reading.outline.corners, r.outline.corners) > APART for r in out):
            out.append(reading)
    return out


def faces_read_apart(image: np.ndarray, readings: list[CardReading],
                     recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]]
                     ) -> list[CardReading]:
    """`readings`, each face read from an outline twice as long as wide (`sizes.PAIR_ASPECT`)
    replaced by the faces read in its halves, when both halves read as faces and the two are
    surer together (the product of their confidences) than the one.  Two cards end to end
    outlined as one are often read as whichever card fills more of the outline, and the other
    card is lost with the link between them.  The halves decide, not the outline's length: a
    card under a slanted view can look as long as two.  So, whatever its length, is a middle
    read with one colour at both ends, no card of the deck, tried in halves: two nearly square
    cards end to end, seen from a side, are no longer than one card seen from the front, and
    read as one they read as a middle of the colours at the pair's outer ends, which are one
    colour as often as not (a red-purple and a purple-red).  A half read so is no face
    either: the half of one card reads so."""
    split = [i for i, r in enumerate(readings) if r.kind in FACE_KINDS and (
        one_colour_middle(r) or apparent_aspect(r.outline.corners) >= PAIR_ASPECT)]
    if not split:
        return readings
    read = dict(zip(split, _faces_in_halves(image, [readings[i].outline for i in split], recognise)))
    out = []
    for i, reading in enumerate(readings):
        faces = [f for f in read.get(i, []) if not one_colour_middle(f)]
        sure = 0.0 if one_colour_middle(reading) else reading.confidence
        pair = len(faces) == 2 and math.prod(f.confidence for f in faces) > sure
        out.extend(faces if pair else [reading])
    return out


def _faces_in_halves(image: np.ndarray, outlines: list[CardOutline],
                     recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]]
                     ) -> list[list[CardReading]]:
    """For each outline, the faces read in its two halves (`_halves`), all read in one batch."""
    halves = [(k, half) for k, outline in enumerate(outlines) for half in _halves(outline)]
    whole = {id(half): k for k, half in halves}
    read: list[list[CardReading]] = [[] for _ in outlines]
    for reading in recognise(image, [half for _, half in halves]) if halves else []:
        if reading.kind in FACE_KINDS:
            read[whole[id(reading.outline)]].append(reading)
    return read


def _halves(outline: CardOutline) -> list[CardOutline]:
    """The outline cut in two across its long sides, at their middles."""
    c = _long_sides_first(outline)
    a, b = (c[0] + c[1]) / 2.0, (c[3] + c[2]) / 2.0
    return [CardOutline(order_corners(np.array(q)), outline.score)
            for q in ((c[0], a, b, c[3]), (a, c[1], c[2], b))]


def doubted_faces_refitted(image: np.ndarray, readings: list[CardReading],
                           recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]]
                           ) -> list[CardReading]:
    """`readings`, each `unknown` whose likeliest kind is a face replaced by the surest face
    (at least `DOUBT_SURE`) read in card-sized rectangles about its outline (`DOUBT_ALONG`,
    `DOUBT_ACROSS`) that overlaps no other reading.  Meant for the end of the reading, when
    the snakes' cards found by their neighbours' ends are there to keep a rectangle off them:
    any card-sized stretch of a snake reads as a middle."""
    faces = [r for r in readings if r.kind in FACE_KINDS]
    doubted = [i for i, r in enumerate(readings) if r.kind == "unknown" and _likeliest_is_face(r)]
    if not faces or not doubted:
        return readings
    tried: dict[int, int] = {}     # id of a rectangle's outline -> the reading it is tried for
    outlines = []
    for i in doubted:
        outline = readings[i].outline
        short, long_ = card_size_near(outline.centre, faces)
        degrees = _long_axis_degrees(outline)
        turn = np.deg2rad(degrees)
        along, across = np.array([np.cos(turn), np.sin(turn)]), np.array([-np.sin(turn), np.cos(turn)])
        poses = [(*(outline.centre + a * l * long_ * along + b * s * short * across), degrees, s, l)
                 for s, l in ((1.0, 1.0), (outline.short_side / short, outline.long_side / long_))
                 for a in DOUBT_ALONG for b in DOUBT_ACROSS]
        for corners in rectangles(np.array(poses), short, long_):
            card = CardOutline(order_corners(corners), outline.score)
            tried[id(card)] = i
            outlines.append(card)
    best: dict[int, CardReading] = {}
    for reading in recognise(image, outlines):
        i = tried[id(reading.outline)]
        if reading.kind in FACE_KINDS and reading.confidence >= DOUBT_SURE and \
                (i not in best or reading.confidence > best[i].confidence):
            best[i] = reading
    out = list(readings)
    for i, reading in best.items():
        if not any(polygon_iou(reading.outline.corners, r.outline.corners) > APART
                   for j, r in enumerate(readings) if j != i):
            out[i] = reading
    return out


def _likeliest_is_face(reading: CardReading) -> bool:
    return bool(reading.kind_probs) and max(reading.kind_probs, key=reading.kind_probs.get) in FACE_KINDS


def _long_axis_degrees(outline: CardOutline) -> float:
    """The direction of the outline's long sides, in degrees."""
    c = _long_sides_first(outline)
    d = c[1] - c[0] + c[2] - c[3]
    return float(np.degrees(np.arctan2(d[1], d[0])))


def _long_sides_first(outline: CardOutline) -> np.ndarray:
    """The outline's corners, turned so that corners 0 -> 1 and 3 -> 2 run along its long sides."""
    e = outline.edge_lengths
    return outline.corners if e[0] + e[2] >= e[1] + e[3] else np.roll(outline.corners, -1, axis=0)


def _holds_more(reading: CardReading, short: float, long_: float, faces: list[CardReading]) -> bool:
    """Whether a reading's outline holds more than its card, the cards around being
    `short` x `long_`: a face doubted (`unknown`, its likeliest kind a face) with an outline
    larger than a card, or a face with one larger than a card and either longer than one or
    lying over another face (`faces`): cards on the table do not overlap."""
    outline = reading.outline
    if reading.kind == "unknown":
        return _likeliest_is_face(reading) and outline.area >= OVERSIZED * short * long_
    if reading.kind not in FACE_KINDS or outline.area < LONG_AREA * short * long_:
        return False
    return outline.long_side / outline.short_side >= LONGER * long_ / short or \
        any(share_inside(f.outline.corners, outline.corners) >= OVER_FACE for f in faces)
