"""Find the cards of a deck laid out apart on one surface.

The general finder (`companion.vision.find`) is built for a busy table:
cards touching end to end, props, fans.  A calibration photo is simpler and
stricter: every card lies apart on one surface.  Here the surface is whatever
colour dominates the picture's border; a pixel belongs to a card when it
differs from it by more than the photo's own cut (Otsu over the distances);
closing by a fraction of a card's width fills each card's inside but cannot
bridge the gap between two cards that do not touch; every remaining region
is one card (or two touching ones, which the labeller refuses by their size).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.find import find_cards
from companion.vision.refine import refine_corners
from companion.vision.maps import table_distance
from companion.vision.quads import fit_quad
from companion.vision.outline import CardOutline, order_corners

WORK_LONG_SIDE = 1280


@dataclass
class Foreground:
    mask: np.ndarray       # closed, filled card regions at work scale
    dist: np.ndarray       # distance from the surface colour, work scale
    scale: float
    k: int                 # closing kernel (about a fifth of a card's short side)
    j: int                 # opening kernel for the surface's thin lines

    def filled(self, outline: CardOutline) -> float:
        """Share of an outline's inside that is card, not surface."""
        poly = np.round(outline.corners * self.scale).astype(np.int32)
        inside = np.zeros_like(self.mask)
        cv2.fillPoly(inside, [poly], 255)
        n = max(1, int((inside > 0).sum()))
        return float(((inside > 0) & (self.mask > 0)).sum()) / n


def foreground(image: np.ndarray, expected: int, exclude: np.ndarray | None = None) -> Foreground:
    h, w = image.shape[:2]
    scale = min(1.0, WORK_LONG_SIDE / max(h, w))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2Lab)
    # a pixel is card when it differs from the surface's colours *and* from the surface around it:
    # a lamp's pool or a dark corner changes the surface's colour across the picture
    plain = table_distance(lab)
    dist = cv2.min(plain, local_surface_distance(lab))
    # the surface's own variation (grain, uneven light), read off the picture's border: the cut stays
    # where the picture-wide distance puts it (lower, a card's soft shadow would join its outline)
    m = max(2, int(0.04 * min(dist.shape)))
    ring = np.concatenate([plain[:m].ravel(), plain[-m:].ravel(), plain[:, :m].ravel(), plain[:, -m:].ravel()])
    mask = (dist > max(8.0, 1.6 * float(np.percentile(ring, 90)))).astype(np.uint8) * 255
    if exclude is not None:
        cv2.fillPoly(mask, [np.round(np.asarray(exclude) * scale).astype(np.int32)], 0)
    # how big a card is: the whole deck covers the foreground, `expected` cards share it
    est_short = np.sqrt(max(1.0, float((mask > 0).sum())) / (expected * 1.3))
    k = max(3, int(est_short * 0.18)) | 1
    # thin lines of the surface (grain, seams) must not bridge two cards: open them away first
    j = max(3, k // 3) | 1
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, _disc(j))
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, _disc(k))
    closed = cv2.morphologyEx(_fill_holes(closed), cv2.MORPH_OPEN, _disc(k))
    return Foreground(closed, dist, scale, k, j)


SURFACE_WINDOW = 0.25     # of the picture's width: several cards and the surface between them


def local_surface_distance(lab: np.ndarray) -> np.ndarray:
    """Per pixel (uint8), how far its colour is from the surface around it (the same weighted L1
    distance as `table_distance`).  Laid out apart, the cards cover well under half of any wide
    window, so the window's median colour is the surface's there, however the light falls."""
    h, w = lab.shape[:2]
    small = cv2.resize(lab, (max(8, w // 8), max(6, h // 8)), interpolation=cv2.INTER_AREA)
    k = max(5, int(SURFACE_WINDOW * small.shape[1])) | 1
    surface = cv2.resize(cv2.merge([cv2.medianBlur(c, k) for c in cv2.split(small)]), (w, h),
                         interpolation=cv2.INTER_LINEAR)
    (L, a, b), (sL, sa, sb) = cv2.split(lab), cv2.split(surface)
    d = cv2.addWeighted(cv2.absdiff(L, sL), 0.6, cv2.absdiff(a, sa), 1.0, 0)
    return cv2.add(d, cv2.absdiff(b, sb))


def _disc(n: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (n, n))


def find_laid_cards(image: np.ndarray, expected: int, exclude: np.ndarray | None = None,
                    fg: Foreground | None = None) -> list[CardOutline]:
    """Outlines of the separate card-sized regions; `exclude` is an image polygon to ignore (the mat)."""
    fg = fg or foreground(image, expected, exclude)
    scale, k, j = fg.scale, fg.k, fg.j
    contours, _ = cv2.findContours(fg.mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    areas = np.array([cv2.contourArea(c) for c in contours]) if contours else np.zeros(0)
    if not len(areas):
        return []
    typical = float(np.median(np.sort(areas)[-expected:]))
    contours = [part for c, a in zip(contours, areas)
                for part in (_split_blob(fg.dist, c, k, j) if a > 1.7 * typical else [c])]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    out = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < 0.3 * typical:
            continue            # crumbs: a coin, a speck on the cloth
        box = cv2.boxPoints(cv2.minAreaRect(c)).astype(np.float64)
        if area < 0.75 * cv2.contourArea(box.astype(np.float32)):
            c = _trimmed(c, fg.mask.shape, int(k * 1.8) | 1)   # a crumb of surface stuck to a card
            if c is None or cv2.contourArea(c) < 0.7 * typical:
                continue        # not a rectangle: a dark corner of the picture, a shadow
            area = cv2.contourArea(c)
            box = cv2.boxPoints(cv2.minAreaRect(c)).astype(np.float64)
        quad = fit_quad(c)
        if quad is None or not 0.9 < cv2.contourArea(quad.astype(np.float32)) / area < 1.15 \
                or not is_rectangle(quad):
            quad = box          # the rounded corners fooled the polygon fit
        outline = CardOutline(order_corners(quad / scale))
        # the mask's edge is blurred and takes in the card's shadow: move each side onto the paper's rim
        refined = refine_corners(gray, outline)
        outline = refined if is_rectangle(refined.corners) else outline
        out.append(outline)
    return out


def _trimmed(contour: np.ndarray, shape, n: int) -> np.ndarray | None:
    """The biggest rectangle-like part left after opening the region with a wide disc."""
    region = np.zeros(shape, np.uint8)
    cv2.drawContours(region, [contour], -1, 255, -1)
    region = cv2.morphologyEx(region, cv2.MORPH_OPEN, _disc(n))
    parts, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not parts:
        return None
    best = max(parts, key=cv2.contourArea)
    box = cv2.boxPoints(cv2.minAreaRect(best))
    return best if cv2.contourArea(best) >= 0.8 * cv2.contourArea(box) else None


def is_rectangle(quad: np.ndarray, angle_tol: float = 12.0, side_tol: float = 0.12) -> bool:
    """Near-square corners and equal opposite sides: a flat card seen nearly from above."""
    q = np.asarray(quad, float).reshape(4, 2)
    sides = np.roll(q, -1, axis=0) - q
    lengths = np.linalg.norm(sides, axis=1)
    if lengths.min() < 1e-6:
        return False
    for k in range(4):
        cos = abs(np.dot(sides[k], sides[(k + 1) % 4])) / (lengths[k] * lengths[(k + 1) % 4])
        if cos > np.sin(np.radians(angle_tol)):
            return False
    return all(abs(lengths[k] - lengths[k + 2]) <= side_tol * max(lengths[k], lengths[k + 2]) for k in (0, 1))


def _split_blob(dist: np.ndarray, contour: np.ndarray, k: int, j: int) -> list[np.ndarray]:
    """Several cards joined by a patch of surface the light made look different (a lamp pool,
    a shadow): threshold again with the blob's own cut, between its surface and its cards."""
    x, y, w, h = cv2.boundingRect(contour)
    roi = dist[y:y + h, x:x + w]
    inside = np.zeros((h, w), np.uint8)
    cv2.drawContours(inside, [contour - np.array([x, y])], -1, 255, -1)
    cut, _ = cv2.threshold(roi[inside > 0].reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = ((roi > cut) & (inside > 0)).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, _disc(j))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, _disc(k))
    mask = cv2.morphologyEx(_fill_holes(mask), cv2.MORPH_OPEN, _disc(k))
    parts, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return [p + np.array([x, y]) for p in parts] if len(parts) > 1 else [contour]


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(mask)
    cv2.drawContours(filled, contours, -1, 255, -1)
    return filled


def find_deck_cards(image: np.ndarray, expected: int, exclude: np.ndarray | None = None) -> list[CardOutline]:
    """The laid-out finder's cards, completed by the general finder's where the first missed some.

    A card the surface split found only by the general finder is taken when it
    overlaps none already found and is of the deck's size.
    """
    fg = foreground(image, expected, exclude)
    mine = find_laid_cards(image, expected, exclude, fg)
    if len(mine) >= expected:
        return mine
    if len(mine) < expected // 2:
        return mine
    typical = float(np.median([np.sqrt(o.area) for o in mine]))
    aspect = float(np.median([o.long_side / o.short_side for o in mine]))
    extra = []
    for o in find_cards(image):
        if exclude is not None and cv2.pointPolygonTest(np.float32(exclude), tuple(map(float, o.centre)), False) >= 0:
            continue
        if not (0.9 < np.sqrt(o.area) / typical < 1.1 and abs(o.long_side / o.short_side / aspect - 1) < 0.08):
            continue
        if not is_rectangle(o.corners) or fg.filled(o) < 0.9 or \
                any(_overlap(o, m) or _inside(o, m) for m in mine + extra):
            continue
        extra.append(o)
    # an outline of ours that holds two or more of the general finder's cards was two cards touching:
    # keep it (the labeller refuses touching cards by size), the extra ones inside it are dropped above
    return mine + extra


def _overlap(a: CardOutline, b: CardOutline) -> bool:
    if np.linalg.norm(a.centre - b.centre) > a.long_side + b.long_side:
        return False
    inter, _ = cv2.intersectConvexConvex(a.corners.astype(np.float32), b.corners.astype(np.float32))
    return inter > 0


def _inside(a: CardOutline, b: CardOutline) -> bool:
    return cv2.pointPolygonTest(np.float32(b.corners), tuple(map(float, a.centre)), False) >= 0
