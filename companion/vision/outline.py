"""A found card's outline: four corners in image pixels, and geometry on it."""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


def order_corners(quad: np.ndarray) -> np.ndarray:
    """Corners clockwise (in image coordinates, y down), starting at the top-left-most."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    c = q.mean(axis=0)
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(ang)]               # clockwise on screen (y points down)
    start = int(np.argmin(q.sum(axis=1)))
    return np.roll(q, -start, axis=0)


@dataclass(frozen=True)
class CardOutline:
    corners: np.ndarray      # (4, 2) float, clockwise in image pixels
    score: float = 1.0       # how card-like the finder judged the shape (0..1)

    @property
    def edges(self) -> list[tuple[np.ndarray, np.ndarray]]:
        c = self.corners
        return [(c[i], c[(i + 1) % 4]) for i in range(4)]

    @property
    def edge_midpoints(self) -> np.ndarray:
        c = self.corners
        return (c + np.roll(c, -1, axis=0)) / 2.0

    @property
    def edge_lengths(self) -> np.ndarray:
        c = self.corners
        return np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)

    @property
    def centre(self) -> np.ndarray:
        return self.corners.mean(axis=0)

    @property
    def short_side(self) -> float:
        e = self.edge_lengths
        return float(min((e[0] + e[2]) / 2, (e[1] + e[3]) / 2))

    @property
    def long_side(self) -> float:
        e = self.edge_lengths
        return float(max((e[0] + e[2]) / 2, (e[1] + e[3]) / 2))

    @property
    def area(self) -> float:
        return float(abs(cv2.contourArea(self.corners.astype(np.float32))))

    def scaled(self, factor: float) -> "CardOutline":
        return CardOutline(self.corners * factor, self.score)


# The recogniser reads a face only from an outline within a few hundredths of its sides, and
# an outline guessed from a neighbour, or fitted to a ragged region, is often further off.
NUDGE = 0.05   # of its sides: how far an outline read as no face is moved each way to be read again


def nudged(outline: CardOutline, share: float = NUDGE) -> list[CardOutline]:
    """The outline moved by `share` of its sides along and across itself: eight neighbours."""
    c = outline.corners
    along, across = c[1] - c[0], c[3] - c[0]
    return [CardOutline(c + share * (i * along + j * across), outline.score)
            for i in (-1, 0, 1) for j in (-1, 0, 1) if i or j]


def in_picture(outline: CardOutline, shape: tuple[int, ...]) -> bool:
    """Whether every corner lies inside a picture of this shape (rows, columns, ...)."""
    c = outline.corners
    return c.min() >= 0 and c[:, 0].max() < shape[1] and c[:, 1].max() < shape[0]


def polygon_iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, area_a, area_b = _overlap(a, b)
    union = area_a + area_b - inter
    return float(inter / union) if inter > 0 and union > 0 else 0.0


def share_inside(a: np.ndarray, b: np.ndarray) -> float:
    """The share of polygon `a`'s area that lies inside polygon `b` (both convex)."""
    inter, area_a, _ = _overlap(a, b)
    return float(inter / area_a) if inter > 0 and area_a > 0 else 0.0


def _overlap(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """The area two convex polygons share, and each one's area."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    inter, _ = cv2.intersectConvexConvex(a32, b32)
    return float(inter), abs(cv2.contourArea(a32)), abs(cv2.contourArea(b32))


def match_quads(found: list[np.ndarray], truth: list[np.ndarray], min_iou: float = 0.5) -> dict[int, int]:
    """found index -> truth index, pairing the most overlapping outlines first."""
    pairs = []
    for i, f in enumerate(found):
        fc = f.mean(axis=0)
        for j, t in enumerate(truth):
            if np.linalg.norm(t.mean(axis=0) - fc) > np.linalg.norm(t[0] - t[2]):
                continue
            iou = polygon_iou(f, t)
            if iou >= min_iou:
                pairs.append((iou, i, j))
    pairs.sort(reverse=True)
    out: dict[int, int] = {}
    used: set[int] = set()
    for _, i, j in pairs:
        if i in out or j in used:
            continue
        out[i] = j
        used.add(j)
    return out
