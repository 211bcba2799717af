"""A straight row of cards cut again where its cards read badly.

A row of touching cards is cut into cards by its seams (`split`): where a seam
hides (a pale table, a glare, cards far off under a slanted view) the cut may
fall in a card's middle, or a card may be lost between two cuts.  An outline
across a seam holds the ends of two cards, and the recogniser reads it as a
face it is not sure of, or as a middle of one colour at both ends.  Such a
face and its neighbours in line with it, end to end, make a stretch of row;
the stretch is cut again into equal cards (as many as its length holds, give
or take one, and as many as were read in it; the view's perspective decides
where each cut falls, as in `split.cut_row`), and the cutting whose cards
read surest replaces the first, when it reads clearly surer.
"""
from __future__ import annotations

import math
from typing import Callable

import cv2
import numpy as np

from .fans import card_size_near
from .outline import CardOutline, order_corners, polygon_iou
from .recognise import FACE_KINDS, CardReading, one_colour_middle

DOUBTFUL = 0.3      # a face read less surely than this may be cut from its row at a wrong seam
ROW_TURN = 15.0     # degrees: cards turned more against each other are no straight row
ROW_OFFSET = 0.3    # of a card's width: how far off the row's line the next card's centre may lie
ROW_GAP = 1.2       # cards' lengths: the row between two of its cards read (a card lost there)
SQUARISH = 1.3      # a card looking less long against its width may lie along either side
PIECE_LENGTH = (0.6, 1.6)   # a cut card's length against the cards near it: a card, not a piece
SURER = 1.5         # the geometric mean of its cards' confidences the new cutting must beat the old by
APART = 0.2         # overlap with a reading outside the row under which a card cut is not on it
CUT_SCORE = 0.5     # the finder's trust in a card cut from a row (`split`'s guesses)

Recognise = Callable[[np.ndarray, list[CardOutline]], list[CardReading]]


def rows_cut_again(image: np.ndarray, readings: list[CardReading], recognise: Recognise) -> list[CardReading]:
    """`readings`, each doubtful face (`_doubtful`) and the faces in line with it (`_row_through`)
    replaced by the equal cutting of their stretch of row whose cards all read as faces,
    surer than the stretch's cards read now by `SURER` (geometric means), if one does."""
    out = list(readings)
    looked: set[int] = set()
    for seed in [r for r in readings if _doubtful(r)]:
        if id(seed) in looked:
            continue
        faces = [r for r in out if r.kind in FACE_KINDS and id(r) not in looked]
        row = _row_through(seed, faces)
        looked.update(id(r) for r in row)
        cut = {id(r) for r in row}
        rest = [r for r in out if id(r) not in cut]
        better = _cut_surer(image, row, rest, faces, recognise)
        if better is not None:
            at = min(k for k, r in enumerate(out) if id(r) in cut)
            out = rest[:at] + better + rest[at:]
    return out


def _doubtful(reading: CardReading) -> bool:
    """A face read unsurely, or as a middle of one colour at both ends (no card of the deck:
    an outline across the seam of a ...-red card and a red-... one reads so)."""
    return reading.kind in FACE_KINDS and (reading.confidence < DOUBTFUL or one_colour_middle(reading))


def _row_through(seed: CardReading, faces: list[CardReading]) -> list[CardReading]:
    """`seed` and the faces in line with it end to end, one either side at most, in order
    along the row.  A card looking nearly square (a slanted view squeezes a card along its
    length; a cut across a seam slants its ends) says little of the row's direction: its
    neighbours' long sides say it, and the row runs the way with more cards."""
    others = [f for f in faces if f is not seed]
    directions = [_axis(seed.outline)]
    if _squarish(seed.outline):
        reach = 2.0 * seed.outline.long_side
        directions += [_axis(f.outline) for f in others
                       if np.linalg.norm(f.outline.centre - seed.outline.centre) < reach]
    rows = []
    for u in directions:
        before, after = (_next_in_line(seed, sign * u, others) for sign in (-1.0, 1.0))
        rows.append([r for r in (before, seed, after) if r is not None])
    return max(rows, key=len)


def _next_in_line(card: CardReading, u: np.ndarray, others: list[CardReading]) -> CardReading | None:
    """The face lying end to end with `card` beyond its end in direction `u`, if one does: the
    nearest whose centre lies on the line `u` draws through `card`'s, no farther than touching
    would put it and `ROW_GAP` more, if it is turned along `u` (never one beyond it)."""
    across = np.array([-u[1], u[0]])
    half = _half_extent(card.outline, u)
    best, nearest = None, math.inf
    for other in others:
        d = other.outline.centre - card.outline.centre
        along, other_half = float(d @ u), _half_extent(other.outline, u)
        touching = half + other_half
        if not 0.5 * touching <= along <= touching + ROW_GAP * 2.0 * other_half:
            continue
        if abs(float(d @ across)) > ROW_OFFSET * min(card.outline.short_side, other.outline.short_side):
            continue
        if along < nearest:
            best, nearest = other, along
    if best is None:
        return None
    v = _axis(best.outline)
    turns = (v, np.array([-v[1], v[0]])) if _squarish(best.outline) else (v,)
    if max(abs(float(u @ t)) for t in turns) < math.cos(math.radians(ROW_TURN)):
        return None
    return best


def _half_extent(outline: CardOutline, u: np.ndarray) -> float:
    """How far the outline reaches from its centre in direction `u`."""
    return float(np.max((outline.corners - outline.centre) @ u))


def _squarish(outline: CardOutline) -> bool:
    return outline.long_side < SQUARISH * outline.short_side


def _cut_surer(image: np.ndarray, row: list[CardReading], rest: list[CardReading],
               faces: list[CardReading], recognise: Recognise) -> list[CardReading] | None:
    """The row's cards read again from the surest of its equal cuttings, if surer than now;
    a cutting with a card over another reading (`rest`) is none."""
    to_row = _unit_square_onto(row)
    if to_row is None:
        return None
    _, long_ = card_size_near(np.mean([r.outline.centre for r in row], axis=0), faces)
    # as many cards as the row's length holds, give or take one, and as many as were read in it
    fits = int(round(_length(to_row) / long_))
    cuttings = {}
    for count in sorted({len(row), *range(max(1, fits - 1), fits + 2)}):
        cards = _cut(to_row, count)
        lengths = [np.linalg.norm((c[1] + c[2] - c[0] - c[3]) / 2.0) for c in cards]
        if not all(PIECE_LENGTH[0] * long_ <= length <= PIECE_LENGTH[1] * long_ for length in lengths):
            continue
        if any(polygon_iou(c, r.outline.corners) > APART for c in cards for r in rest):
            continue
        cuttings[count] = [CardOutline(order_corners(c), CUT_SCORE) for c in cards]
    if not cuttings:
        return None
    read = recognise(image, [o for outlines in cuttings.values() for o in outlines])
    by_outline = {id(r.outline): r for r in read}
    now = _sureness(row)
    best, best_sureness = None, SURER * now
    for outlines in cuttings.values():
        cards = [by_outline.get(id(o)) for o in outlines]
        if any(c is None or c.kind not in FACE_KINDS or one_colour_middle(c) for c in cards):
            continue
        sureness = _sureness(cards)
        if sureness > best_sureness:
            best, best_sureness = cards, sureness
    return best


def _sureness(readings: list[CardReading]) -> float:
    """The geometric mean of the readings' confidences (each at least a thousandth; a middle
    of one colour at both ends, no card of the deck, counts as the least)."""
    return math.exp(float(np.mean([math.log(1e-3 if one_colour_middle(r) else max(r.confidence, 1e-3))
                                   for r in readings])))


def _unit_square_onto(row: list[CardReading]) -> np.ndarray | None:
    """The perspective taking the unit square (x along the row, y across it) onto the row:
    from the first card's outer end to the last card's."""
    first, last = row[0].outline, row[-1].outline
    u = last.centre - first.centre if len(row) > 1 else _axis(first)
    u = u / max(1e-9, float(np.linalg.norm(u)))
    n = np.array([-u[1], u[0]])

    def end(outline: CardOutline, outward: float) -> np.ndarray:
        ends = _ends(outline)
        side = max(ends, key=lambda e: outward * float(e.mean(axis=0) @ u))
        return side[np.argsort(side @ n)]          # its corner on the left of the row first

    a, b = end(first, -1.0), end(last, 1.0)
    quad = np.float32([a[0], b[0], b[1], a[1]])
    if abs(cv2.contourArea(quad)) < 1.0:
        return None
    return cv2.getPerspectiveTransform(np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]), quad)


def _length(to_row: np.ndarray) -> float:
    """The row's length in the picture, along its middle."""
    a, b = cv2.perspectiveTransform(np.array([[[0.0, 0.5]], [[1.0, 0.5]]]), to_row).reshape(2, 2)
    return float(np.linalg.norm(b - a))


def _cut(to_row: np.ndarray, count: int) -> list[np.ndarray]:
    """The row cut into `count` equal cards, each four corners in the picture."""
    cuts = np.linspace(0.0, 1.0, count + 1)
    corners = np.array([[[a, 0], [b, 0], [b, 1], [a, 1]] for a, b in zip(cuts, cuts[1:])], np.float64)
    return list(cv2.perspectiveTransform(corners.reshape(-1, 1, 2), to_row).reshape(-1, 4, 2))


def _ends(outline: CardOutline) -> list[np.ndarray]:
    """The outline's two short sides, two corners each."""
    c = outline.corners
    e = outline.edge_lengths
    if e[0] + e[2] >= e[1] + e[3]:
        return [c[[3, 0]], c[[1, 2]]]
    return [c[[0, 1]], c[[2, 3]]]


def _axis(outline: CardOutline) -> np.ndarray:
    """The unit direction of the outline's long sides."""
    a, b = _ends(outline)
    d = b.mean(axis=0) - a.mean(axis=0)
    return d / max(1e-9, float(np.linalg.norm(d)))
