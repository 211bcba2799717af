"""Which regions of several cards are cut apart, and which cut of each is kept.

The cuts themselves are `split`'s.  Once the cards found alone tell a card's
size, a region too small for two is not cut, one whose cards were all found
alone is not cut again, and rows of many cards are cut first, within
`split.SPLIT_BUDGET`.  A region of less than `FAN_CARDS` cards may be a fan
of cards overlapping: its top card is kept as a last resort, and (with
`fans`) a region of a few cards' size that no cut parts is kept itself
(`REGION_SCORE`).
"""
from __future__ import annotations

import cv2
import numpy as np

from .outline import order_corners
from .quads import apparent_aspect, box_iou, edge_contrast, lies_within, rim_support
from .regions import Blob, SearchMaps
from .sizes import PAIR_ASPECT, CardSizes, card_area_about, card_size_about
from .split import (SPLIT_BUDGET, SeamGradient, card_on_side, cut_row, peel_strip, split_blob, split_evenly,
                    split_to_size)
from .suppress import CONTAINER_SCORE

MAX_APPARENT_ASPECT = 2.6  # a 1:1.6 card foreshortened by a 45-degree view
RIM_SUPPORT = 0.7          # share of its outline along which a card cut from the edge map shows a rim
ONE_CARD = 0.6             # card areas: a region of less is a piece of a card
TWO_CARDS = 1.2            # ... of less, at most one card (cards overlapping, or a card and some table)
FAN_CARDS = 1.6            # ... of less, perhaps a fan of cards overlapping
FAN_LEAST_CARDS = 1.0      # a region of fewer cards than this is one card at most ...
FAN_MOST_CARDS = 4.0       # ... and one of more that no cut parts is no fan ...
FAN_FILL = 0.6             # ... nor one filling less of its least rectangle
REGION_SCORE = 0.0         # the score of such a region's outline: to be searched, not a card
PIECE_CONTRAST = 0.6       # share of its outline a card cut from a row shows a card's step along (where it
                           # was cut is a guess: more than `regions.ALONE_CONTRAST`)
KNOWN_SCORE = 1.0          # the finder's trust in a known card's outline (`known`): whole
PAPER_PIECE_CONTRAST = 0.3  # a card cut from a row of the learnt map: its map fades over a few pixels, so
                            # little of its outline shows the full step


def cut_regions(blobs: list[Blob], kept: list, alone: list, sizes: CardSizes | None, maps: SearchMaps,
                aspect_lo: float, aspect_hi: float, fans: bool, known: list = ()) -> tuple[list, list, list]:
    """The cards cut from regions of several (`blobs`), given the cards found alone (`kept`,
    `alone`) and their sizes: (pieces, pieces of the unlike-the-table map, last resorts: fans'
    top cards and regions to search, only where nothing else is found).  `known`: the quads of
    cards known to lie there (a watched table's, `find_cards`): a region they explain (with
    cards found alone) is not cut, and its known cards are given as its pieces instead."""
    edges, paper_p, unlike_p = maps.edges, maps.paper_p, maps.unlike_p
    aspect = sizes.long / sizes.short if sizes else None
    # the most card-like regions first (they fill their bounding box), so that the
    # split budget goes to rows of cards before fragments of a patterned cloth
    blobs = sorted(blobs, key=lambda b: (b.contrast_in is unlike_p, -b.fill))
    cards_in: dict[int, float] = {}
    if sizes:
        # with the cards' size known, a region too small to hold two is at most one card,
        # and rows of many cards go first: each cut there parts more cards
        cards_in = {id(b): b.area / card_area_about(sizes, b.contour) for b in blobs}
        blobs = [b for b in blobs if cards_in[id(b)] >= ONE_CARD]
        blobs.sort(key=lambda b: (b.contrast_in is unlike_p, -min(cards_in[id(b)], 12.0)))
    # seams between touching cards are looked for in the lightness
    gradient = SeamGradient(maps.lab[..., 0])
    pieces, unlike_pieces, last_resort = [], [], []
    budget = [SPLIT_BUDGET]
    blob_boxes: list[tuple[bool, np.ndarray, tuple[int, int, int, int]]] = []
    cards = [(q, q.min(axis=0), q.max(axis=0), s) for q, s in kept if apparent_aspect(q) <= PAIR_ASPECT]
    known_cards = [(q, q.min(axis=0), q.max(axis=0)) for q in known]
    told: set[int] = set()   # the known cards given as pieces already
    for blob in blobs:
        c, closed, contrast_in, step = blob.contour, blob.closed, blob.contrast_in, blob.step
        box = cv2.boundingRect(c)
        if any(cl == closed and seen_in is contrast_in and box_iou(box, b) > 0.85
               for cl, seen_in, b in blob_boxes):
            continue  # the same group of cards, seen in another map of the same kind
        blob_boxes.append((closed, contrast_in, box))
        near = [(q, s) for q, lo, hi, s in cards if _in_box(lo, hi, box)]
        near_known = [q for q, lo, hi in known_cards if _in_box(lo, hi, box)]
        # (a region mostly a known card may hold a card laid beside it: only one inside it is no more)
        if any(_contains_point(q, c) or lies_within(c, q) for q, _ in near) or \
                any(lies_within(c, q) for q in near_known):
            continue  # the blob is that card, or a part of it (paper beside the body)
        found = [q for q, s in near if s >= CONTAINER_SCORE]
        min_left = 0.5 * card_area_about(sizes, c) if sizes else 0.0
        if sizes and _explained(c, box, found, min_left):
            continue  # every card in it was found alone: cutting it would only find them again
        if sizes and near_known and _explained(c, box, found + near_known, min_left):
            # the rest of it are cards known to lie there: they are what its cut would find
            pieces.extend((q, KNOWN_SCORE) for q in near_known if id(q) not in told)
            told.update(id(q) for q in near_known)
            continue
        if sizes and cards_in[id(blob)] < FAN_CARDS:
            # perhaps a fan of cards overlapping, which no cut parts, or a card with something
            # beside it: the top card, a side of it along the outline, where nothing else is found
            last_resort.extend(card_on_side(c, *card_size_about(sizes, c), edges, MAX_APPARENT_ASPECT))
        got = [] if sizes and cards_in[id(blob)] < TWO_CARDS else \
            cut_blob(blob, alone, sizes, gradient, aspect, aspect_lo, aspect_hi, budget)
        # a fan spread little is hardly larger than a card: too small to hold two, it is
        # still a region for its top card to be looked for in
        if fans and not got and sizes and FAN_LEAST_CARDS <= cards_in[id(blob)] <= FAN_MOST_CARDS \
                and blob.fill >= FAN_FILL:
            last_resort.append((order_corners(cv2.boxPoints(cv2.minAreaRect(c))), REGION_SCORE))
        if contrast_in is edges:
            pieces.extend((q, s) for q, s in got if rim_support(edges, q) >= RIM_SUPPORT)
        elif contrast_in is unlike_p:
            unlike_pieces.extend((q, s) for q, s in got
                                 if edge_contrast(contrast_in, q, step) >= PAPER_PIECE_CONTRAST)
        else:
            least = PAPER_PIECE_CONTRAST if contrast_in is paper_p else PIECE_CONTRAST
            pieces.extend((q, s) for q, s in got if edge_contrast(contrast_in, q, step) >= least)
    return pieces, unlike_pieces, last_resort


def cut_blob(blob: Blob, alone: list, sizes: CardSizes | None, gradient: SeamGradient,
             aspect: float | None, aspect_lo: float, aspect_hi: float, budget: list) -> list:
    """The cards a region of several is cut into: the cut that parts the most of them."""
    c = blob.contour
    # one card found alone may itself be two: its size bounds pieces only when others agree
    bound = card_size_about(sizes, c) if len(alone) >= 2 else (0.0, 0.0)
    got = split_blob(c, *bound, aspect_lo, aspect_hi, budget=budget)
    if not got and aspect:
        got = split_evenly(c, aspect)
    if sizes and blob.closed:
        peeled = peel_strip(c, gradient, sizes)
        if len(peeled) > len(got):
            got = peeled
    row = cut_row(c, gradient, aspect_hi)
    if len(row) > len(got):
        got = row
    if len(got) > 1 or not sizes or len(alone) < 2:
        return got
    # no cut found: the strip cut to the size of the cards found alone
    sized = split_to_size(c, *card_size_about(sizes, c))
    return sized if len(sized) > len(got) else got


def _in_box(lo: np.ndarray, hi: np.ndarray, box) -> bool:
    """Whether the bounds `lo`, `hi` of a quad overlap the box (x, y, w, h)."""
    x, y, w, h = box
    return lo[0] < x + w and hi[0] > x and lo[1] < y + h and hi[1] > y


def _explained(contour: np.ndarray, box, cards: list[np.ndarray], min_left: float) -> bool:
    """Whether well-fitting cards cover a blob but for less than `min_left` pixels.

    Cutting rows of touching cards apart is the costliest step of the search,
    and the same row shows in several maps; once its cards were found alone
    (in another map, or at another threshold) there is nothing left to cut.
    """
    if not cards:
        return False
    x, y, w, h = box
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [contour], -1, 255, -1, offset=(-x, -y))
    for q in cards:
        cv2.fillConvexPoly(mask, np.round(q - (x, y)).astype(np.int32), 0)
    return cv2.countNonZero(mask) < min_left


def _contains_point(quad: np.ndarray, contour: np.ndarray) -> bool:
    """Whether an accepted card already sits inside this blob (then the blob is that card)."""
    c = quad.mean(axis=0)
    return cv2.pointPolygonTest(contour, (float(c[0]), float(c[1])), False) > 0 and \
        abs(cv2.contourArea(quad.astype(np.float32))) > 0.6 * cv2.contourArea(contour)
