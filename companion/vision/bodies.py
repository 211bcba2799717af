"""Cards whose paper cannot be told from the table, found by their snake's body.

A card printed on white paper, on a white or cream table under a bright lamp,
has no outline left in the picture: paper and table are both clipped to the
same white.  Its body still shows: a saturated band, one card long, running
along the card's middle from one short edge to the other.  Between two cards
laid end to end, the cards' own margins cut the band, so each card's body is a
separate patch of ink.

Every patch of ink that no card read so far explains, shaped like one card's
body (or two, end to end), is taken for the axis of a card of the size the
cards read nearest it have; the card is placed on it (centred, or pushed
towards either end, for a head or a tail whose body stops short of an edge)
and read.  A guess is kept only when read as a face the deck has a copy of
left, and no card read surely as a face lies there already.  An outline read
as no face (`unknown`), or less surely than a guess must be, or as a middle
with one colour at both ends (no card of the deck), gives way to a guess read
as a face: the finder fits such cards' outlines to whatever
edges it can, and reads them without their ink in the right place.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable

import cv2
import numpy as np

from companion.game.deck import Deck

from .extend import card_of, overlaps
from .outline import CardOutline, in_picture, order_corners
from .recognise import FACE_KINDS, CardReading, one_colour_middle

INK = 40.0            # 8-bit Lab units from the local background: a body's ink
BACKGROUND_STEP = 16  # the background is the median of cells this many pixels wide
INK_LONG_SIDE = 1280  # px: the copy ink is looked for in (bodies stay several pixels wide)
MIN_CONFIDENCE = 0.5  # a guess read less surely than this is no card
# ... and a head or a tail less surely than this: a piece of a body cut short by a
# neighbour's outline looks like a tail's tapered body
SURE_ONE_END = 0.9
SURE_UNKNOWN = 0.9    # an `unknown` read this surely is another game's card, not a face fitted badly
SHIFT = 0.12         # long sides a guess is also pushed each way along its axis
NEAREST = 3          # found cards whose size a guess takes
LEAST_BODY = 0.08    # of a card's area: less ink is no body ...
MOST_BODY = 0.7      # ... and more, for each card it runs through, is a sheet, not a body
WIDEST = 0.8         # of a card's short side: a patch wider than this is no body either
SHORTEST = 0.5       # of a card's long side: a shorter patch is a scrap of a body
MOST_CARDS = 2       # cards one patch of ink may run through (bodies touching end to end)
MOSTLY_BARE = 0.8    # share of a patch of ink where the empty table lies bare: the cloth's pattern


def ink_map(image: np.ndarray, picture: tuple[int, ...] | None = None) -> tuple[np.ndarray, float]:
    """Where the picture differs from its local background (table, or paper) by ink, in a
    copy at most `INK_LONG_SIDE` wide (of the whole `picture`, when the image is a part of
    one: see `find_cards`), and that copy's scale."""
    scale = min(1.0, INK_LONG_SIDE / max((picture or image.shape)[:2]))
    small = image if scale == 1.0 else cv2.resize(image, None, fx=scale, fy=scale,
                                                   interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    cells = cv2.resize(lab, None, fx=1 / BACKGROUND_STEP, fy=1 / BACKGROUND_STEP,
                       interpolation=cv2.INTER_AREA)
    background = cv2.resize(cv2.medianBlur(cells, 5), (lab.shape[1], lab.shape[0]),
                            interpolation=cv2.INTER_LINEAR)
    diff = cv2.absdiff(lab, background).astype(np.float32)
    # (the channels summed by OpenCV: numpy's sum over the last axis takes several times longer)
    squared = cv2.transform(cv2.multiply(diff, diff), np.ones((1, 3), np.float32))
    return squared > INK * INK, scale


def body_guesses(ink: np.ndarray, size_at: Callable[[np.ndarray], tuple[float, float]],
                 least_area: float = 0.0, bare: np.ndarray | None = None) -> list[list[CardOutline]]:
    """For each patch of ink shaped like one or two cards' bodies, the outlines it may mean
    (one list per card the patch runs through).  `size_at(point)`: the (long, short) sides
    a card has there; `bare` (the ink's shape): where the empty table lies bare
    (`cards_by_bodies`), a patch `MOSTLY_BARE` or more there is none."""
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    if bare is not None:
        # (a patch is dropped whole, never pared: what is left of a sheet may look like a body)
        bare_share = np.bincount(labels.ravel(), bare.ravel(), count) / np.maximum(stats[:, cv2.CC_STAT_AREA], 1)
    out = []
    for k in range(1, count):
        area = stats[k, cv2.CC_STAT_AREA]
        if area < least_area:
            continue   # (most patches are specks: spared the look-up of the size there)
        if bare is not None and bare_share[k] >= MOSTLY_BARE:
            continue   # the cloth's pattern, where the table was seen bare
        long_side, short_side = size_at(centroids[k])
        card_area = long_side * short_side
        if area < LEAST_BODY * card_area or area > MOST_CARDS * MOST_BODY * card_area:
            continue
        x, y, w, h = stats[k, :4]
        ys, xs = np.nonzero(labels[y:y + h, x:x + w] == k)
        points = np.stack([xs + x, ys + y], axis=1).astype(np.float32)
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(points)
        length, thickness = max(rw, rh), min(rw, rh)
        if thickness > WIDEST * short_side or length < SHORTEST * long_side:
            continue
        cards = int(round(length / long_side)) or 1
        if cards > MOST_CARDS:
            continue
        t = np.radians(angle if rw >= rh else angle + 90.0)
        u = np.array([np.cos(t), np.sin(t)])
        n = np.array([-u[1], u[0]])
        piece = length / cards
        # (a head's or a tail's body stops short of an edge; a patch cut by a neighbour's
        # outline is short of one too)
        short_by = (long_side - piece) / 2.0
        shifts = (0.0,) + ((-short_by, short_by) if short_by > 0.02 * long_side else ()) \
            + ((-SHIFT * long_side, SHIFT * long_side) if short_by < SHIFT * long_side else ())
        a, b = u * long_side / 2.0, n * short_side / 2.0
        for j in range(cards):
            centre = np.array([cx, cy]) + u * (j - (cards - 1) / 2.0) * piece
            out.append([CardOutline(order_corners(np.array([c - a - b, c + a - b, c + a + b, c - a + b])), 0.5)
                        for c in (centre + u * s for s in shifts)])
    return out


def cards_by_bodies(image: np.ndarray, readings: list[CardReading],
                    recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]],
                    deck: Deck, picture: tuple[int, ...] | None = None,
                    bare: np.ndarray | None = None) -> list[CardReading]:
    """`readings` with the cards read on bodies no sure reading explains added (in place of
    the unsure readings they overlap); `picture` as for `ink_map`; `bare`, when a game is
    watched, where the picture shows the empty table as it was seen bare (at any scale of
    the image): a patch of ink mostly there is the cloth's pattern, no body."""
    faces = [r for r in readings if r.kind in FACE_KINDS]
    if not faces:
        return readings
    centres = np.array([r.outline.centre for r in faces])
    sides = np.array([(r.outline.long_side, r.outline.short_side) for r in faces])

    def size_at(point: np.ndarray) -> tuple[float, float]:
        # perspective changes the cards' size across the picture: the nearest cards' size
        nearest = np.argsort(np.hypot(*(centres - point).T))[:NEAREST]
        return tuple(np.median(sides[nearest], axis=0))

    ink, scale = ink_map(image, picture)
    explained = np.zeros(ink.shape, np.uint8)
    for r in readings:
        if _gives_way(r):
            continue   # (such an outline may be a face's, fitted badly or overexposed)
        c = r.outline.centre
        cv2.fillPoly(explained, [np.int32(np.round((c + (r.outline.corners - c) * 1.1) * scale))], 1)
    ink &= explained == 0
    if bare is not None:
        bare = cv2.resize(np.asarray(bare, np.uint8), ink.shape[::-1], interpolation=cv2.INTER_NEAREST) > 0
    smallest = float(np.min(sides[:, 0] * sides[:, 1])) * scale * scale
    guesses = body_guesses(ink, lambda point: tuple(v * scale for v in size_at(point / scale)),
                           LEAST_BODY * smallest, bare)
    groups = [[o for o in (CardOutline(g.corners / scale, g.score) for g in options)
               if in_picture(o, image.shape)] for options in guesses]
    groups = [g for g in groups if g]
    if not groups:
        return readings
    read = {id(r.outline): r for r in recognise(image, [o for g in groups for o in g])}
    on_table = Counter(deck.identity(card_of(r)) for r in readings if card_of(r) is not None)
    known = list(readings)
    best = []
    for g in groups:
        rs = [read[id(o)] for o in g if id(o) in read and read[id(o)].kind in FACE_KINDS]
        rs = [r for r in rs if r.confidence >= (MIN_CONFIDENCE if r.kind == "middle" else SURE_ONE_END)]
        if rs:
            best.append(max(rs, key=lambda r: r.confidence))
    for r in sorted(best, key=lambda r: -r.confidence):
        there = [k for k in known if overlaps(r.outline, k)]
        if not all(map(_gives_way, there)):
            continue
        given_up = Counter(deck.identity(card_of(k)) for k in there if card_of(k) is not None)
        card = deck.identity(card_of(r))
        if on_table[card] - given_up[card] >= deck.count(card):
            continue
        known = [k for k in known if not any(k is t for t in there)] + [r]
        on_table += Counter({card: 1})
        on_table -= given_up
    return known


def _gives_way(reading: CardReading) -> bool:
    """Whether a reading yields its place to a face read on a body there: one read as no face
    (but surely so: another game's card, whose own art may look like a body), less surely than
    a guess must be, or as a middle of one colour (an outline fitted across part of a head
    reads so, and surely)."""
    unsure_unknown = reading.kind == "unknown" and reading.confidence < SURE_UNKNOWN
    return unsure_unknown or reading.confidence < MIN_CONFIDENCE or one_colour_middle(reading)
