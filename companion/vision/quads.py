"""Quadrilaterals from regions: fitting four corners to a card-shaped contour, and scoring it.

A region is a card when its outline is a convex quadrilateral of card
proportions (allowing a 45-degree view), its outline runs along the four
sides, and the colour differs across them.
"""
from __future__ import annotations

import cv2
import numpy as np


def fit_quad(contour: np.ndarray, refine: bool = True) -> np.ndarray | None:
    """The four corners of a card-shaped contour; `refine` squares off rounded corners."""
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    approx = None
    for eps in (0.02, 0.03, 0.045, 0.06, 0.08, 0.1):
        a = cv2.approxPolyDP(hull, eps * peri, True)
        if len(a) == 4:
            approx = a.reshape(4, 2).astype(np.float64)
            break
        if len(a) < 4:
            break
    if approx is None or not refine:
        return approx
    return squared(contour, approx)


def squared(contour: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The quad with each side refitted to the contour (corners of a rounded card squared off)."""
    pts = contour.reshape(-1, 2)
    pts = pts[:: max(1, len(pts) // 300)].astype(np.float64)
    return refine_sides(pts, quad)


def refine_sides(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Fit a line to the outline points along each side, away from the corners.

    All four sides at once: for side i the points near it (and not near its
    corners) give least squares for offset = k0 + k1 * t along the side.
    """
    a = quad
    d = np.roll(quad, -1, axis=0) - quad
    length = np.hypot(d[:, 0], d[:, 1])
    if length.min() < 1e-6:
        return quad
    u = d / length[:, None]
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    rel = points[None, :, :] - a[:, None, :]                 # (4, N, 2)
    t = np.einsum("snk,sk->sn", rel, u)
    off = np.einsum("snk,sk->sn", rel, n)
    sel = (t > 0.15 * length[:, None]) & (t < 0.85 * length[:, None]) & \
        (np.abs(off) < np.maximum(1.5, 0.04 * length)[:, None])
    cnt = sel.sum(axis=1)
    w = sel.astype(np.float64)
    safe = np.maximum(cnt, 1)
    tm = (w * t).sum(axis=1) / safe
    om = (w * off).sum(axis=1) / safe
    var = (w * (t - tm[:, None]) ** 2).sum(axis=1)
    cov = (w * (t - tm[:, None]) * (off - om[:, None])).sum(axis=1)
    k1 = np.where(var > 0, cov / np.maximum(var, 1e-12), 0.0)
    k0 = om - k1 * tm
    ok = cnt >= 4
    k0, k1 = np.where(ok, k0, 0.0), np.where(ok, k1, 0.0)
    direction = u + k1[:, None] * n
    direction /= np.hypot(direction[:, 0], direction[:, 1])[:, None]
    origin = a + k0[:, None] * n
    lines = list(zip(origin, direction))
    out = []
    for i in range(4):
        p = intersect_lines(lines[i - 1], lines[i])
        if p is None or np.hypot(*(p - quad[i])) > 0.25 * np.hypot(*(quad[i] - quad[(i + 2) % 4])):
            return quad
        out.append(p)
    return np.array(out)


def intersect_lines(l1, l2) -> np.ndarray | None:
    (p, u), (q, v) = l1, l2
    det = -u[0] * v[1] + v[0] * u[1]
    if abs(det) < 1e-9:
        return None
    r = q - p
    s = (-r[0] * v[1] + v[0] * r[1]) / det
    return p + s * u


def quad_shape_score(quad: np.ndarray, contour: np.ndarray, contour_area: float,
                     aspect_lo: float, aspect_hi: float) -> float:
    """0 when the outline cannot be a card seen from above at <= 45 degrees, else 0..1."""
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    if area <= 0 or not cv2.isContourConvex(quad.astype(np.float32)):
        return 0.0
    sides = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
    if sides.min() <= 0:
        return 0.0
    a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    aspect = max(a, b) / min(a, b)
    if aspect > aspect_hi * 1.62 or aspect < aspect_lo / 1.62:
        return 0.0
    if max(sides[0], sides[2]) / min(sides[0], sides[2]) > 1.7:
        return 0.0
    if max(sides[1], sides[3]) / min(sides[1], sides[3]) > 1.7:
        return 0.0
    for i in range(4):
        e1, e2 = quad[i - 1] - quad[i], quad[(i + 1) % 4] - quad[i]
        cos = e1 @ e2 / (np.linalg.norm(e1) * np.linalg.norm(e2))
        if abs(cos) > 0.7:  # corners between ~45 and ~135 degrees
            return 0.0
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    fill = hull_area / area
    if fill < 0.9 or fill > 1.08 or contour_area < 0.55 * area:
        return 0.0
    # the outline must run along the quad's sides (straight edges, no bumps); bays
    # where a dark body meets an edge may leave parts of a side uncovered
    pts = contour.reshape(-1, 2).astype(np.float64)
    pts = pts[:: max(1, len(pts) // 160)]
    short = min(a, b)
    dist = distance_to_quad(pts, quad)
    outside = -signed_inside(pts, quad)
    if outside.max() > 0.06 * short + 1.0:
        return 0.0
    on_side = dist < 0.04 * short + 1.0
    coverage = perimeter_coverage(pts[on_side], quad)
    if coverage < 0.7:
        return 0.0
    return float(np.clip(coverage - abs(1.0 - fill) * 2.0, 0.0, 1.0))


def distance_to_quad(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Distance of each point to the nearest side of the quadrilateral."""
    best = np.full(len(points), np.inf)
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        t = np.clip(((points - a) @ d) / max(d @ d, 1e-9), 0, 1)
        best = np.minimum(best, np.linalg.norm(points - (a + t[:, None] * d), axis=1))
    return best


def signed_inside(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Positive inside the (convex, clockwise or not) quad: the least distance inside any side."""
    c = quad.mean(axis=0)
    worst = np.full(len(points), np.inf)
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        n = np.array([-d[1], d[0]]) / max(np.hypot(*d), 1e-9)
        if n @ (c - a) < 0:
            n = -n
        worst = np.minimum(worst, (points - a) @ n)
    return worst


def perimeter_coverage(points: np.ndarray, quad: np.ndarray, bins: int = 20) -> float:
    """Fraction of the quad's perimeter (in bins per side) that outline points lie along."""
    hit = np.zeros((4, bins), bool)
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        L2 = max(d @ d, 1e-9)
        t = ((points - a) @ d) / L2
        n = np.array([-d[1], d[0]]) / np.sqrt(L2)
        off = np.abs((points - a) @ n)
        near = (off < 0.05 * np.sqrt(L2) + 1.5) & (t >= 0) & (t < 1)
        hit[i, (t[near] * bins).astype(int)] = True
    return float(hit.mean())


def edge_contrast(lab: np.ndarray, quad: np.ndarray) -> float:
    """Fraction of the outline along which inside and outside differ clearly in colour."""
    c = quad.mean(axis=0)
    short = min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
    off = max(1.5, 0.06 * short)
    t = np.linspace(0.1, 0.9, 16)
    pts = np.concatenate([quad[i] + t[:, None] * (quad[(i + 1) % 4] - quad[i]) for i in range(4)])
    direction = pts - c
    # inward/outward along the normal of each side, approximated by the direction to the centre
    normals = []
    for i in range(4):
        d = quad[(i + 1) % 4] - quad[i]
        n = np.array([-d[1], d[0]]) / max(np.hypot(*d), 1e-9)
        if n @ (quad[i] - c) < 0:
            n = -n
        normals.append(np.repeat(n[None], len(t), axis=0))
    n = np.concatenate(normals)
    del direction
    inner = pts - n * off
    outer = pts + n * off
    h, w = lab.shape[:2]
    ok = (outer[:, 0] >= 0) & (outer[:, 0] < w) & (outer[:, 1] >= 0) & (outer[:, 1] < h)
    if ok.sum() < 0.5 * len(pts):
        return 0.0
    xi = np.clip(inner, 0, [w - 1, h - 1]).astype(np.int32)
    xo = np.clip(outer, 0, [w - 1, h - 1]).astype(np.int32)
    vi = lab[xi[:, 1], xi[:, 0]].astype(np.float32)
    vo = lab[xo[:, 1], xo[:, 0]].astype(np.float32)
    delta = np.linalg.norm(vi - vo, axis=1)[ok]
    return float(np.mean(delta > 14))


def apparent_aspect(quad: np.ndarray) -> float:
    e = np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)
    a, b = (e[0] + e[2]) / 2, (e[1] + e[3]) / 2
    return float(max(a, b) / max(min(a, b), 1e-6))
