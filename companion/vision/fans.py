"""The top card of a fan of face-down cards, where the finder outlined the whole fan.

Players spread the draw pile into a fan.  Its cards are alike and overlap, so
the finder sees one region, and the quad it fits to that region is larger
than a card and lies across several of them; read, it is a back (or, as
often, no card at all), but its outline is nobody's.  Only the card on top
lies whole: its sides are edges, against the table or where the borders of
the cards beneath stop at it,
while a card-sized rectangle anywhere else in the fan has a side or two
across some card's plain face.  So the rectangle of the size the face cards
around show whose sides lie most on edges of their own direction is the top
card.  A back outlined smaller than a card (a part of the fan, or the frame
printed inside the top card's edge) is searched about as well.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

import cv2
import numpy as np

from .refine import refine_corners
from .outline import CardOutline, order_corners, polygon_iou
from .quads import signed_inside
from .recognise import CardReading

FAN_AREA = 1.0        # a back outline this many cards large is a fan's (or a misfit of one)
UNREAD_AREA = 0.5     # an outline read as no card this many cards large may be a misfit of a fan
SEARCHED_AREA = 1.3   # cards: a back outline smaller than a fan's is searched as this much about it
NEIGHBOURS = 3        # face cards nearest the back whose size a card there has
COARSE_TURN = 6.0     # degrees between the rectangles first tried
GRID = 8              # rectangle centres tried across the region, per card short side
KEPT = 6              # the best of those tried again, finer
FINE_TURN = 3.0       # degrees either way then
SIZES = (0.85, 0.92, 1.0, 1.08, 1.16)  # and sizes, against the cards around
NESTED = (1.04, 1.08, 1.12, 1.16, 1.2, 1.25, 1.3)  # larger rectangles about the best, tried in turn
NESTED_SUPPORT = 0.8  # of the best's support, what a larger one about it must keep to be the card
SAMPLES = 12          # places along each side where it is looked for
REACH = 2             # pixels either side of a side within which its edge may lie
SAME = 0.85           # overlap with the finder's outline at which the top card is that outline
ON_EDGE = 0.7         # the least share of its sides' length the top card shows edges along
APART = 0.2           # overlap with a card read already under which a top card found is another


def top_cards_of_fans(image: np.ndarray, readings: list[CardReading], unread: Sequence[CardOutline] = (),
                      recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]] | None = None
                      ) -> list[CardReading]:
    """`readings`, each back given its fan's top card's outline where one stands out around it.

    `unread`: the finder's outlines that were read as no card, with `recognise` (the
    analyser's outlines -> readings).  A fit across a whole fan is nobody's outline and
    often reads as nothing (as does a fit across a part of one); the top card found in one
    at least half a card large is read, and kept if it is a back.  Without face cards
    nothing says how large a card is: nothing changes."""
    faces = [r for r in readings if r.kind not in ("back", "unknown")]
    fans = [i for i, r in enumerate(readings) if r.kind == "back"]
    if not faces or not (fans or (unread and recognise)):
        return readings
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    out = list(readings)
    for i in fans:
        r = readings[i]
        top = _top_card(gray, r.outline, *card_size_near(r.outline.centre, faces))
        if top is not None:
            out[i] = replace(r, outline=top)
    tops = []
    for outline in unread if recognise else ():
        short, long_ = card_size_near(outline.centre, faces)
        if outline.area >= UNREAD_AREA * short * long_:
            top = _top_card(gray, outline, short, long_)
            if top is not None and not any(polygon_iou(top.corners, r.outline.corners) > APART for r in out):
                tops.append(top)
    return out + [r for r in (recognise(image, tops) if tops else []) if r.kind == "back"]


def card_size_near(point: np.ndarray, faces: list[CardReading]) -> tuple[float, float]:
    """(short, long) of the face cards nearest the point.  (Not the plane `CardSizes` fits to
    them all: on development scenes the nearest few sized fans better, three exact medium
    tables in sixty, a slant changing a card's apparent proportions with its place and turn.)"""
    near = sorted(faces, key=lambda r: float(np.hypot(*(r.outline.centre - point))))[:NEIGHBOURS]
    return (float(np.median([r.outline.short_side for r in near])),
            float(np.median([r.outline.long_side for r in near])))


def _top_card(gray: np.ndarray, region: CardOutline, short: float, long_: float) -> CardOutline | None:
    """The fan's top card in or about `region` (`card_on_edges`), unless the finder's
    outline lies on edges as well as it: a back outlined well (a card alone) is left as
    it is, and one outlined by its printed frame is grown to its edge."""
    tried = [card_on_edges(gray, region, short, long_)]
    if region.area < FAN_AREA * short * long_:
        # the face cards around may lie nearer the camera and look larger than the fan's:
        # an outline of one card, not a fan's (one of the fan's cards, most often), sizes it too
        tried.append(card_on_edges(gray, region, region.short_side, region.long_side))
    found = max((t for t in tried if t is not None), key=lambda t: t[1], default=None)
    if found is None:
        return None
    best, support, edges = found
    if polygon_iou(best, region.corners) > SAME:
        return None
    own = edges.support(region.corners[None]).mean()
    if own >= support:
        best = _outermost(edges, region.corners, own)
        if best is region.corners:
            return None
    return refine_corners(gray, CardOutline(order_corners(best), region.score))


def card_on_edges(gray: np.ndarray, region: CardOutline, short: float, long_: float,
                  on_edge: float = ON_EDGE) -> tuple[np.ndarray, float, "_EdgeMaps"] | None:
    """The card-sized rectangle in or about `region` whose sides lie most on edges, if at
    least `on_edge` of their length does (`refit` asks less of cards edge to edge): its
    corners, that share, and the edge maps searched.

    Searched coarse to fine: every place and turn at the size of the cards
    around, then the best few again at finer turns and sizes a little off it
    (the view's slant changes a card's apparent proportions with its turn).
    A region smaller than a card (a part of a fan, or a card's printed frame)
    is searched around its centre as if larger.  Of rectangles nested about the
    best, the largest whose sides still lie on edges is the card: a frame printed
    inside a card's edge is as straight as the edge, and a size off by a tenth
    fits it.
    """
    corners = region.corners
    if region.area < FAN_AREA * short * long_:
        centre = corners.mean(axis=0)
        corners = centre + (corners - centre) * np.sqrt(SEARCHED_AREA * short * long_ / max(region.area, 1.0))
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    step = max(1.0, short / GRID)
    xs, ys = np.arange(lo[0], hi[0], step), np.arange(lo[1], hi[1], step)
    centres = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    centres = centres[signed_inside(centres, corners) >= 0]
    if not len(centres):
        return None
    edges = _EdgeMaps(gray, corners, long_)
    poses = _grid(centres, np.arange(0.0, 180.0, COARSE_TURN), [1.0], [1.0])
    support = _support(edges, poses, short, long_)
    nudges = _grid(np.stack(np.meshgrid((-step / 2, 0.0, step / 2), (-step / 2, 0.0, step / 2)), -1).reshape(-1, 2),
                   (-FINE_TURN, 0.0, FINE_TURN), SIZES, SIZES)
    best_few = poses[np.argsort(-support)[:KEPT]]
    finer = (best_few[:, None, :] * (1, 1, 1, 0, 0) + nudges[None, :, :]).reshape(-1, 5)
    support = _support(edges, finer, short, long_)
    k = int(np.argmax(support))
    if support[k] < on_edge:
        return None
    return _outermost(edges, rectangles(finer[k:k + 1], short, long_)[0], support[k]), float(support[k]), edges


def _outermost(edges: "_EdgeMaps", quad: np.ndarray, support: float) -> np.ndarray:
    """The largest of `quad` and the quadrilaterals `NESTED` about it whose sides keep
    `NESTED_SUPPORT` of its `support` (`quad` itself when none does)."""
    centre = quad.mean(axis=0)
    larger = centre + (quad[None] - centre) * np.array(NESTED)[:, None, None]
    kept = np.flatnonzero(edges.support(larger).mean(axis=1) >= NESTED_SUPPORT * support)
    return larger[kept[-1]] if len(kept) else quad


def _grid(centres, turns, short_factors, long_factors) -> np.ndarray:
    """Poses (x, y, degrees, short factor, long factor), every combination of the four."""
    n = [len(centres), len(turns), len(short_factors), len(long_factors)]
    out = np.empty(n + [5])
    out[..., :2] = np.asarray(centres, np.float64)[:, None, None, None, :]
    out[..., 2] = np.asarray(turns, np.float64)[None, :, None, None]
    out[..., 3] = np.asarray(short_factors, np.float64)[None, None, :, None]
    out[..., 4] = np.asarray(long_factors, np.float64)[None, None, None, :]
    return out.reshape(-1, 5)


def _support(edges: "_EdgeMaps", poses: np.ndarray, short: float, long_: float) -> np.ndarray:
    """The mean share of a rectangle's sides lying on edges, for each pose."""
    return edges.support(rectangles(poses, short, long_)).mean(axis=1)


def rectangles(poses: np.ndarray, short: float, long_: float) -> np.ndarray:
    """Corners (N, 4, 2) of rectangles posed (x, y, degrees, short factor, long factor)."""
    half_long = poses[:, 4:5] * long_ / 2.0
    half_short = poses[:, 3:4] * short / 2.0
    a = np.deg2rad(poses[:, 2:3])
    u = np.concatenate([np.cos(a), np.sin(a)], axis=1)                      # along the long side
    n = np.concatenate([-np.sin(a), np.cos(a)], axis=1)
    centre = poses[:, :2]
    signs = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], np.float64)
    return centre[:, None, :] + signs[None, :, 0:1] * (half_long * u)[:, None, :] \
        + signs[None, :, 1:2] * (half_short * n)[:, None, :]


class _EdgeMaps:
    """Where the picture around a region has an edge across each of a few directions.

    For each of `TURNS` directions, the pixels whose gradient across that
    direction is strong, grown by `REACH`: a rectangle's side then lies on an
    edge at a sample when the map of the side's own direction is set there.
    """

    TURNS = 12

    def __init__(self, gray: np.ndarray, region: np.ndarray, margin: float):
        h, w = gray.shape
        x0, y0 = np.maximum(0, np.floor(region.min(axis=0) - margin).astype(int))
        x1, y1 = np.minimum([w, h], np.ceil(region.max(axis=0) + margin).astype(int) + 1)
        self.origin = np.array([x0, y0], np.float64)
        crop = cv2.GaussianBlur(gray[y0:y1, x0:x1], (3, 3), 0)
        cx = cv2.Sobel(crop, cv2.CV_32F, 1, 0, ksize=3)
        cy = cv2.Sobel(crop, cv2.CV_32F, 0, 1, ksize=3)
        inner = region - self.origin
        mask = np.zeros(cx.shape, np.uint8)
        cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 1)
        magnitude = np.hypot(cx, cy)
        # strong for this region: half its strongest tenth (light and contrast vary)
        level = 0.5 * float(np.percentile(magnitude[mask > 0], 90)) if mask.any() else np.inf
        grow = np.ones((2 * REACH + 1, 2 * REACH + 1), np.uint8)
        self.maps = np.stack([
            cv2.dilate((np.abs(cx * np.cos(t) + cy * np.sin(t)) >= level).astype(np.uint8), grow)
            for t in np.deg2rad(np.arange(self.TURNS) * 180.0 / self.TURNS)])

    def support(self, corners: np.ndarray) -> np.ndarray:
        """For rectangles (N, 4, 2), the share of each side's samples on an edge across it, (N, 4)."""
        a = corners - self.origin
        d = np.roll(a, -1, axis=1) - a
        normal = np.degrees(np.arctan2(d[..., 0], -d[..., 1])) % 180.0        # direction across the side
        turn = np.round(normal / (180.0 / self.TURNS)).astype(int) % self.TURNS
        ts = np.linspace(0.1, 0.9, SAMPLES)
        pts = np.round(a[:, :, None, :] + ts[None, None, :, None] * d[:, :, None, :]).astype(int)
        _, h, w = self.maps.shape
        inside = (pts[..., 0] >= 0) & (pts[..., 0] < w) & (pts[..., 1] >= 0) & (pts[..., 1] < h)
        xs, ys = np.clip(pts[..., 0], 0, w - 1), np.clip(pts[..., 1], 0, h - 1)
        flat = (turn[..., None] * h + ys) * w + xs
        on = self.maps.reshape(-1)[flat].astype(bool) & inside
        return on.mean(axis=2)
