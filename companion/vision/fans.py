"""The top card of a fan of face-down cards, where the finder outlined the whole fan.

Players spread the draw pile into a fan.  Its cards are alike and overlap, so
the finder sees one region, and the quad it fits to that region is larger
than a card and lies across several of them; read, it is a back, but its
outline is nobody's.  Only the card on top lies whole: its sides are edges,
against the table or where the borders of the cards beneath stop at it,
while a card-sized rectangle anywhere else in the fan has a side or two
across some card's plain face.  So the rectangle of the size the face cards
around show whose sides lie most on edges of their own direction is the top
card.
"""
from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from .find import refine_corners
from .outline import CardOutline, order_corners, polygon_iou
from .recognise import CardReading

FAN_AREA = 1.0        # a back outline this many cards large is a fan's (or a misfit of one)
NEIGHBOURS = 3        # face cards nearest the back whose size a card there has
COARSE_TURN = 6.0     # degrees between the rectangles first tried
GRID = 8              # rectangle centres tried across the region, per card short side
KEPT = 6              # the best of those tried again, finer
FINE_TURN = 3.0       # degrees either way then
SIZES = (0.9, 1.0, 1.1)  # and sizes, against the cards around
SAMPLES = 12          # places along each side where it is looked for
REACH = 2             # pixels either side of a side within which its edge may lie
SAME = 0.85           # overlap with the finder's outline at which the top card is that outline
ON_EDGE = 0.7         # the least share of its sides' length the top card shows edges along


def top_cards_of_fans(image: np.ndarray, readings: list[CardReading]) -> list[CardReading]:
    """`readings`, each back outlined larger than a card around it given its fan's top card's outline
    (where one stands out).  Without face cards nothing says how large a card is: nothing changes."""
    faces = [r for r in readings if r.kind not in ("back", "unknown")]
    fans = [i for i, r in enumerate(readings) if r.kind == "back"]
    if not faces or not fans:
        return readings
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    out = list(readings)
    for i in fans:
        r = readings[i]
        short, long_ = _card_size_near(r.outline.centre, faces)
        if r.outline.area < FAN_AREA * short * long_:
            continue
        top = _top_card(gray, r.outline, short, long_)
        if top is not None:
            out[i] = replace(r, outline=top)
    return out


def _card_size_near(point: np.ndarray, faces: list[CardReading]) -> tuple[float, float]:
    """(short, long) of the face cards nearest the point.  (Not the plane `CardSizes` fits to
    them all: on development scenes the nearest few sized fans better, three exact medium
    tables in sixty, a slant changing a card's apparent proportions with its place and turn.)"""
    near = sorted(faces, key=lambda r: float(np.hypot(*(r.outline.centre - point))))[:NEIGHBOURS]
    return (float(np.median([r.outline.short_side for r in near])),
            float(np.median([r.outline.long_side for r in near])))


def _top_card(gray: np.ndarray, region: CardOutline, short: float, long_: float) -> CardOutline | None:
    """The card-sized rectangle inside `region` whose sides lie most on edges, if they do.

    Searched coarse to fine: every place and turn at the size of the cards
    around, then the best few again at finer turns and sizes a little off it
    (the view's slant changes a card's apparent proportions with its turn).
    """
    lo, hi = region.corners.min(axis=0), region.corners.max(axis=0)
    step = max(1.0, short / GRID)
    xs, ys = np.arange(lo[0], hi[0], step), np.arange(lo[1], hi[1], step)
    centres = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    outline = region.corners.astype(np.float32)
    centres = centres[[cv2.pointPolygonTest(outline, (float(x), float(y)), False) >= 0 for x, y in centres]]
    if not len(centres):
        return None
    edges = _EdgeMaps(gray, region, long_)
    poses = np.array([(x, y, a, 1.0, 1.0) for x, y in centres for a in np.arange(0.0, 180.0, COARSE_TURN)])
    support = _support(edges, poses, short, long_)
    finer = np.array([(x + dx, y + dy, a + da, fs, fl)
                      for x, y, a, _, _ in poses[np.argsort(-support)[:KEPT]]
                      for dx in (-step / 2, 0.0, step / 2) for dy in (-step / 2, 0.0, step / 2)
                      for da in (-FINE_TURN, 0.0, FINE_TURN) for fs in SIZES for fl in SIZES])
    support = _support(edges, finer, short, long_)
    k = int(np.argmax(support))
    if support[k] < ON_EDGE:
        return None
    best = _rectangles(finer[k:k + 1], short, long_)[0]
    # a back the finder outlined well (a card alone) is found again where it was: left as it is
    if polygon_iou(best, region.corners) > SAME or edges.support(region.corners[None]).mean() >= support[k]:
        return None
    return refine_corners(gray, CardOutline(order_corners(best), region.score))


def _support(edges: "_EdgeMaps", poses: np.ndarray, short: float, long_: float) -> np.ndarray:
    """The mean share of a rectangle's sides lying on edges, for each pose."""
    return edges.support(_rectangles(poses, short, long_)).mean(axis=1)


def _rectangles(poses: np.ndarray, short: float, long_: float) -> np.ndarray:
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

    def __init__(self, gray: np.ndarray, region: CardOutline, margin: float):
        h, w = gray.shape
        x0, y0 = np.maximum(0, np.floor(region.corners.min(axis=0) - margin).astype(int))
        x1, y1 = np.minimum([w, h], np.ceil(region.corners.max(axis=0) + margin).astype(int) + 1)
        self.origin = np.array([x0, y0], np.float64)
        crop = cv2.GaussianBlur(gray[y0:y1, x0:x1], (3, 3), 0)
        cx = cv2.Sobel(crop, cv2.CV_32F, 1, 0, ksize=3)
        cy = cv2.Sobel(crop, cv2.CV_32F, 0, 1, ksize=3)
        inner = region.corners - self.origin
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
