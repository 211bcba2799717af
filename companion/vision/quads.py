"""Quadrilaterals from regions: fitting four corners to a card-shaped contour, and scoring it.

A region is a card when its outline is a convex quadrilateral of card
proportions (allowing a 45-degree view), its outline runs along the four
sides, and the colour differs across them.
"""
from __future__ import annotations

import functools
import math

import cv2
import numpy as np

CLEAR_STEP = 14.0   # Lab units: a colour step across an outline that noise and print do not make
STRAIGHT_STEP = 6.0     # grey levels per pixel across a side: the least edge a card's cut side makes
STRAIGHT_ALIGNED = 0.85  # ... its gradient this nearly square to the side
STRAIGHT_SHARE = 0.5    # ... along this share of the side at least, for the side to lie on a straight edge
STRAIGHT_LONG_SIDE = 1024  # px: the picture is looked at this large at most (sizes below are at this scale)
MOST_HULL_FILL = 1.08   # a card's quad is at least the region's convex hull over this (and at most over 0.9)


def fit_quad(contour: np.ndarray, refine: bool = True, hull: np.ndarray | None = None) -> np.ndarray | None:
    """The four corners of a card-shaped contour; `refine` squares off rounded corners.

    `hull`: the contour's convex hull, when the caller has it already.
    """
    hull = cv2.convexHull(contour) if hull is None else hull
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
    (Runs for every region of every map: written for few array operations;
    the four lines themselves are made on plain floats, too few for arrays
    to pay.)
    """
    a = quad
    d = quad[_NEXT] - quad
    length = np.hypot(d[:, 0], d[:, 1])
    if length.min() < 1e-6:
        return quad
    u = d / length[:, None]
    # (4, 1) columns against the points' (N,) rows: each side's direction, normal (-uy, ux), start
    ux, uy = u[:, :1], u[:, 1:]
    rx = points[:, 0] - a[:, :1]                        # (4, N)
    ry = points[:, 1] - a[:, 1:]
    t = rx * ux + ry * uy
    off = rx * -uy + ry * ux
    length = length[:, None]
    sel = (t > 0.15 * length) & (t < 0.85 * length) & (np.abs(off) < np.maximum(1.5, 0.04 * length))
    cnt = sel.sum(axis=1)
    w = sel.astype(np.float64)
    safe = np.maximum(cnt, 1)
    tm = (w * t).sum(axis=1) / safe
    om = (w * off).sum(axis=1) / safe
    dt = t - tm[:, None]
    wdt = w * dt
    var = (wdt * dt).sum(axis=1)
    cov = (wdt * (off - om[:, None])).sum(axis=1)
    corners = a.tolist()
    origins, dx, dy = [], [], []
    for (ux, uy), (ax, ay), count, v, c, t0, o0 in zip(u.tolist(), corners, cnt.tolist(), var.tolist(),
                                                     cov.tolist(), tm.tolist(), om.tolist()):
        k1 = c / max(v, 1e-12) if count >= 4 and v > 0 else 0.0
        k0 = o0 - k1 * t0 if count >= 4 else 0.0
        dx.append(ux + k1 * -uy)
        dy.append(uy + k1 * ux)
        origins.append((ax + k0 * -uy, ay + k0 * ux))
    norm = np.hypot(dx, dy).tolist()
    directions = [(x / s, y / s) for x, y, s in zip(dx, dy, norm)]
    # corner i where side i-1 meets side i; a corner far from the rough one means a bad fit
    diagonal = np.hypot(*(quad - quad[_ACROSS]).T).tolist()
    out = []
    for i in range(4):
        p = _intersect(origins[i - 1], directions[i - 1], origins[i], directions[i])
        if p is None or math.hypot(p[0] - corners[i][0], p[1] - corners[i][1]) > 0.25 * diagonal[i]:
            return quad
        out.append(p)
    return np.array(out)


_NEXT = np.array([1, 2, 3, 0])     # (arrays: a list index is made an array on every use)
_ACROSS = np.array([2, 3, 0, 1])


def _intersect(p, u, q, v):
    """`intersect_lines` on plain floats (it runs four times per fitted region)."""
    det = -u[0] * v[1] + v[0] * u[1]
    if abs(det) < 1e-9:
        return None
    r0, r1 = q[0] - p[0], q[1] - p[1]
    s = (-r0 * v[1] + v[0] * r1) / det
    return (p[0] + s * u[0], p[1] + s * u[1])


def intersect_lines(l1, l2) -> np.ndarray | None:
    """Where two lines (point, direction) cross; None when they are parallel."""
    p = _intersect(*l1, *l2)
    return None if p is None else np.array(p, np.float64)


def card_shaped_area(quad: np.ndarray, aspect_lo: float, aspect_hi: float) -> float:
    """The quad's area when its four corners can be a card's seen from above at <= 45
    degrees (convex, of the deck's proportions as a view squeezes them, opposite sides
    alike, corners between about 45 and 135 degrees), else 0."""
    return _card_shape(quad, aspect_lo, aspect_hi)[0]


def _card_shape(quad: np.ndarray, aspect_lo: float, aspect_hi: float) -> tuple[float, float]:
    """(area, the shorter mean of two opposite sides) of a quad `card_shaped_area` accepts,
    else (0, 0)."""
    q32 = quad.astype(np.float32)
    area = abs(cv2.contourArea(q32))
    if area <= 0 or not cv2.isContourConvex(q32):
        return 0.0, 0.0
    # cheap tests on the four corners as plain floats first: most regions fail one
    c = quad.tolist()
    edges = [(c[(i + 1) % 4][0] - c[i][0], c[(i + 1) % 4][1] - c[i][1]) for i in range(4)]
    sides = [math.sqrt(x * x + y * y) for x, y in edges]
    if min(sides) <= 0:
        return 0.0, 0.0
    a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    aspect = max(a, b) / min(a, b)
    if aspect > aspect_hi * 1.62 or aspect < aspect_lo / 1.62:
        return 0.0, 0.0
    if max(sides[0], sides[2]) / min(sides[0], sides[2]) > 1.7:
        return 0.0, 0.0
    if max(sides[1], sides[3]) / min(sides[1], sides[3]) > 1.7:
        return 0.0, 0.0
    for i in range(4):
        (x1, y1), (x2, y2) = edges[i - 1], edges[i]   # into corner i, out of it
        cos = -(x1 * x2 + y1 * y2) / (sides[i - 1] * sides[i])
        if abs(cos) > 0.7:  # corners between ~45 and ~135 degrees
            return 0.0, 0.0
    return area, min(a, b)


def quad_shape_score(quad: np.ndarray, contour: np.ndarray, contour_area: float,
                     aspect_lo: float, aspect_hi: float, hull_area: float | None = None) -> float:
    """0 when the outline cannot be a card seen from above at <= 45 degrees, else 0..1.

    `hull_area`: the area of the contour's convex hull, when the caller has it already.
    """
    area, short = _card_shape(quad, aspect_lo, aspect_hi)
    if area == 0.0:
        return 0.0
    if hull_area is None:
        hull_area = cv2.contourArea(cv2.convexHull(contour))
    fill = hull_area / area
    if fill < 0.9 or fill > MOST_HULL_FILL or contour_area < 0.55 * area:
        return 0.0
    # the outline must run along the quad's sides (straight edges, no bumps); bays
    # where a dark body meets an edge may leave parts of a side uncovered
    pts = contour.reshape(-1, 2).astype(np.float64)
    pts = pts[:: max(1, len(pts) // 160)]
    frame = _SideFrame(pts, quad)
    if -frame.signed_inside().min() > 0.06 * short + 1.0:   # a bump outside the quad
        return 0.0
    on_side = frame.distance() < 0.04 * short + 1.0
    coverage = frame.coverage(on_side)
    if coverage < 0.7:
        return 0.0
    return float(np.clip(coverage - abs(1.0 - fill) * 2.0, 0.0, 1.0))


class _SideFrame:
    """Points seen from each side of a quad at once: along it (t, in side lengths) and across it.

    Scoring a region asks three questions of the same points (how far from the
    outline, how far inside, how much of each side they follow); the
    projections they share are made once, for all four sides together.
    """

    def __init__(self, points: np.ndarray, quad: np.ndarray):
        d = quad[_NEXT] - quad
        self.quad = quad
        self.d = d
        self.sq = np.maximum(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1], 1e-9)      # (4,)
        self.rx = points[:, 0] - quad[:, 0, None]                            # (4, N)
        self.ry = points[:, 1] - quad[:, 1, None]
        norm = np.sqrt(self.sq)
        self.across = (self.ry * d[:, 0, None] - self.rx * d[:, 1, None]) / norm[:, None]

    @functools.cached_property
    def t(self) -> np.ndarray:
        """Where along each side (0 at its start, 1 at its end) each point lies; `signed_inside` needs none."""
        d = self.d
        return (self.rx * d[:, 0, None] + self.ry * d[:, 1, None]) / self.sq[:, None]

    def distance(self) -> np.ndarray:
        """Distance of each point to the nearest side."""
        t = np.clip(self.t, 0, 1)
        ex = self.rx - t * self.d[:, 0, None]
        ey = self.ry - t * self.d[:, 1, None]
        return np.sqrt(ex * ex + ey * ey).min(axis=0)

    def signed_inside(self) -> np.ndarray:
        """Positive inside the quad: the least distance inside any side."""
        q = self.quad
        c = q.mean(axis=0)
        # the normal (-dy, dx) points inside where the centre lies on its side
        inward = ((c[1] - q[:, 1]) * self.d[:, 0] - (c[0] - q[:, 0]) * self.d[:, 1]) >= 0
        return np.where(inward[:, None], self.across, -self.across).min(axis=0)

    def coverage(self, use: np.ndarray, bins: int = 20) -> float:
        """Fraction of the perimeter (in bins per side) that the `use` points lie along."""
        near = use & (np.abs(self.across) < 0.05 * np.sqrt(self.sq)[:, None] + 1.5) & (self.t >= 0) & (self.t < 1)
        side, k = np.nonzero(near)
        hit = np.zeros((4, bins), bool)
        hit[side, (self.t[side, k] * bins).astype(int)] = True
        return float(hit.mean())


def distance_to_quad(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Distance of each point to the nearest side of the quadrilateral."""
    return _SideFrame(points, quad).distance()


def signed_inside(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Positive inside the (convex, clockwise or not) quad: the least distance inside any side."""
    return _SideFrame(points, quad).signed_inside()


def perimeter_coverage(points: np.ndarray, quad: np.ndarray, bins: int = 20) -> float:
    """Fraction of the quad's perimeter (in bins per side) that outline points lie along."""
    return _SideFrame(points, quad).coverage(np.ones(len(points), bool), bins)


def rim_support(edges: np.ndarray, quad: np.ndarray) -> float:
    """Fraction of the outline (in bins per side) along which an edge pixel runs.

    Touching cards show no contrast across the seam between them (paper on
    both sides), nor cream paper against a cream table, but both still have
    a rim: the cut edge of the card, or the printed frame.
    """
    h, w = edges.shape
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - 3, 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 4, (w, h))
    ys, xs = np.nonzero(edges[y0:y1, x0:x1])
    if len(xs) < 8:
        return 0.0
    points = np.stack([xs + x0, ys + y0], axis=1).astype(np.float64)
    return _SideFrame(points, quad).coverage(np.ones(len(points), bool))


def edge_contrast(lab: np.ndarray, quad: np.ndarray, step: float = CLEAR_STEP) -> float:
    """Fraction of the outline along which inside and outside differ in colour by more than `step`."""
    c = quad.mean(axis=0)
    d = quad[_NEXT] - quad
    short = min(np.linalg.norm(d[0]), np.linalg.norm(d[1]))
    off = max(1.5, 0.06 * short)
    pts = (quad[:, None, :] + _ALONG[None, :, None] * d[:, None, :]).reshape(-1, 2)
    # inward/outward along the normal of each side (its sign set by where the centre lies)
    n = np.empty_like(d)
    n[:, 0], n[:, 1] = -d[:, 1], d[:, 0]
    n /= np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)[:, None]
    outward = n[:, 0] * (quad[:, 0] - c[0]) + n[:, 1] * (quad[:, 1] - c[1])
    n[outward < 0] *= -1
    n = np.repeat(n, len(_ALONG), axis=0)
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
    return float(np.mean(delta > step))


_ALONG = np.linspace(0.1, 0.9, 16)   # where along each side edge_contrast looks


def apparent_aspect(quad: np.ndarray) -> float:
    c = quad.tolist()
    e = []
    for i in range(4):
        dx, dy = c[(i + 1) % 4][0] - c[i][0], c[(i + 1) % 4][1] - c[i][1]
        e.append(math.sqrt(dx * dx + dy * dy))
    a, b = (e[0] + e[2]) / 2, (e[1] + e[3]) / 2
    return float(max(a, b) / max(min(a, b), 1e-6))


def straight_sides(image: np.ndarray, quad: np.ndarray, along: int = 24) -> int:
    """How many of the quad's sides lie on a straight edge of the picture along at least
    `STRAIGHT_SHARE` of their length.

    Every card's sides are straight lines in the picture, wherever it lies.  A quadrilateral
    fitted to a blob (a face, a stool's round seat, a pool of light) meets the picture's
    edges only here and there, and where it does they wander across the side: a side counts
    only where an edge square to it lies within a band about the one offset most of its
    edges share.
    """
    h, w = image.shape[:2]
    s = min(1.0, STRAIGHT_LONG_SIDE / max(h, w))
    quad = np.asarray(quad, np.float64)
    sides = (np.roll(quad, -1, axis=0) - quad) * s
    lengths = np.hypot(sides[:, 0], sides[:, 1])
    if lengths.min() < 4:
        return 0
    reach = max(2.0, 0.06 * float(lengths.min()))
    # the picture around the quad only, looked at `s` times its size
    x0, y0 = np.maximum(np.floor(quad.min(axis=0) - (reach + 3) / s).astype(int), 0)
    x1, y1 = np.ceil(quad.max(axis=0) + (reach + 3) / s).astype(int) + 1
    crop = image[y0:y1, x0:x1]
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    if s < 1.0:
        gray = cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
    gray = cv2.GaussianBlur(gray, (3, 3), 0).astype(np.float32)
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3) / 8
    q = (quad - (x0, y0)) * s
    offsets = np.linspace(-reach, reach, int(2 * reach) + 1)
    t = np.linspace(0.1, 0.9, along)
    count = 0
    for a, d, length in zip(q, sides, lengths):
        u = d / length
        n = np.array([-u[1], u[0]])
        pts = a + t[:, None, None] * d + offsets[None, :, None] * n        # (along, offsets, 2)
        x = np.clip(np.round(pts[..., 0]).astype(int), 0, gray.shape[1] - 1)
        y = np.clip(np.round(pts[..., 1]).astype(int), 0, gray.shape[0] - 1)
        across = np.abs(gx[y, x] * n[0] + gy[y, x] * n[1])
        edge = (across >= STRAIGHT_STEP) & (across >= STRAIGHT_ALIGNED * np.hypot(gx[y, x], gy[y, x]))
        hit = edge.any(axis=1)
        if hit.sum() >= 3:
            where = offsets[np.argmax(np.where(edge, across, -1.0), axis=1)]
            band = np.abs(offsets - np.median(where[hit])) <= max(1.0, 0.3 * reach)
            hit = (edge & band[None, :]).any(axis=1)
        count += bool(hit.mean() >= STRAIGHT_SHARE)
    return count


def shortest_side(quad: np.ndarray) -> float:
    """The length of a quad's shortest side."""
    c = quad.tolist()
    sides = []
    for i in range(4):
        dx, dy = c[i - 1][0] - c[i][0], c[i - 1][1] - c[i][1]
        sides.append(math.sqrt(dx * dx + dy * dy))
    return min(sides)


def box_iou(a, b) -> float:
    """Intersection over union of two (x, y, w, h) boxes."""
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    iw = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    ih = max(0, min(ay + ah, by + bh) - max(ay, by))
    inter = iw * ih
    return inter / float(aw * ah + bw * bh - inter) if inter else 0.0


def holds_centre(outer: np.ndarray, inner: np.ndarray) -> bool:
    """Whether `inner`'s centre (the mean of its points) lies inside the polygon `outer`."""
    c = inner.mean(axis=0)
    return cv2.pointPolygonTest(outer.astype(np.float32), (float(c[0]), float(c[1])), False) > 0


def lies_within(contour: np.ndarray, quad: np.ndarray) -> bool:
    """Whether a region lies within a quad: most of its outline inside it (or within 2 px)."""
    pts = contour.reshape(-1, 2)[:: max(1, len(contour) // 40)].astype(np.float64)
    return float(np.mean(signed_inside(pts, quad) > -2.0)) > 0.9
