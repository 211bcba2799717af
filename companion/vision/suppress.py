"""Which of the overlapping candidates are the cards."""
from __future__ import annotations

import cv2
import numpy as np

from .outline import polygon_iou
from .quads import apparent_aspect, holds_centre, lies_within
from .sizes import PAIR_ASPECT, CardSizes, one_card

CONTAINER_SCORE = 0.8      # a candidate fitting this well replaces the parts of it found as cards
SIZE_TOLERANCE = 0.3       # log of area: a card within this far of the size where it lies is not doubted


def suppress(cands: list[tuple[np.ndarray, float]]) -> list[tuple[np.ndarray, float]]:
    """Keep the best-fitting of overlapping candidates.

    One exception: a card-shaped candidate that fits well replaces the smaller
    ones it contains, however well they fit, since a part of a card (its paper
    beside the body) is a clean quadrilateral too, but a card never lies within
    another card.
    """
    order = sorted(cands, key=lambda qs: (-round(qs[1], 2), -abs(cv2.contourArea(qs[0].astype(np.float32)))))
    kept: list[tuple[np.ndarray, float]] = []
    boxes: list[tuple[float, float, float, float]] = []
    for quad, score in order:
        x0, y0 = quad.min(axis=0)
        x1, y1 = quad.max(axis=0)
        clashes = [k for k, ((kq, _), (a0, b0, a1, b1)) in enumerate(zip(kept, boxes))
                   if not (x0 > a1 or a0 > x1 or y0 > b1 or b0 > y1)
                   and (polygon_iou(quad, kq) > 0.2 or holds_centre(kq, quad) or holds_centre(quad, kq))]
        if clashes and score >= CONTAINER_SCORE and apparent_aspect(quad) <= PAIR_ASPECT:
            area = abs(cv2.contourArea(quad.astype(np.float32)))
            if all(holds_centre(quad, kept[k][0]) and lies_within(kept[k][0], quad)
                   and abs(cv2.contourArea(kept[k][0].astype(np.float32))) < 0.7 * area for k in clashes):
                for k in sorted(clashes, reverse=True):
                    del kept[k], boxes[k]
                clashes = []
        if not clashes:
            kept.append((quad, score))
            boxes.append((x0, y0, x1, y1))
    return kept


def size_prior(cands: list[tuple[np.ndarray, float]],
               sizes: CardSizes | None = None) -> list[tuple[np.ndarray, float]]:
    """Lower the score of candidates much smaller or larger than a card where they lie.

    Every card of the deck has the same size, so a quad covering a part of a
    card (its paper beside the body, say) is far smaller than its neighbours;
    perspective changes sizes too, hence the tolerance of about a third.  The
    card's size comes from `sizes` when given (learnt from whole regions that
    were cards by themselves): cutting touching cards apart can leave many
    small pieces, which must not set the size.  A size with no plane over the
    picture tolerates candidates as much smaller than it as the smallest card
    it was learnt from (`CardSizes.spread`): under a slanted view, the far
    cards of a row are as small as the far card found alone, not as the median
    one.  Without `sizes`, the median candidate is the typical card.
    """
    if len(cands) < 3:
        return cands
    areas = np.array([abs(cv2.contourArea(q.astype(np.float32))) for q, _ in cands])
    below = SIZE_TOLERANCE
    if sizes:
        expected = np.array([sizes.area_at(q.mean(axis=0)) for q, _ in cands])
        below = max(below, sizes.spread)
    else:
        expected = np.full(len(cands), float(np.median(areas)))
    out = []
    for (q, score), area, typical in zip(cands, areas, expected):
        off = np.log(max(area, 1e-6) / typical)
        beyond = max(0.0, -off - below, off - SIZE_TOLERANCE)
        out.append((q, score * float(np.clip(1.0 - beyond, 0.3, 1.0))))
    return out


def without_split_pairs(kept: list[tuple[np.ndarray, float]], pieces: list[np.ndarray],
                        sizes: CardSizes | None) -> list[tuple[np.ndarray, float]]:
    """`kept` less each long quad (`PAIR_ASPECT`) a piece cut from a region lies in: a region
    that splits into cards is not one long card.  Unless it is no pair by its area where it
    lies (`one_card`): a card seen at a slant across its width looks as long."""
    return [(q, s) for q, s in kept if apparent_aspect(q) <= PAIR_ASPECT or one_card(q, sizes)
            or not any(holds_centre(q, p) for p in pieces)]


def overlaps(quad: np.ndarray, found: list[tuple[np.ndarray, float]]) -> bool:
    """Whether a quad clashes with any found card as `suppress` judges a clash (overlap above
    0.2, or either holding the other's centre)."""
    return any(polygon_iou(quad, f) > 0.2 or holds_centre(f, quad) or holds_centre(quad, f) for f, _ in found)
