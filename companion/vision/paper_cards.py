"""Cards read off the learnt card-or-table map (`paper`): around its cores, and from its regions.

The map is made on a coarse copy of the picture: its regions are the cards'
places, but their outlines are ragged and no polygon fits them.  A card is
the rectangle of the deck's proportions about a core or a region, its sides
moved onto the picture's own edges nearby.
"""
from __future__ import annotations

import cv2
import numpy as np

from .outline import CardOutline, order_corners
from .paper import CORE_DEPTH, sides_on_map
from .quads import card_shaped_area, shortest_side
from .refine import refine_corners

PAPER_FILL = 0.78          # a region of the learnt map filling this much of its least rectangle is a card
PAPER_ASPECT_SLACK = 1.3   # ... whose proportions are the deck's give or take this factor (the view squeezes)
PAPER_SNAP = 0.12          # ... its sides moved onto edges this many of its widths away at most
PAPER_TRUST = 0.55         # ... fitting below every polygon: a loose fit of a coarse map
CORE_FILL = 0.6            # a core filling this much of its least rectangle is one card's
CORE_LEAST_PIXELS = 6      # coarse pixels: a smaller core is a speck
CORE_LEVELS = (0.5, 0.65, 0.8)  # P(core) a core is cut at; a region of no card's shape is cut higher
CORE_PAPER_STEP = 0.4      # P(card) inside a card grown from a core, less P(card) around it: a card
                           # between two others in a row has paper beside it on two sides
CORE_TRUST = 0.9           # ... a card fitting below a clean polygon, above a guessed cut of a row


def paper_card(gray: np.ndarray, rect, fill: float, aspect_lo: float,
               aspect_hi: float) -> tuple[np.ndarray | None, float]:
    """(quad, score) of a card from a region of the learnt map, or (None, 0).

    The learnt map is made on a coarse copy: its regions are the cards'
    places but their outlines are ragged, and no polygon fits them.  A region
    that fills its least rectangle as a card does is that card; its sides
    are then moved onto the picture's own edges nearby.
    """
    card = _snapped_rect(gray, rect, aspect_lo, aspect_hi) if fill >= PAPER_FILL else None
    return (None, 0.0) if card is None else (card, PAPER_TRUST * fill)


def paper_polygon(gray: np.ndarray, quad: np.ndarray, area: float, aspect_lo: float,
                  aspect_hi: float) -> tuple[np.ndarray | None, float]:
    """(quad, score) of a card from a region of a coarse map (`area` px) whose polygon `quad`
    failed to fit its outline closely, or (None, 0).

    A card seen at a slant is a parallelogram that its least rectangle holds loosely
    (`paper_card` refuses it), and the map's blur rounds its corners and may bite into its
    sides where the card looks like the table (a snake's yellow body over a yellow stripe
    the empty table showed there).  A polygon of a card's shape that the region fills is
    that card; its sides are then moved onto the picture's own edges nearby."""
    quad_area = card_shaped_area(quad, aspect_lo, aspect_hi)
    if quad_area == 0.0 or area < PAPER_FILL * quad_area:
        return None, 0.0
    fill = area / quad_area
    snap = max(3, int(PAPER_SNAP * shortest_side(quad)))
    return refine_corners(gray, CardOutline(order_corners(quad)), snap).corners, PAPER_TRUST * min(1.0, fill)


def core_cards(card: np.ndarray, core: np.ndarray, gray: np.ndarray, aspect_lo: float,
               aspect_hi: float, p: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """(quad, score) of a card around each core of the learnt map (coarse, P 0-1; `p`, its
    P(card) at the searched size, 0-255).

    A core is a card less a band a fifth of its width wide (`paper.CORE_DEPTH`
    of its half-width): its least rectangle grown by that band is about the
    card, whose sides are moved onto where P(card) falls (`paper.sides_on_map`)
    and then onto the picture's own edges nearby.  Where
    cards touch in a row, the map may not fall below one half between their
    cores, and one region holds several: it is looked at again at the higher
    levels (`CORE_LEVELS`), where the dips between the cards part it.
    """
    blurred = cv2.blur(core, (3, 3))
    fy, fx = gray.shape[0] / core.shape[0], gray.shape[1] / core.shape[1]
    bands = CORE_DEPTH / (1.0 - CORE_DEPTH)   # the two bands' width, in core widths
    out = []

    def rect_of(region: np.ndarray):
        """The least rectangle of a core's pixels (full-size px), and the share of it they fill."""
        ys, xs = np.nonzero(region)
        if len(xs) < CORE_LEAST_PIXELS:
            return None
        pts = (np.column_stack([xs, ys]).astype(np.float32) + 0.5) * np.float32([fx, fy])
        centre, (w, h), angle = cv2.minAreaRect(pts)
        return centre, (w + fx, h + fy), angle, len(pts) * fx * fy / max(1.0, (w + fx) * (h + fy))

    def grown(rect, pad: float = 0.0) -> np.ndarray | None:
        centre, (w, h), angle, fill = rect
        w, h = w + pad, h + pad
        if fill < CORE_FILL:
            return None
        grow = bands * min(w, h)
        return _snapped_rect(gray, sides_on_map(p, (centre, (w + grow, h + grow), angle)), aspect_lo, aspect_hi)

    def cards_in(region: np.ndarray, level: int) -> None:
        rect = rect_of(region)
        card = grown(rect) if rect else None
        if card is not None:
            out.append((card, CORE_TRUST * rect[3]))
            return
        if rect is None or level + 1 == len(CORE_LEVELS):
            return
        n, seeds = cv2.connectedComponents((region & (blurred > CORE_LEVELS[level + 1])).astype(np.uint8))
        if n <= 2:   # one seed or none: nothing parts the region
            if n == 2:
                cards_in(seeds == 1, level + 1)
            return
        # Cut higher, each core is narrower than one cut at this level: across the row (where
        # no neighbour joins it) the region shared among the seeds, each pixel to the nearest,
        # still shows the width at this level, and the seed is grown by what it lost there.
        _, nearest = cv2.distanceTransformWithLabels((seeds == 0).astype(np.uint8), cv2.DIST_L2, 3,
                                                     labelType=cv2.DIST_LABEL_CCOMP)
        for k in range(1, n):
            seed = seeds == k
            part, own = rect_of(region & (nearest == nearest[seed][0])), rect_of(seed)
            if part is None or own is None:
                continue
            card = grown(own, max(0.0, min(part[1]) - min(own[1])))
            if card is not None:
                out.append((card, CORE_TRUST * own[3]))
            else:
                cards_in(seed, level + 1)

    n, labels, stats, _ = cv2.connectedComponentsWithStats((blurred > CORE_LEVELS[0]).astype(np.uint8))
    for k in range(1, n):
        if stats[k, cv2.CC_STAT_AREA] >= CORE_LEAST_PIXELS:
            cards_in(labels == k, 0)
    return out


def _snapped_rect(gray: np.ndarray, rect, aspect_lo: float, aspect_hi: float) -> np.ndarray | None:
    """The corners of a rotated rectangle of the deck's proportions (give or take what the view
    squeezes), its sides moved onto the picture's own edges nearby; None for other proportions."""
    (_, _), (w, h), _ = rect
    short = min(w, h)
    if not aspect_lo / PAPER_ASPECT_SLACK <= max(w, h) / max(1.0, short) <= aspect_hi * PAPER_ASPECT_SLACK:
        return None
    box = CardOutline(order_corners(cv2.boxPoints(rect).astype(np.float64)))
    return refine_corners(gray, box, max(3, int(PAPER_SNAP * short))).corners


def paper_step(p: np.ndarray, quad: np.ndarray) -> float:
    """Mean P(card) (0-255 map) a little inside the quad less a little outside it, 0-1."""
    margin = 8
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - margin, 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + margin, (p.shape[1] - 1, p.shape[0] - 1))
    crop = p[y0:y1 + 1, x0:x1 + 1]
    inside = np.zeros(crop.shape, np.uint8)
    cv2.fillPoly(inside, [np.int32(np.round(quad - (x0, y0)))], 1)
    within = cv2.erode(inside, np.ones((5, 5), np.uint8)) > 0
    ring = (cv2.dilate(inside, np.ones((9, 9), np.uint8)) > 0) & (inside == 0)
    if not within.any() or not ring.any():
        return 0.0
    return float(crop[within].mean() - crop[ring].mean()) / 255.0
