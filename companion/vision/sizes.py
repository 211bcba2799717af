"""How large a card looks at each place of the picture.

Every card of the deck has the same size, but a camera looking at the table
at an angle sees near cards larger than far ones: under a 45-degree view one
row's cards differ threefold.  For points of a plane the inverse depth is an
affine function of the image coordinates, and apparent size goes with the
inverse depth, so the size of a card is (up to foreshortening) a plane over
the picture, fitted to the cards found alone.
"""
from __future__ import annotations

import itertools

import numpy as np

from .outline import CardOutline

MIN_CARDS_FOR_PLANE = 4   # fewer cards give one size for the whole picture
OUTLIER = 0.2             # a card off the plane by more than this share does not support it
MAX_TRIES = 220           # triples of cards tried as the plane's support
RANGE = (0.5, 2.0)        # the plane is trusted only this far from the typical size


class CardSizes:
    """(short, long) side in pixels of a card lying at any point of the picture."""

    def __init__(self, short: float, long_: float, plane: np.ndarray | None = None):
        self.short, self.long = float(short), float(long_)
        self._plane = plane   # (a, b, c): size factor a*x + b*y + c, 1 for the typical card

    @classmethod
    def from_cards(cls, quads: list[np.ndarray]) -> "CardSizes":
        """Sizes learnt from cards found alone (nothing known without any)."""
        if not quads:
            return cls(0.0, 0.0)
        outlines = [CardOutline(q) for q in quads]
        sides = np.array([(o.short_side, o.long_side) for o in outlines])
        centres = [o.centre for o in outlines]
        short, long_ = np.median(sides, axis=0)
        if len(quads) < MIN_CARDS_FOR_PLANE:
            return cls(short, long_)
        # the size factor of each card against the typical one, as a plane over the picture
        factor = np.sqrt(sides[:, 0] * sides[:, 1] / (short * long_))
        plane = _consensus_plane(np.array(centres), factor)
        return cls(short, long_, plane)

    def at_most(self, aspect: float) -> "CardSizes":
        """The same sizes, the long side at most `aspect` times the short one."""
        return CardSizes(self.short, min(self.long, aspect * self.short), self._plane)

    def __bool__(self) -> bool:
        return self.short > 0

    def at(self, point) -> tuple[float, float]:
        """(short, long) of a card centred near `point` (x, y)."""
        if self._plane is None:
            return self.short, self.long
        f = float(np.clip(self._plane[0] * point[0] + self._plane[1] * point[1] + self._plane[2], *RANGE))
        return self.short * f, self.long * f


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
