"""Find every card on the table as a four-cornered outline.

Cards differ from the table, not from a fixed colour: the paper may be white,
cream or dark and the table anything.  So candidates come from several
binary maps (lighter than the table, darker than it, different in colour from
its dominant colour), each thresholded at a few levels; every closed region
whose outline is a convex quadrilateral of card proportions is a candidate,
and overlapping candidates keep the one whose outline fits best.  Regions made
of several cards touching end to end are split where their outline has
notches (rounded corners, the wedge of an angled joint), or, when no notch
shows, into equal card lengths.  All of it runs on a downscaled copy; only
the final corners are refined at full resolution, in small windows.
"""
from __future__ import annotations

import cv2
import numpy as np

from .outline import CardOutline, order_corners, polygon_iou
from .profile import Profile

WORK_LONG_SIDE = 1024      # px: the downscaled copy the search runs on (see work_scale)
MIN_SHORT_SIDE = 40        # px in the original image: smaller cards are not looked for
MAX_APPARENT_ASPECT = 2.6  # a 1:1.6 card foreshortened by a 45-degree view
SPLIT_BUDGET = 80          # cuts tried per frame when separating touching cards
CONTAINER_SCORE = 0.8      # a candidate fitting this well replaces the parts of it found as cards


def work_scale(shape: tuple[int, ...]) -> float:
    """The reduction the search runs at (whole numbers keep INTER_AREA on its fast path).

    Searching at about 640 px wide instead was measured faster by a quarter
    but lost a fifth of the cards on easy renders: small seams vanish.
    """
    long_side = max(shape[0], shape[1])
    if long_side > 2 * 1920:
        return 1.0 / max(1, round(long_side / 1920))
    if long_side > 2400:   # 4K: halve only, so that 40 px cards keep 20 px
        return 0.5
    return 1.0 / max(1, round(long_side / WORK_LONG_SIDE))


def find_cards(image: np.ndarray, profile: Profile | None = None,
               min_short_side: float = MIN_SHORT_SIDE) -> list[CardOutline]:
    """Every card-like quadrilateral in a BGR image, corners in image pixels."""
    scale = work_scale(image.shape)
    small = image if scale == 1.0 else cv2.resize(
        image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    min_side = max(8.0, min_short_side * scale * 0.8)
    aspect_lo, aspect_hi = (profile or Profile()).aspect_range
    found = find_quads(small, min_side, aspect_lo, aspect_hi)
    outlines = [CardOutline(order_corners(q / scale), s) for q, s in found]
    if scale < 1.0 and outlines:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        outlines = [refine_corners(gray, o) for o in outlines]
    return outlines


# --------------------------------------------------------------------------- candidate maps

def candidate_masks(small: np.ndarray, lab: np.ndarray) -> list[tuple[np.ndarray, bool]]:
    """Binary maps in which cards are likely to stand out as regions, each flagged `closed`.

    A pixel is foreground when its colour is far from every colour the table
    is made of (a patterned cloth has several).  Open maps keep the notches
    where two touching cards' rounded corners meet (what splitting needs);
    closed maps bridge the snake's dark outline where it runs into a
    connecting edge and would otherwise cut the paper in two.
    """
    lab = cv2.GaussianBlur(lab, (3, 3), 0)
    dist = table_distance(lab)
    opening = np.ones((3, 3), np.uint8)
    k = max(3, int(round(max(small.shape[:2]) / 200)))
    closing = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    out = []
    for t in (18, 28, 44):  # L1 distances: about 1.3 times the Euclidean ones
        m = cv2.morphologyEx((dist > t).astype(np.uint8) * 255, cv2.MORPH_OPEN, opening)
        out.append((m, False))
        out.append((cv2.morphologyEx(m, cv2.MORPH_CLOSE, closing), True))
    out.append((edge_regions(lab[..., 0], k + 2), False))
    return out


def edge_regions(L: np.ndarray, k: int) -> np.ndarray:
    """Regions enclosed by edges: a card on a table of its own colour still has a rim.

    The card's rim and the art inside it form one connected set of edges; its
    outer contour, filled, is the card (or a row of touching cards).  Table
    texture touching the rim is trimmed off by an opening.
    """
    v = float(np.median(L[::4, ::4]))
    edges = cv2.Canny(L, max(8.0, 0.25 * v), max(24.0, 0.6 * v))
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(edges)
    cv2.drawContours(filled, contours, -1, 255, -1)
    return cv2.morphologyEx(filled, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))


def table_colours(lab: np.ndarray, share: float = 0.1, max_colours: int = 4) -> np.ndarray:
    """The colours the table is made of: the common colours of the picture's border.

    The table runs out of the frame on every side while cards mostly lie
    inside it, so the border ring shows the table (a patterned cloth has
    several colours); the most common colour of the whole picture is kept too.
    """
    h, w = lab.shape[:2]
    m = max(2, int(0.06 * min(h, w)))
    ring = np.concatenate([lab[:m:2, ::2].reshape(-1, 3), lab[-m::2, ::2].reshape(-1, 3),
                           lab[m:-m:2, :m:2].reshape(-1, 3), lab[m:-m:2, -m::2].reshape(-1, 3)])
    whole = lab[::4, ::4].reshape(-1, 3)
    colours = []
    for sub, min_share in ((ring, share), (whole, 1.0)):
        q = (sub // 16).astype(np.int32)
        keys = q[:, 0] * 256 + q[:, 1] * 16 + q[:, 2]
        counts = np.bincount(keys, minlength=4096)
        order = np.argsort(counts)[::-1]
        colours.append(sub[keys == order[0]].mean(axis=0))
        for key in order[1:max_colours]:
            if counts[key] < min_share * len(keys):
                break
            colours.append(sub[keys == key].mean(axis=0))
    return np.array(colours, np.float32)


def table_distance(lab: np.ndarray) -> np.ndarray:
    """Per pixel (uint8), how far its colour is from the nearest table colour.

    A weighted L1 distance in Lab, brightness counted at 0.6 because light
    falls unevenly and colour is steadier; done in 8-bit OpenCV arithmetic
    because it runs on every pixel of every frame.
    """
    L, a, b = cv2.split(lab)
    best = None
    for colour in table_colours(lab):
        d = cv2.addWeighted(cv2.absdiff(L, float(colour[0])), 0.6, cv2.absdiff(a, float(colour[1])), 1.0, 0)
        d = cv2.add(d, cv2.absdiff(b, float(colour[2])))
        best = d if best is None else cv2.min(best, d)
    return best


# --------------------------------------------------------------------------- quad fitting

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
        p = _intersect(lines[i - 1], lines[i])
        if p is None or np.hypot(*(p - quad[i])) > 0.25 * np.hypot(*(quad[i] - quad[(i + 2) % 4])):
            return quad
        out.append(p)
    return np.array(out)


def _intersect(l1, l2) -> np.ndarray | None:
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
    short = min(a, b)
    dist = distance_to_quad(pts[:: max(1, len(pts) // 160)], quad)
    outside = -signed_inside(pts[:: max(1, len(pts) // 160)], quad)
    if outside.max() > 0.06 * short + 1.0:
        return 0.0
    on_side = dist < 0.04 * short + 1.0
    coverage = perimeter_coverage(pts[:: max(1, len(pts) // 160)][on_side], quad)
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


# --------------------------------------------------------------------------- the search

def find_quads(small: np.ndarray, min_side: float, aspect_lo: float = 1.0,
               aspect_hi: float = 1.6) -> list[tuple[np.ndarray, float]]:
    """(quad, score) for every card found in the (already downscaled) image."""
    min_area = min_side * min_side
    max_area = 0.5 * small.shape[0] * small.shape[1]
    singles: list[tuple[np.ndarray, float, np.ndarray]] = []
    blobs: list[tuple[np.ndarray, bool, bool]] = []
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    seen: set[tuple[int, int, int, int]] = set()
    masks = candidate_masks(small, lab)
    for m_index, (mask, closed) in enumerate(masks):
        # the last map is made of edges: its regions have a rim by construction, and
        # cream paper on a cream cloth shows little colour contrast across it
        from_edges = m_index == len(masks) - 1
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        for c in contours:
            if len(c) < 4 * min_side * 0.8:
                continue
            area = cv2.contourArea(c)
            if area < min_area or area > max_area:
                continue
            x, y, w, h = cv2.boundingRect(c)
            key = (x // 4, y // 4, w // 4, h // 4)  # the same region seen in another map
            if key in seen:
                continue
            seen.add(key)
            hull_area = cv2.contourArea(cv2.convexHull(c))
            (_, _), (rw, rh), _ = cv2.minAreaRect(c)
            if hull_area < 0.8 * rw * rh or area < 0.5 * rw * rh:  # not one convex card: many or none
                if area > 1.6 * min_area and hull_area < 0.8 * rw * rh:
                    blobs.append((c, closed, from_edges))
                continue
            quad = fit_quad(c)
            score = 0.0 if quad is None else quad_shape_score(quad, c, area, aspect_lo, aspect_hi)
            if score > 0 and min(np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)) >= min_side * 0.9:
                if (from_edges and score >= 0.85) or edge_contrast(lab, quad) >= 0.7:
                    singles.append((quad, score, c))
                    if _apparent_aspect(quad) > 1.75:  # may be two square cards end to end
                        blobs.append((c, closed, from_edges))
            elif area > 1.6 * min_area:
                blobs.append((c, closed, from_edges))
    kept = suppress([(q, s) for q, s, _ in singles])
    short, long_ = typical_card_size(kept, min_side, aspect_lo)
    aspect = long_ / short if short else None
    # the most card-like regions first (they fill their bounding box), so that the
    # split budget goes to rows of cards before fragments of a patterned cloth
    blobs.sort(key=lambda cb: -cv2.contourArea(cb[0]) / max(1.0, np.prod(cv2.minAreaRect(cb[0])[1])))
    pieces = []
    budget = [SPLIT_BUDGET]
    blob_boxes: list[tuple[bool, tuple[int, int, int, int]]] = []
    for c, closed, from_edges in blobs:
        box = cv2.boundingRect(c)
        if any(cl == closed and _box_iou(box, b) > 0.85 for cl, b in blob_boxes):
            continue  # the same group of cards, seen in another map
        blob_boxes.append((closed, box))
        if any(_contains_point(q, c) or _inside(c, q) for q, _ in kept if _apparent_aspect(q) <= 1.75):
            continue  # the blob is that card, or a part of it (paper beside the body)
        got = split_blob(c, 0.0, 0.0, small.shape, aspect_lo, aspect_hi, budget=budget)
        if not got and closed and aspect:
            got = split_evenly(c, aspect)
        pieces.extend((q, s) for q, s in got if edge_contrast(lab, q) >= 0.6)
    if pieces:
        # a region that splits into cards is not one long card
        split_regions = [q for q, _ in pieces]
        kept = [(q, s) for q, s in kept if _apparent_aspect(q) <= 1.75
                or not any(_contains(q, p) for p in split_regions)]
    return suppress(size_prior(pieces + kept, reference=kept))


def size_prior(cands: list[tuple[np.ndarray, float]],
               reference: list[tuple[np.ndarray, float]] | None = None) -> list[tuple[np.ndarray, float]]:
    """Lower the score of candidates much smaller or larger than the typical card.

    Every card of the deck has the same size, so a quad covering a part of a
    card (its paper beside the body, say) is far smaller than its neighbours;
    perspective changes sizes too, hence the tolerance of about a third.  The
    typical size comes from the `reference` candidates when there are enough
    (whole regions that were cards by themselves): cutting touching cards
    apart can leave many small pieces, which must not set the size.
    """
    if len(cands) < 3:
        return cands
    areas = np.array([abs(cv2.contourArea(q.astype(np.float32))) for q, _ in cands])
    typical = float(np.median(areas))
    if reference is not None and len(reference) >= 3:
        typical = float(np.median([abs(cv2.contourArea(q.astype(np.float32))) for q, _ in reference]))
    out = []
    for (q, score), area in zip(cands, areas):
        off = abs(np.log(max(area, 1e-6) / typical))
        out.append((q, score * float(np.clip(1.0 - max(0.0, off - 0.3), 0.3, 1.0))))
    return out


def _box_iou(a, b) -> float:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    iw = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    ih = max(0, min(ay + ah, by + bh) - max(ay, by))
    inter = iw * ih
    return inter / float(aw * ah + bw * bh - inter) if inter else 0.0


def _apparent_aspect(quad: np.ndarray) -> float:
    e = np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)
    a, b = (e[0] + e[2]) / 2, (e[1] + e[3]) / 2
    return float(max(a, b) / max(min(a, b), 1e-6))


def split_evenly(contour: np.ndarray, aspect: float) -> list[tuple[np.ndarray, float]]:
    """A straight strip of touching cards, cut into equal card lengths."""
    area = cv2.contourArea(contour)
    (cx, cy), (w, h), angle = cv2.minAreaRect(contour)
    if area < 0.85 * w * h:
        return []
    width, length = min(w, h), max(w, h)
    n = int(round(length / (aspect * width)))
    if n < 2 or abs(length - n * aspect * width) > 0.3 * aspect * width:
        return []
    box = cv2.boxPoints(((cx, cy), (w, h), angle))
    # the two long sides of the box, as start -> end along the strip
    e = np.linalg.norm(np.roll(box, -1, 0) - box, axis=1)
    i = int(np.argmax(e))
    a0, a1 = box[i], box[(i + 1) % 4]
    b0, b1 = box[(i + 3) % 4], box[(i + 2) % 4]
    out = []
    for k in range(n):
        t0, t1 = k / n, (k + 1) / n
        quad = np.array([a0 + (a1 - a0) * t0, a0 + (a1 - a0) * t1, b0 + (b1 - b0) * t1, b0 + (b1 - b0) * t0])
        out.append((quad.astype(np.float64), 0.5))
    return out


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
                   and (polygon_iou(quad, kq) > 0.2 or _contains(kq, quad) or _contains(quad, kq))]
        if clashes and score >= CONTAINER_SCORE and _apparent_aspect(quad) <= 1.75:
            area = abs(cv2.contourArea(quad.astype(np.float32)))
            if all(_contains(quad, kept[k][0]) and _inside(kept[k][0], quad)
                   and abs(cv2.contourArea(kept[k][0].astype(np.float32))) < 0.7 * area for k in clashes):
                for k in sorted(clashes, reverse=True):
                    del kept[k], boxes[k]
                clashes = []
        if not clashes:
            kept.append((quad, score))
            boxes.append((x0, y0, x1, y1))
    return kept


def _contains_point(quad: np.ndarray, contour: np.ndarray) -> bool:
    """Whether an accepted card already sits inside this blob (then the blob is that card)."""
    c = quad.mean(axis=0)
    return cv2.pointPolygonTest(contour, (float(c[0]), float(c[1])), False) > 0 and \
        abs(cv2.contourArea(quad.astype(np.float32))) > 0.6 * cv2.contourArea(contour)


def _inside(contour: np.ndarray, quad: np.ndarray) -> bool:
    """Whether a blob lies within an accepted card (most of its outline inside the card)."""
    pts = contour.reshape(-1, 2)[:: max(1, len(contour) // 40)].astype(np.float64)
    return float(np.mean(signed_inside(pts, quad) > -2.0)) > 0.9


def _contains(outer: np.ndarray, inner: np.ndarray) -> bool:
    c = inner.mean(axis=0)
    return cv2.pointPolygonTest(outer.astype(np.float32), (float(c[0]), float(c[1])), False) > 0


def typical_card_size(kept, min_side: float, aspect_lo: float) -> tuple[float, float]:
    if not kept:
        return 0.0, 0.0
    sides = []
    for q, _ in kept:
        e = np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)
        a, b = (e[0] + e[2]) / 2, (e[1] + e[3]) / 2
        sides.append((min(a, b), max(a, b)))
    s = np.median(np.array(sides), axis=0)
    return float(s[0]), float(s[1])


# --------------------------------------------------------------------------- touching cards

def split_blob(contour: np.ndarray, short: float, long_: float, shape, aspect_lo, aspect_hi,
               depth: int = 0, width: float = 0.0, budget: list[int] | None = None) -> list[tuple[np.ndarray, float]]:
    """Cut a region of several touching cards into cards.

    The cut runs between two notches of the outline (two rounded corners
    meeting, or the wedge of an angled joint) and must really part the region
    into two pieces of at least half a card each; pieces that are not yet one
    card are cut again.
    """
    # Every call spends one unit of the frame's budget: a striped cloth would
    # otherwise be cut into ever more pieces, each cut costing a contour search.
    budget = budget if budget is not None else [SPLIT_BUDGET]
    if depth > 8 or budget[0] <= 0:
        return []
    budget[0] -= 1
    x, y, w, h = cv2.boundingRect(contour)
    pad = 3
    offset = np.array([x - pad, y - pad])
    mask = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    local = (contour - offset).astype(np.int32)
    cv2.drawContours(mask, [local], -1, 255, -1)
    width = width or short
    if not width:
        # the width of a strip of cards is twice its deepest inside point
        width = 2.0 * float(cv2.distanceTransform(mask, cv2.DIST_L2, 3).max())
    min_piece = 0.35 * width * width
    for p, q in candidate_cuts(local, width):
        cut = mask.copy()
        cv2.line(cut, tuple(int(v) for v in np.round(p)), tuple(int(v) for v in np.round(q)), 0, 2)
        parts, _ = cv2.findContours(cut, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        big = [c for c in parts if cv2.contourArea(c) >= min_piece]
        if len(big) < 2:
            continue
        out = []
        for part in big:
            area = cv2.contourArea(part)
            part = (part + offset).astype(np.int32)
            quad = fit_quad(part)
            score = 0.0 if quad is None else quad_shape_score(quad, part, area, aspect_lo, aspect_hi)
            if score > 0 and area < 1.9 * width * width * aspect_hi:
                out.append((quad, score * 0.95))
            else:
                out.extend(split_blob(part, short, long_, shape, aspect_lo, aspect_hi, depth + 1, width, budget))
        return out
    return []


def candidate_cuts(contour: np.ndarray, width: float, limit: int = 6):
    """Chords that may separate two touching cards, best first.

    Between two notches about one card width apart (rounded corners meeting on
    both sides of a seam); or, where a chain bends, from the hinge (a deep
    notch on the inner side) straight across the strip.
    """
    pts = contour.reshape(-1, 2).astype(np.float64)
    if len(pts) < 8:
        return []
    hull = cv2.convexHull(contour, returnPoints=False)
    try:
        defects = cv2.convexityDefects(contour, hull)
    except cv2.error:
        return []
    if defects is None:
        return []
    defects = defects.reshape(-1, 4)
    deep = [(d[3] / 256.0, pts[d[2]], int(d[2])) for d in defects if d[3] / 256.0 > max(1.0, 0.025 * width)]
    cuts = []
    for i in range(len(deep)):
        for j in range(i + 1, len(deep)):
            p, q = deep[i][1], deep[j][1]
            length = float(np.hypot(*(p - q)))
            if not (0.5 * width <= length <= 1.6 * width):
                continue
            cuts.append((length - 1.5 * (deep[i][0] + deep[j][0]), p, q))
    step = max(2, int(0.15 * width))
    for depth, p, k in deep:
        if depth < 0.08 * width:
            continue
        a = pts[(k - step) % len(pts)] - p
        b = pts[(k + step) % len(pts)] - p
        na, nb = np.hypot(*a), np.hypot(*b)
        if na == 0 or nb == 0:
            continue
        inward = -(a / na + b / nb)
        n = np.hypot(*inward)
        if n < 1e-6:
            continue
        inward /= n
        cuts.append((1.2 * width - 1.5 * depth, p - inward * 0.05 * width, p + inward * 1.3 * width))
    cuts.sort(key=lambda t: t[0])
    return [(p, q) for _, p, q in cuts[:limit]]


# --------------------------------------------------------------------------- full-resolution refinement

def refine_corners(gray: np.ndarray, outline: CardOutline, window: int = 6) -> CardOutline:
    """Move each side onto the strongest nearby edge at full resolution."""
    c = outline.corners
    lines = []
    h, w = gray.shape
    for i in range(4):
        a, b = c[i], c[(i + 1) % 4]
        d = b - a
        length = float(np.hypot(*d))
        if length < 8:
            return outline
        u = d / length
        n = np.array([-u[1], u[0]])
        ts = np.linspace(0.2, 0.8, 12) * length
        offs = np.arange(-window, window + 1, dtype=np.float64)
        samples = a[None, None, :] + ts[:, None, None] * u + offs[None, :, None] * n
        xs = samples[..., 0].astype(np.float32)
        ys = samples[..., 1].astype(np.float32)
        if xs.min() < 1 or ys.min() < 1 or xs.max() > w - 2 or ys.max() > h - 2:
            lines.append((a, u))
            continue
        prof = cv2.remap(gray, xs, ys, cv2.INTER_LINEAR).astype(np.float32)
        grad = np.abs(np.diff(prof, axis=1))
        k = np.argmax(grad, axis=1)
        strong = grad[np.arange(len(k)), k] > 12
        if strong.sum() < 5:
            lines.append((a, u))
            continue
        shift = offs[k] + 0.5
        pts = a + ts[:, None] * u + shift[:, None] * n
        pts = pts[strong]
        vx, vy, x0, y0 = cv2.fitLine(pts.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    out = []
    for i in range(4):
        p = _intersect(lines[i - 1], lines[i])
        if p is None or np.hypot(*(p - c[i])) > 2 * window:
            return outline
        out.append(p)
    return CardOutline(np.array(out), outline.score)
