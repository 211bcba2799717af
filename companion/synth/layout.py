"""Where things lie on the table, in millimetres: chains as people lay them, fans, piles, props.

A chain is laid card by card.  Each card is hinged on the inner corner of its
neighbour's connecting edge (the corner on the side it turns towards), so two
neighbours at an angle touch at one corner and never overlap, as flat cards on
a table must; then it slips a little along the edge and away by the gap.
Free space is kept in a coarse occupancy grid over the visible table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.game.cards import Card, Kind

from .props import Sprite


def _perp(d: np.ndarray) -> np.ndarray:
    return np.array([-d[1], d[0]])


@dataclass
class Pose:
    """A flat rectangle on the table.  `up` is the face's +y (top -> bottom) direction."""

    centre: np.ndarray
    up: np.ndarray
    w: float
    h: float

    @property
    def right(self) -> np.ndarray:     # the face's +x direction
        return np.array([self.up[1], -self.up[0]])

    def corners(self) -> np.ndarray:
        """Table corners in face order: top-left, top-right, bottom-right, bottom-left."""
        c, r, u = self.centre, self.right * self.w / 2, self.up * self.h / 2
        return np.array([c - r - u, c + r - u, c + r + u, c - r + u])

    def top(self) -> np.ndarray:
        return self.centre - self.up * self.h / 2

    def bottom(self) -> np.ndarray:
        return self.centre + self.up * self.h / 2

    def moved(self, shift: np.ndarray, turn: float = 0.0, about: np.ndarray | None = None) -> "Pose":
        c, s = np.cos(turn), np.sin(turn)
        R = np.array([[c, -s], [s, c]])
        about = self.centre if about is None else about
        return Pose(R @ (self.centre - about) + about + shift, R @ self.up, self.w, self.h)


@dataclass
class Item:
    """Anything placed: a Hisss card (face or back), another game's card, or a prop."""

    pose: Pose
    card: Card | None = None          # a Hisss face; None for a back or a prop
    what: str = "card"                # card | back | unknown | prop
    sprite: Sprite | None = None      # for props and other games' cards
    chain: int | None = None          # index of its chain in the truth, with `pos` in it
    pos: int | None = None
    complete: bool = False            # a collected (complete) snake near the edge
    z: float = 0.0
    shade: float = 1.0                # brightness of this card's tilt to the light
    lift: float = 0.0                 # mm above the table (a card in a hand): a softer, farther shadow

    def ends(self) -> list[np.ndarray]:
        """Connecting-edge midpoints in the order of the card's colours (contract order)."""
        if self.what != "card" or self.card is None:
            return []
        if self.card.kind is Kind.MIDDLE:
            return [self.pose.top(), self.pose.bottom()]
        return [self.pose.top()]


@dataclass
class ChainStyle:
    """How loosely one chain is laid."""

    max_angle: float        # radians between neighbours
    curve: float            # mean turn per card, radians
    gap: tuple[float, float]  # as a fraction of the card's short side
    lateral: float          # fraction of the short side


def place_chain_cards(cards: list[Card], w: float, h: float, style: ChainStyle, rng: np.random.Generator,
                      start: np.ndarray | None = None, heading: float = 0.0) -> list[Pose]:
    """Lay a chain from `start` along `heading` (radians); poses in chain order."""
    d = np.array([np.cos(heading), np.sin(heading)])
    p = np.zeros(2) if start is None else np.asarray(start, float)
    poses: list[Pose] = []
    out_mid = p
    for i, card in enumerate(cards):
        if i == 0:
            in_mid = p
        else:
            turn = float(np.clip(style.curve + rng.uniform(-0.6, 0.6) * style.max_angle, -style.max_angle, style.max_angle))
            gap = rng.uniform(*style.gap) * w
            slip = rng.uniform(-style.lateral, style.lateral) * w
            in_mid, d = hinge(out_mid, d, turn, w, gap, slip)
        centre = in_mid + d * h / 2
        out_mid = in_mid + d * h
        poses.append(Pose(centre, face_up_vector(card, i, len(cards), d), w, h))
    return poses


def hinge(out_mid: np.ndarray, d: np.ndarray, turn: float, w: float, gap: float, slip: float):
    """The next card's connecting-edge midpoint and direction, hinged on the inner corner."""
    n = _perp(d)
    side = 1.0 if turn >= 0 else -1.0
    corner = out_mid + side * n * w / 2 + n * slip + d * gap
    c, s = np.cos(turn), np.sin(turn)
    d2 = np.array([c * d[0] - s * d[1], s * d[0] + c * d[1]])
    return corner - side * _perp(d2) * w / 2, d2


def face_up_vector(card: Card, index: int, length: int, travel: np.ndarray) -> np.ndarray:
    """The face's +y on the table: a face's top edge is its first connecting edge.

    A middle and a chain's last card take their top edge towards the previous
    card, so +y runs with the chain; an end piece that starts a chain has its
    only connecting edge towards the next card, so +y runs against it.
    """
    if card.kind.is_end_piece and index == 0 and length > 1:
        return -travel
    return travel


def grow_rect(corners: np.ndarray, by: float) -> np.ndarray:
    """A rectangle (corners in face order) grown outwards by `by` on every side (shrunk if < 0)."""
    tl, tr, br, bl = corners
    u1 = (tr - tl) / max(1e-9, np.linalg.norm(tr - tl))
    u2 = (bl - tl) / max(1e-9, np.linalg.norm(bl - tl))
    return np.array([tl - by * (u1 + u2), tr + by * (u1 - u2), br + by * (u1 + u2), bl - by * (u1 - u2)])


def grow_rects(corners: np.ndarray, by: float) -> np.ndarray:
    """`grow_rect` of many rectangles at once (n x 4 x 2)."""
    tl, tr, bl = corners[:, 0], corners[:, 1], corners[:, 3]
    u1 = tr - tl
    u1 /= np.maximum(1e-9, np.sqrt((u1 * u1).sum(1, keepdims=True)))
    u2 = bl - tl
    u2 /= np.maximum(1e-9, np.sqrt((u2 * u2).sum(1, keepdims=True)))
    return corners + by * np.stack([-(u1 + u2), u1 - u2, u1 + u2, -(u1 - u2)], 1)


class Occupancy:
    """A coarse grid of the visible table: which cells are taken or off the picture."""

    def __init__(self, region: np.ndarray, cell: float, weight=None, accept=None):
        """`weight(points_mm)` makes random points follow it (say, picture area per mm²)
        instead of table area; `accept(polys)` must also hold for a chain or fan to fit."""
        self.cell = cell
        self.accept = accept
        lo, hi = region.min(0) - cell, region.max(0) + cell
        self.origin = lo
        shape = (int(np.ceil((hi[1] - lo[1]) / cell)) + 1, int(np.ceil((hi[0] - lo[0]) / cell)) + 1)
        self.taken = np.ones(shape, np.uint8)
        cv2.fillPoly(self.taken, [self._px(region)], 0, lineType=cv2.LINE_8, shift=4)
        # Keep two cells of margin inside the picture's edge: a card is tested by the
        # cells its shrunk outline covers, so it may reach about a cell beyond them.
        self.taken = cv2.dilate(self.taken, np.ones((5, 5), np.uint8))
        self.weights = None
        self._mass = None          # cumulative weights of the free cells, until a `take`
        if weight is not None:
            rows, cols = np.indices(self.taken.shape)
            centres = self.origin + (np.stack([cols, rows], -1).reshape(-1, 2) + 0.5) * cell
            self.weights = np.asarray(weight(centres), float).reshape(self.taken.shape)

    def _px(self, pts: np.ndarray) -> np.ndarray:
        return np.round((np.asarray(pts) - self.origin) / self.cell * 16).astype(np.int32)

    def _masks(self, polys, grow: float):
        """Each rectangle's cells, drawn only over the box the rectangles cover (a layout
        tries many spots: whole-grid masks were most of its cost).  Returns the masks
        and the box's slices of the grid, or (None, None) when they miss the grid."""
        pts = self._px(grow_rects(np.asarray(polys, float).reshape(-1, 4, 2), grow))
        allpts = pts.reshape(-1, 2)
        rows, cols = self.taken.shape
        x0, y0 = max(0, int(allpts[:, 0].min()) // 16 - 1), max(0, int(allpts[:, 1].min()) // 16 - 1)
        x1, y1 = min(cols, int(allpts[:, 0].max()) // 16 + 2), min(rows, int(allpts[:, 1].max()) // 16 + 2)
        if x1 <= x0 or y1 <= y0:
            return None, None
        shift = np.array([x0 * 16, y0 * 16], np.int32)
        masks = []
        for p in pts:
            m = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillPoly(m, [p - shift], 1, lineType=cv2.LINE_8, shift=4)
            masks.append(m)
        return masks, (slice(y0, y1), slice(x0, x1))

    def free(self, polys, shrink: float) -> bool:
        masks, box = self._masks(polys, -shrink)
        if masks is None:
            return True
        taken = self.taken[box]
        return not any(np.any(m & taken) for m in masks)

    def disjoint(self, polys, shrink: float) -> bool:
        """No two of these rectangles overlap (beyond `shrink` of touching)."""
        masks, _ = self._masks(polys, -shrink)
        if masks is None:
            return True
        seen = np.zeros_like(masks[0])
        for m in masks:
            if np.any(m & seen):
                return False
            seen |= m
        return True

    def take(self, polys, grow: float) -> None:
        masks, box = self._masks(polys, grow)
        if masks is not None:
            for m in masks:
                self.taken[box] |= m
        self._mass = None

    def random_point(self, rng: np.random.Generator) -> np.ndarray | None:
        if self.weights is not None:
            if self._mass is None:
                self._mass = np.cumsum(np.where(self.taken == 0, self.weights, 0.0).ravel())
            mass = self._mass
            if mass[-1] <= 0:
                return None
            r, c = np.unravel_index(int(np.searchsorted(mass, rng.uniform() * mass[-1], side="right")),
                                    self.taken.shape)
            return self.origin + (np.array([c, r]) + rng.uniform(0, 1, 2)) * self.cell
        free = np.argwhere(self.taken == 0)
        if len(free) == 0:
            return None
        r, c = free[rng.integers(len(free))]
        return self.origin + (np.array([c, r]) + rng.uniform(0, 1, 2)) * self.cell


def fit_chain(occ: Occupancy, cards: list[Card], w: float, h: float, style: ChainStyle,
              rng: np.random.Generator, tries: int = 40, near_edge: np.ndarray | None = None) -> list[Pose] | None:
    """Find a free spot for a whole chain; None when it does not fit."""
    for _ in range(tries):
        if near_edge is not None:
            start, heading = _edge_start(near_edge, w, h, rng)
        else:
            start = occ.random_point(rng)
            if start is None:
                return None
            heading = rng.uniform(-np.pi, np.pi)
        poses = place_chain_cards(cards, w, h, style, rng, start, heading)
        if near_edge is None:
            # start the chain around its middle rather than at one end
            mid = np.mean([p.centre for p in poses], 0)
            poses = [p.moved(start - mid) for p in poses]
        polys = [p.corners() for p in poses]
        if (occ.free(polys, shrink=0.12 * w) and occ.disjoint(polys, shrink=0.12 * w)
                and (occ.accept is None or occ.accept(polys))):
            occ.take(polys, grow=0.35 * w)
            return poses
    return None


def _edge_start(region: np.ndarray, w: float, h: float, rng: np.random.Generator):
    k = int(rng.integers(len(region)))
    a, b = region[k], region[(k + 1) % len(region)]
    along = (b - a) / max(1e-9, np.linalg.norm(b - a))
    inward = _perp(along)
    if np.dot(region.mean(0) - a, inward) < 0:
        inward = -inward
    start = a + (b - a) * rng.uniform(0.05, 0.6) + inward * (w * rng.uniform(0.7, 1.3))
    # lay it as a row along the edge: the chain runs along `along`, cards side by side
    return start, float(np.arctan2(along[1], along[0]))


def fit_fan(occ: Occupancy, n: int, w: float, h: float, rng: np.random.Generator, tries: int = 30) -> list[Pose] | None:
    """A hand-spread fan of face-down cards around a pivot near their bottoms."""
    step = np.radians(rng.uniform(6, 14))
    for _ in range(tries):
        pivot = occ.random_point(rng)
        if pivot is None:
            return None
        base = rng.uniform(-np.pi, np.pi)
        poses = []
        for k in range(n):
            a = base + (k - (n - 1) / 2) * step
            up = np.array([-np.sin(a), np.cos(a)])
            poses.append(Pose(pivot - up * h * 0.35, up, w, h))
        polys = [p.corners() for p in poses]
        if occ.free(polys, shrink=0.05 * w) and (occ.accept is None or occ.accept(polys)):
            occ.take(polys, grow=0.3 * w)
            return poses
    return None


def fit_thing(occ: Occupancy, size: tuple[float, float], rng: np.random.Generator, tries: int = 30,
              grow: float = 10.0) -> Pose | None:
    for _ in range(tries):
        c = occ.random_point(rng)
        if c is None:
            return None
        a = rng.uniform(-np.pi, np.pi)
        pose = Pose(c, np.array([-np.sin(a), np.cos(a)]), size[0], size[1])
        if occ.free([pose.corners()], shrink=0.0):
            occ.take([pose.corners()], grow=grow)
            return pose
    return None


@dataclass
class Layout:
    items: list[Item] = field(default_factory=list)
    dropped: list[list[str]] = field(default_factory=list)   # chains that did not fit the picture
