"""Touching cards: a region made of several cards end to end, cut into cards.

The cut runs between notches of the outline (two rounded corners meeting, the
wedge of an angled joint); a straight strip without notches is cut into equal
card lengths, or at the seams that repeat along it under the view's
perspective, or, of known card size, into as many cards as it is long; a strip
of known card size is also peeled card by card along its seams.  Overlapping
cards (a fan) are not cut: their top card is grown from a side of the region
(`card_on_side`).
"""
from __future__ import annotations

import functools

import cv2
import numpy as np
from scipy import ndimage

from .quads import fit_quad, quad_shape_score, squared
from .sizes import CardSizes

SPLIT_BUDGET = 400         # cuts tried per frame when separating touching cards (a 4K table of many
                           # rows, each seen in a dozen maps, used up 160 before its last rows)
ROW_WIDEST = 1.35          # card widths: a row at its widest (neighbours lie offset across it)
PEEL_FILL = 0.35           # the least share of a peeled card its region fills (faint paper maps are speckled)
ROW_FILL = 0.7             # the least share of its least rectangle a straight row fills (speckled maps too)
ROW_SEAM = 1.5             # times the strength most of a row shows (its 90th percentile): how much more its
ROW_QUANTILE = 0.25        # seams show than its cards' middles, the weakest seams but a quarter against the
                           # strongest middles but a quarter (a seam may hide under a glare, a middle show
                           # the art's outline)
ROW_LONGEST = 1.8          # widths: a row shorter than this is not two cards end to end
ROW_REACH = 0.1            # of a card's length: how far a seam is looked for from its place
SIZED_SLACK = 0.15         # of a card's length: how far the cards of a row cut to size may be from it,
SIZED_COUNT_SLACK = 0.35   # ... and of a card: how far the row's length from a whole number of them
FORESHORTENED = 0.7        # the least a side looks of its length, the camera 45 degrees from straight down


def split_blob(contour: np.ndarray, short: float, long_: float, aspect_lo, aspect_hi,
               depth: int = 0, width: float = 0.0, budget: list[int] | None = None) -> list[tuple[np.ndarray, float]]:
    """Cut a region of several touching cards into cards.

    The cut runs between two notches of the outline (two rounded corners
    meeting, or the wedge of an angled joint) and must really part the region
    into two pieces of at least half a card each; pieces that are not yet one
    card are cut again.  With the cards' size known (`short`, `long_`: those
    found alone), a piece of two cards' area is not one card, however card-like
    its outline: two nearly square cards end to end make a fine 1:2 card.
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
    local = (contour - offset).astype(np.int32)
    cuts = candidate_cuts(local, width) if width else None
    if cuts == []:
        return []   # (most pieces cut again end here: no mask drawn for them)
    mask = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    cv2.drawContours(mask, [local], -1, 255, -1)
    if not width:
        # the width of a strip of cards is twice its deepest inside point
        width = 2.0 * float(cv2.distanceTransform(mask, cv2.DIST_L2, 3).max())
        cuts = candidate_cuts(local, width)
    min_piece = 0.35 * width * width
    # perspective makes near cards larger than the typical one, but not twice as large
    max_card = 1.8 * short * long_ if short else 1.9 * width * width * aspect_hi
    for p, q in cuts:
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
            hull = cv2.convexHull(part)
            quad = fit_quad(part, hull=hull)
            score = 0.0 if quad is None else quad_shape_score(quad, part, area, aspect_lo, aspect_hi,
                                                              cv2.contourArea(hull))
            if score > 0 and area < max_card:
                out.append((quad, score * 0.95))
            else:
                out.extend(split_blob(part, short, long_, aspect_lo, aspect_hi, depth + 1, width, budget))
        return out
    return []


def candidate_cuts(contour: np.ndarray, width: float, limit: int = 6):
    """Chords that may separate two touching cards, best first.

    Between two notches about one card width apart (rounded corners meeting on
    both sides of a seam); or, where a chain bends, from the hinge (a deep
    notch on the inner side) straight across the strip.
    """
    pts = contour.reshape(-1, 2)   # (whole numbers; the few points used are made float)
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
    depths = defects[:, 3] / 256.0
    deep = depths > max(1.0, 0.025 * width)
    depth, at = depths[deep], defects[deep, 2]
    notch = pts[at].astype(np.float64)
    # every pair of notches a card width or so apart (in the order of the outline: the
    # sort below is stable, so ties keep it)
    gap = notch[:, None, :] - notch[None, :, :]
    length = np.hypot(gap[..., 0], gap[..., 1])
    i, j = np.nonzero((0.5 * width <= length) & (length <= 1.6 * width) & _upper(len(at)))
    length = length[i, j]
    scores = [length - 1.5 * (depth[i] + depth[j])]
    ends = [(notch[a], notch[b]) for a, b in zip(i.tolist(), j.tolist())]
    # from each deep notch (a hinge) straight inward, along the bisector of the outline there
    hinge = depth >= 0.08 * width
    p, k = notch[hinge], at[hinge]
    step = max(2, int(0.15 * width))
    a = pts[(k - step) % len(pts)].astype(np.float64) - p
    b = pts[(k + step) % len(pts)].astype(np.float64) - p
    na, nb = np.hypot(a[:, 0], a[:, 1]), np.hypot(b[:, 0], b[:, 1])
    ok = (na != 0) & (nb != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        inward = -(a / na[:, None] + b / nb[:, None])
        n = np.hypot(inward[:, 0], inward[:, 1])
        ok &= n >= 1e-6
        inward = inward / n[:, None]
    scores.append(1.2 * width - 1.5 * depth[hinge][ok])
    ends += list(zip(p[ok] - inward[ok] * 0.05 * width, p[ok] + inward[ok] * 1.3 * width))
    best = np.argsort(np.concatenate(scores), kind="stable")[:limit]
    return [ends[k] for k in best]


@functools.lru_cache(maxsize=64)
def _upper(n: int) -> np.ndarray:
    """Which (i, j) of an n x n table have i < j: each pair once."""
    return np.triu(np.ones((n, n), bool), 1)


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


def split_to_size(contour: np.ndarray, short: float, long_: float) -> list[tuple[np.ndarray, float]]:
    """A straight strip of touching cards of known size, cut into as many equal cards as its
    length holds.

    A learnt map's row fades over a few pixels each side, so the strip looks wider than its
    cards and `split_evenly`, which takes a card's length from the strip's width, miscounts
    them; the cards' size where the strip lies (from the cards found alone) does not depend
    on how sharp the map is.  Each card keeps the strip's centre line and at most the cards'
    width (cut as wide as the faded strip, fewer pieces showed a card's step at their sides).
    """
    area = cv2.contourArea(contour)
    (cx, cy), (w, h), angle = cv2.minAreaRect(contour)
    width, length = min(w, h), max(w, h)
    if not short or area < ROW_FILL * w * h or not 0.7 * short <= width <= ROW_WIDEST * short:
        return []
    # the size is a plane fitted over the picture, a few hundredths off: a long row's count
    # is refused when it lies between two whole numbers, not guessed
    cards = length / long_
    n = int(round(cards))
    if n < 2 or abs(cards - n) > SIZED_COUNT_SLACK or abs(length / n - long_) > SIZED_SLACK * long_:
        return []
    a = np.deg2rad(angle)
    u = np.array([np.cos(a), np.sin(a)]) if w >= h else np.array([-np.sin(a), np.cos(a)])
    v = np.array([-u[1], u[0]]) * min(width, short) / 2
    start = np.array([cx, cy]) - u * length / 2
    out = []
    for k in range(n):
        p0, p1 = start + u * length * k / n, start + u * length * (k + 1) / n
        out.append((np.array([p0 - v, p1 - v, p1 + v, p0 + v], np.float64), 0.5))
    return out


def cut_row(contour: np.ndarray, gradient, aspect_hi: float, max_cards: int = 16) -> list[tuple[np.ndarray, float]]:
    """A straight row of touching cards cut at its seams, whatever size its cards are.

    Cards put away in a row lie edge to edge with no notch between them, and
    with no card found alone nothing says how long one is; but their seams
    repeat along the row.  On the table the row is a rectangle of equal cards;
    in the picture its outline is a quadrilateral, and the perspective that
    maps the one onto the other also says where every seam of a row of n cards
    falls (nearer cards longer, seams leaning as the view shears the row).  The
    row has the n whose seams (each looked for a little either side of its
    place: cards lie a little askew) stand out the most over the middles of
    its cards: half as many cards leave seams in their middles, twice as many
    put half their seams in the middles of cards.
    """
    area = cv2.contourArea(contour)
    rect = cv2.minAreaRect(contour)
    (_, _), (w, h), _ = rect
    width, length = min(w, h), max(w, h)
    if length < ROW_LONGEST * width or area < ROW_FILL * w * h:
        return []
    quad = squared(contour, cv2.boxPoints(rect).astype(np.float64))
    sides = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
    if sides[0] + sides[2] < sides[1] + sides[3]:
        quad = np.roll(quad, -1, axis=0)        # quad[0] -> quad[1] runs along the row
    # the unit square (x along the row, y across it) onto the row's outline
    to_row = cv2.getPerspectiveTransform(np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]), np.float32(quad))
    steps = max(16, int(length))
    xs = (np.arange(steps) + 0.5) / steps
    ys = np.linspace(0.1, 0.9, 9)
    grid = np.stack(np.broadcast_arrays(xs[:, None], ys[None, :]), axis=-1).reshape(-1, 1, 2)
    at = cv2.perspectiveTransform(grid.astype(np.float64), to_row).reshape(steps, 9, 2)
    strength = _seam_strength_at(gradient, at)
    lo, hi = FORESHORTENED / aspect_hi, aspect_hi / FORESHORTENED
    # (plus one: on plain paper and a plain table most of the row shows no gradient at all)
    best, best_score = None, ROW_SEAM * float(np.percentile(strength, 90)) + 1.0
    for count in range(2, max_cards + 1):
        if not lo * width <= length / count <= hi * width:
            continue
        reach = max(1, int(ROW_REACH * steps / count))
        near = ndimage.maximum_filter1d(strength, 2 * reach + 1, mode="nearest")
        seams = (np.arange(1, count) * steps / count).astype(int)
        middles = ((np.arange(count) + 0.5) * steps / count).astype(int)
        score = np.quantile(near[seams], ROW_QUANTILE) - np.quantile(near[middles], 1 - ROW_QUANTILE)
        if score >= best_score:
            best, best_score = (seams, reach), score
    if best is None:
        return []
    seams, reach = best
    cuts = [0.0] + [(t - reach + int(np.argmax(strength[t - reach:t + reach + 1])) + 0.5) / steps
                    if reach <= t < steps - reach else (t + 0.5) / steps for t in seams] + [1.0]
    corners = np.array([[[a, 0], [b, 0], [b, 1], [a, 1]] for a, b in zip(cuts, cuts[1:])], np.float64)
    cards = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), to_row).reshape(-1, 4, 2)
    return [(card, 0.5) for card in cards]


def peel_strip(contour: np.ndarray, gradient, sizes: CardSizes, max_cards: int = 16) -> list[tuple[np.ndarray, float]]:
    """A snake of touching cards (straight or bending at its joints) cut into cards.

    Where no notch shows in its outline, two touching cards still part along
    a straight seam right across the strip (their edges, or a thin gap of
    table), while the art inside a card runs mostly along it.  From one end of
    the strip, the strongest such seam about a card's length on ends the first
    card; the rest is peeled the same way, each card along the strip's own
    direction there, so a snake may bend at every joint.  `sizes` says how
    large a card looks where each is peeled: a row running away from the
    camera shrinks card by card.  A card needs only a third of its area in
    the region: on paper of nearly the table's colour, the faintest map
    holds a speckle of each card, and what is not a card is left for the
    recogniser to refuse.
    """
    x, y, w, h = cv2.boundingRect(contour)
    origin = np.array([x - 1, y - 1], np.float64)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(mask, [contour - origin.astype(np.int32)], -1, 1, -1)
    inner = cv2.distanceTransform(mask, cv2.DIST_L2, 3)
    _, half_width, _, widest = cv2.minMaxLoc(inner)
    short, _ = sizes.at(np.array(widest, np.float64) + origin)
    if not 0.7 * short <= 2.0 * half_width <= ROW_WIDEST * short:
        return []
    ys, xs = np.nonzero(mask)
    step = max(1, len(xs) // 4000)
    pts = np.stack([xs[::step], ys[::step]], axis=1).astype(np.float64)
    left = np.ones(len(pts), bool)
    out = []
    while len(out) < max_cards:
        rest = pts[left]
        if not len(rest):
            break
        end = rest[np.argmax(np.linalg.norm(rest - rest.mean(axis=0), axis=1))]
        short, long_ = sizes.at(end + origin)
        area = short * long_
        if len(rest) * step < 0.6 * area:
            break
        near = rest[np.linalg.norm(rest - end, axis=1) < long_]
        if len(near) < 10:
            break
        # the strip's direction near its end, pointing into the strip: its straight sides
        # bound the piece near the end, so the piece's least rectangle lies along them
        (_, _), (rw, rh), angle = cv2.minAreaRect(near.astype(np.float32))
        a = np.deg2rad(angle)
        along = np.array([np.cos(a), np.sin(a)]) if rw >= rh else np.array([-np.sin(a), np.cos(a)])
        u = along if (near.mean(axis=0) - end) @ along >= 0 else -along
        n = np.array([-u[1], u[0]])
        t = (rest - end) @ u
        across = (rest - end) @ n
        t0 = t.min()
        mid = float(np.median(across[t <= t0 + 1.3 * long_]))
        start = end + t0 * u + mid * n
        length = _seam(gradient, start + origin, u, n, short, long_)
        if float((t > t0 + length).sum()) * step < 0.6 * area:
            length = max(length, float(t.max() - t0))   # the last card: the rest of the strip
        inside = (t >= t0) & (t <= t0 + length) & (np.abs(across - mid) <= short / 2)
        if inside.sum() * step < PEEL_FILL * short * length:
            break
        out.append((np.array([start - n * short / 2, start + n * short / 2,
                              start + u * length + n * short / 2,
                              start + u * length - n * short / 2]) + origin, 0.5))
        idx = np.flatnonzero(left)
        left[idx[t <= t0 + length]] = False
    return out


def _seam(gradient, start: np.ndarray, u: np.ndarray, n: np.ndarray, short: float, long_: float) -> float:
    """How far along `u` from `start` the strongest straight seam across the strip lies (about a card on).
    `gradient`: as `_gradient_at` takes it."""
    ts = np.arange(0.75 * long_, 1.25 * long_, 1.0)
    ss = np.linspace(-0.4 * short, 0.4 * short, 9)
    gx, gy = _gradient_at(gradient, start[None, None, :] + ts[:, None, None] * u + ss[None, :, None] * n)
    along = np.abs(gx * u[0] + gy * u[1])
    # a seam crosses the whole strip: the weakest of the three strip thirds counts
    return float(ts[int(np.argmax(_thirds(along).min(axis=0)))])


def _seam_strength_at(gradient, at: np.ndarray) -> np.ndarray:
    """How strongly a straight seam runs along each row of sample points `at` (lines x 9 x 2)
    across a strip: the gradient square to the line, less what runs along it (the slanted
    outline of a card's art), the weakest of the strip's thirds."""
    line = at[:, -1] - at[:, 0]
    line /= np.maximum(np.linalg.norm(line, axis=1, keepdims=True), 1e-9)
    square = np.stack([line[:, 1], -line[:, 0]], axis=1)
    gx, gy = _gradient_at(gradient, at)
    across = np.abs(gx * square[:, :1] + gy * square[:, 1:])
    across = np.maximum(0.0, across - np.abs(gx * line[:, :1] + gy * line[:, 1:]))
    return _thirds(across).min(axis=0)


def _gradient_at(gradient, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lightness gradient (gx, gy) sampled at the points `at` (..., 2).

    `gradient`: the gradient of the whole picture, or a `SeamGradient` that
    makes it only where it is sampled.
    """
    mx, my = at[..., 0].astype(np.float32), at[..., 1].astype(np.float32)
    if isinstance(gradient, SeamGradient):
        gradient = gradient.around(mx, my)
    gx, gy = gradient
    return cv2.remap(gx, mx, my, cv2.INTER_LINEAR), cv2.remap(gy, mx, my, cv2.INTER_LINEAR)


def _thirds(samples: np.ndarray) -> np.ndarray:
    """The means of the three thirds of the samples across a strip (9 of them)."""
    return np.stack([samples[:, :3].mean(axis=1), samples[:, 3:6].mean(axis=1), samples[:, 6:].mean(axis=1)])


class SeamGradient:
    """The gradient of the (3x3-blurred) lightness, made only in the windows seams are sampled in.

    Seams are looked for in a few strips of a frame, each a few hundred
    samples; blurring and differentiating the whole picture for them cost
    more than all the peeling.  Each window is made with a margin of two
    pixels (what the blur and the 3x3 Sobel reach) and written into
    picture-sized arrays, so the values and the sample coordinates are
    exactly those of the whole-picture gradient.
    """

    HALO = 2

    def __init__(self, lightness: np.ndarray):
        self.L = lightness
        h, w = lightness.shape
        self.gx = np.zeros((h, w), np.float32)   # (untouched pages cost nothing)
        self.gy = np.zeros((h, w), np.float32)

    def around(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(gx, gy), correct at least wherever bilinear sampling at (xs, ys) reads."""
        h, w = self.L.shape
        x0, x1 = max(0, int(np.floor(xs.min())) - 1), min(w, int(np.ceil(xs.max())) + 2)
        y0, y1 = max(0, int(np.floor(ys.min())) - 1), min(h, int(np.ceil(ys.max())) + 2)
        if x0 < x1 and y0 < y1:
            e = self.HALO
            wx0, wy0, wx1, wy1 = max(0, x0 - e), max(0, y0 - e), min(w, x1 + e), min(h, y1 + e)
            blurred = cv2.GaussianBlur(self.L[wy0:wy1, wx0:wx1], (3, 3), 0)
            dx, dy = cv2.spatialGradient(blurred)
            inner = (slice(y0 - wy0, y1 - wy0), slice(x0 - wx0, x1 - wx0))
            self.gx[y0:y1, x0:x1] = dx[inner]
            self.gy[y0:y1, x0:x1] = dy[inner]
        return self.gx, self.gy


SIDE_FILL = 0.95           # the least share of a card hung on a side of a region that the region fills
SIDE_RIM = 0.8             # ... and of its other three sides that lies on edges
SIDE_TRUST = 0.5           # its score at best: a guess's, as an even split's
SIDE_CORNERS = 16          # a fan's outline simplifies to a few corners; a ragged region's (a cloth, a hand) to more


def card_on_side(contour: np.ndarray, short: float, long_: float, edges: np.ndarray,
                 max_aspect: float) -> list[tuple[np.ndarray, float]]:
    """The card one of whose sides is a straight stretch of the region's outline.

    A fan of face-down cards is one region, and no cut parts it: the cards
    overlap.  But the top card lies whole, one of its sides along the
    outline, its other sides fine lines across the cards beneath.
    Perspective changes a card's apparent proportions with its turn, so from
    each straight stretch of the outline the card is grown inward to the
    depth at which its far side and its two flanks lie on edges (`edges`,
    the picture's Canny edges); the size found elsewhere only bounds its
    area.  The best-supported card (the largest of equals) that the region
    fills is kept.
    """
    x, y, w, h = cv2.boundingRect(contour)
    local = (contour.reshape(-1, 2) - (x, y)).astype(np.int32)
    poly = cv2.approxPolyDP(local, 0.04 * short, True).reshape(-1, 2).astype(np.float64)
    if len(poly) > SIDE_CORNERS:
        return []
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [local], -1, 255, -1)
    near_edge = cv2.dilate(edges[y:y + h, x:x + w], np.ones((3, 3), np.uint8))
    pace = max(1.0, short / 32)                     # pixels between samples (a card is 32 samples deep)
    depth = np.arange(0.6 * short, 1.4 * long_, pace)
    steps = np.arange(0.0, depth[-1] + pace, pace)
    at = np.minimum(np.round(depth / pace).astype(int), len(steps) - 1)
    along = np.linspace(0.1, 0.9, 16)
    best, best_key = [], (0.0, 0.0)
    for i in range(len(poly)):
        p, q = poly[i], poly[(i + 1) % len(poly)]
        length = float(np.hypot(*(q - p)))
        if not 0.4 * short <= length <= 1.3 * long_:
            continue
        u = (q - p) / length
        n = np.array([-u[1], u[0]])
        mid = (p + q) / 2
        if cv2.pointPolygonTest(local, (float(mid[0] + 3 * n[0]), float(mid[1] + 3 * n[1])), False) < 0:
            n = -n
        # where the cards beneath poke out past a corner, the stretch stops short of it: the
        # side may go on along the same line, across them, to a flank further out
        for s0, s1 in _spans(near_edge, p, u, n, length, short, long_, pace):
            span = s1 - s0
            if not 0.6 * short <= span <= 1.3 * long_:
                continue
            c0, c1 = p + s0 * u, p + s1 * u
            far = c0 + along[None, :, None] * (c1 - c0) + depth[:, None, None] * n
            far_on = _on_edges(near_edge, far.reshape(-1, 2)).reshape(len(depth), -1).mean(axis=1)
            # each flank's share on edges from the side down to every depth
            flanks = [np.cumsum(_on_edges(near_edge, c + steps[:, None] * n))[at] / (at + 1) for c in (c0, c1)]
            support = np.minimum(far_on, 0.5 * (flanks[0] + flanks[1]))
            area = span * depth
            ok = (support >= SIDE_RIM) & (area > 0.6 * short * long_) & (area < 1.5 * short * long_) & \
                (np.maximum(span, depth) <= max_aspect * np.minimum(span, depth))
            for t in np.flatnonzero(ok)[np.argsort(-support[ok])][:3]:
                quad = np.array([c0, c1, c1 + n * depth[t], c0 + n * depth[t]])
                inside = np.zeros_like(mask)
                cv2.fillConvexPoly(inside, np.round(quad).astype(np.int32), 255)
                fill = cv2.countNonZero(cv2.bitwise_and(inside, mask)) / max(1, cv2.countNonZero(inside))
                key = (round(float(support[t]), 1), float(area[t]))
                if fill >= SIDE_FILL and key > best_key:
                    best, best_key = [(quad + (x, y), SIDE_TRUST * fill * float(support[t]))], key
    return best


def _spans(edges: np.ndarray, p: np.ndarray, u: np.ndarray, n: np.ndarray, length: float,
           short: float, long_: float, pace: float) -> list[tuple[float, float]]:
    """Where a card's side along the stretch p + s u (0 <= s <= length) may start and end.

    At the stretch's own ends, or, past either, where a flank runs inward on
    edges for the least depth of a card and the side itself lies on edges
    up to it.
    """
    starts, ends = [0.0], [length]
    deep = np.arange(2.0, 0.6 * short, pace)
    for sign, out in ((-1.0, starts), (1.0, ends)):
        past = np.arange(1.0, 0.5 * long_, pace)
        origin = p if sign < 0 else p + length * u
        where = origin + sign * past[:, None] * u
        side = np.cumsum(_on_edges(edges, where)) / np.arange(1, len(past) + 1)
        flank = _on_edges(edges, (where[:, None, :] + deep[None, :, None] * n).reshape(-1, 2))
        flank = flank.reshape(len(past), len(deep)).mean(axis=1)
        good = np.flatnonzero((side >= SIDE_RIM) & (flank >= SIDE_RIM))
        if len(good):
            k = good[np.argmax(flank[good])]
            out.append(float(-past[k] if sign < 0 else length + past[k]))
    return [(a, b) for a in starts for b in ends]


def _on_edges(edges: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """1.0 where a point (x, y) falls on an edge pixel, else 0.0."""
    xs = np.clip(np.round(pts[:, 0]).astype(int), 0, edges.shape[1] - 1)
    ys = np.clip(np.round(pts[:, 1]).astype(int), 0, edges.shape[0] - 1)
    return (edges[ys, xs] > 0).astype(np.float64)
