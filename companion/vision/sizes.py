"""How large a card looks at each place of the picture.

Every card of the deck has the same size, but a camera looking at the table
at an angle sees near cards larger than far ones: under a 45-degree view one
row's cards differ threefold.  For points of a plane the inverse depth is an
affine function of the image coordinates, and apparent size goes with the
inverse depth, so the size of a card is (up to foreshortening) a plane over
the picture, fitted to the cards found alone.

Not every card found alone may teach it (`card_sizes`): not a piece of a
snake's body along a row, nor two nearly square cards end to end
(`PAIR_ASPECT`, `one_card`).
"""
from __future__ import annotations

import itertools

import cv2
import numpy as np

from .outline import CardOutline
from .quads import apparent_aspect

MIN_CARDS_FOR_PLANE = 4   # fewer cards give one size for the whole picture
OUTLIER = 0.2             # a card off the plane by more than this share does not support it
MAX_TRIES = 220           # triples of cards tried as the plane's support
RANGE = (0.5, 2.0)        # the plane is trusted only this far from the typical size
PAIR_ASPECT = 1.75        # a quad this much longer than wide may be two square cards end to end
PAIR_AREA = 1.6           # ... and is, with this many times the area of the other cards where it lies
PIECE_DEPTH = 0.8         # a quad whose centre lies this many of its widths inside a row is a piece of a card
PIECES_NARROWER = 1.6     # rows this many times wider than the cards found alone hold no such card
SPREAD_MOST = float(np.log(2.0))   # one size's tolerance widens at most to cards half its area


class CardSizes:
    """(short, long) side in pixels of a card lying at any point of the picture."""

    def __init__(self, short: float, long_: float, plane: np.ndarray | None = None, spread: float = 0.0):
        self.short, self.long = float(short), float(long_)
        self._plane = plane   # (a, b, c): size factor a*x + b*y + c, 1 for the typical card
        # without a plane (fewer than MIN_CARDS_FOR_PLANE cards, or none agreed), how far below
        # it the smallest card it was learnt from lies (log of its area over the typical one's,
        # at most SPREAD_MOST): under a slanted view, a far card found alone is as small as the
        # far cards of a row are, however large the median card is.  (Only below: a card found
        # alone larger than the rest may be a pair, a phone or another game's card, and must
        # excuse no other.  Kept by `at_most` as measured: cards seen squeezed are rare.)
        self.spread = float(spread)

    @classmethod
    def from_cards(cls, quads: list[np.ndarray]) -> "CardSizes":
        """Sizes learnt from cards found alone (nothing known without any)."""
        if not quads:
            return cls(0.0, 0.0)
        outlines = [CardOutline(q) for q in quads]
        sides = np.array([(o.short_side, o.long_side) for o in outlines])
        centres = [o.centre for o in outlines]
        short, long_ = np.median(sides, axis=0)
        area = sides[:, 0] * sides[:, 1] / (short * long_)    # each card's against the typical one
        spread = min(SPREAD_MOST, float(-np.log(area.min())))
        if len(quads) < MIN_CARDS_FOR_PLANE:
            return cls(short, long_, spread=spread)
        # the size factor of each card against the typical one, as a plane over the picture
        plane = _consensus_plane(np.array(centres), np.sqrt(area))
        return cls(short, long_, plane, spread=0.0 if plane is not None else spread)

    def at_most(self, aspect: float) -> "CardSizes":
        """The same sizes, the long side at most `aspect` times the short one."""
        return CardSizes(self.short, min(self.long, aspect * self.short), self._plane, self.spread)

    def __bool__(self) -> bool:
        return self.short > 0

    def at(self, point) -> tuple[float, float]:
        """(short, long) of a card centred near `point` (x, y)."""
        if self._plane is None:
            return self.short, self.long
        f = float(np.clip(self._plane[0] * point[0] + self._plane[1] * point[1] + self._plane[2], *RANGE))
        return self.short * f, self.long * f

    def area_at(self, point) -> float:
        """The area of a card centred near `point` (x, y)."""
        short, long_ = self.at(point)
        return short * long_


def _consensus_plane(centres: np.ndarray, factor: np.ndarray) -> np.ndarray | None:
    """The plane through the size factors most cards agree with (None without a clear majority).

    Not every region found alone is a card: a phone, a pile of backs or two
    cards end to end pass for one, and a least-squares plane would tilt
    towards them.  Every triple of cards (a fixed subset of them when there
    are many) proposes a plane; the one most cards lie close to wins and is
    refitted to those cards.
    """
    n = len(factor)
    design = np.column_stack([centres, np.ones(n)])
    triples = np.array(list(itertools.islice(itertools.combinations(range(n), 3), MAX_TRIES)))
    systems = design[triples]                                        # (T, 3, 3)
    # three cards in a line say nothing across it
    scale = max(1.0, float(np.abs(centres).max())) ** 2
    solvable = np.abs(np.linalg.det(systems)) >= 1e-6 * scale
    if not solvable.any():
        return None
    planes = np.linalg.solve(systems[solvable], factor[triples[solvable]][..., None])[..., 0]   # (T, 3)
    support = np.abs(planes @ design.T - factor) <= OUTLIER * factor   # (T, n)
    best_support = support[int(np.argmax(support.sum(axis=1)))]
    if best_support.sum() < max(MIN_CARDS_FOR_PLANE, 0.6 * n):
        return None
    plane = np.linalg.lstsq(design[best_support], factor[best_support], rcond=None)[0]
    # a plane has three degrees of freedom to one size's one: with few cards it can
    # explain a double card as perspective, so it must fit clearly more cards closely
    # than one size does (at the support's tolerance, the cards of a view that shrinks
    # them by a third across the table all pass for one size)
    fitted = design @ plane
    close = 0.5 * OUTLIER * factor
    if (np.abs(fitted - factor) <= close).sum() < (np.abs(factor - 1.0) <= close).sum() + max(2, 0.2 * n):
        return None
    # a table seen at up to 45 degrees: near cards at most a few times the far ones' size
    seen = fitted[best_support]
    if seen.min() < RANGE[0] or seen.max() > RANGE[1]:
        return None
    return plane


def card_sizes(found: list[np.ndarray], rows: list[np.ndarray],
               aspect_lo: float, aspect_hi: float) -> tuple[list[np.ndarray], CardSizes]:
    """The cards found alone that tell a card's size, and that size.

    On a table of the paper's colour, the colour maps see only the snakes'
    bodies, and a piece of body between two bends is a fine small
    quadrilateral: learnt from, it halves every card, and no row is cut
    right.  The edge map, or better the learnt map, holds those rows (`rows`,
    its regions of several cards): a piece lies along the middle of one
    (`_part_of_strip`), and when the rows are far wider than everything
    found alone, all of it was pieces; a row's width is then a card's short
    side (its long side unknown: the middle of the deck's proportions).
    Rows are weighed by their area: a map also holds fragments narrower than
    any card (a stripe of the cloth, a card's corner), but little of it.
    The few cards found alone may all be seen squeezed across their width,
    and look longer than any card of the deck; a card turned the other way
    is not: the long side is at most `aspect_hi` times the short.
    """
    alone = _without_doubles([q for q in found if not _part_of_strip(q, rows)])
    sizes = CardSizes.from_cards(alone)
    if len(rows) >= 2:
        width = _weighted_median([_strip_width(c) for c in rows], [cv2.contourArea(c) for c in rows])
        if not sizes or width > PIECES_NARROWER * sizes.short:
            return [], CardSizes(width, 0.5 * (aspect_lo + aspect_hi) * width)
    return alone, sizes.at_most(aspect_hi)


def _weighted_median(values: list[float], weights: list[float]) -> float:
    """The value below which half the total weight lies."""
    order = np.argsort(values)
    cumulative = np.cumsum(np.asarray(weights, float)[order])
    return float(np.asarray(values, float)[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


def _without_doubles(quads: list[np.ndarray]) -> list[np.ndarray]:
    """The cards found alone less those that are two cards end to end.

    Two nearly square cards touching end to end make a fine card of twice
    the length, found alone as readily as a real one; learnt from, a few of
    them make every card look larger than it is, and rows are then cut at
    the wrong lengths.  A quad is two cards when it is long (`PAIR_ASPECT`)
    and has about twice the area the other cards have where it lies.
    """
    long_ones = [apparent_aspect(q) > PAIR_ASPECT for q in quads]
    others = [q for q, long_one in zip(quads, long_ones) if not long_one]
    if len(others) < 3 or len(others) == len(quads):
        return quads
    sizes = CardSizes.from_cards(others)
    return others + [q for q, long_one in zip(quads, long_ones) if long_one and one_card(q, sizes)]


def _part_of_strip(quad: np.ndarray, regions: list[np.ndarray]) -> bool:
    """Whether a quad lies along the middle of a region far wider than itself.

    A piece of a snake's body between two bends is a fine quadrilateral, and
    on a table of the paper's colour it stands out alone; but it runs down the
    middle of its row of cards, which the edge map holds as one region: its
    centre lies deeper inside that region than the piece is wide.  A card in
    a row lies no deeper than half its own width.
    """
    outline = CardOutline(quad)
    x, y = (float(v) for v in outline.centre)
    for c in regions:
        bx, by, bw, bh = cv2.boundingRect(c)
        if bx <= x <= bx + bw and by <= y <= by + bh and \
                cv2.pointPolygonTest(c, (x, y), True) > PIECE_DEPTH * outline.short_side:
            return True
    return False


def _strip_width(contour: np.ndarray) -> float:
    """Twice the deepest point inside a region: the width of a row of cards."""
    x, y, w, h = cv2.boundingRect(contour)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(mask, [contour], -1, 255, -1, offset=(1 - x, 1 - y))
    return 2.0 * float(cv2.distanceTransform(mask, cv2.DIST_L2, 3).max())


def card_size_about(sizes: CardSizes, contour: np.ndarray) -> tuple[float, float]:
    """(short, long) of a card where the region lies (at the centre of its bounding box)."""
    x, y, w, h = cv2.boundingRect(contour)
    return sizes.at((x + w / 2, y + h / 2))


def card_area_about(sizes: CardSizes, contour: np.ndarray) -> float:
    """The area a card has where the region lies."""
    short, long_ = card_size_about(sizes, contour)
    return short * long_


def one_card(quad: np.ndarray, sizes: CardSizes | None) -> bool:
    """Whether a quad has less than `PAIR_AREA` cards' area where it lies, too little for two
    (False when the cards' size is not known)."""
    return sizes is not None and \
        abs(cv2.contourArea(quad.astype(np.float32))) < PAIR_AREA * sizes.area_at(quad.mean(axis=0))
