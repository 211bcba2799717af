"""Find every card on the table as a four-cornered outline.

Candidates come from several binary maps in which cards stand out (`maps`,
and the learnt card-or-table map of `paper` when its model is given, whose
cores of cards are one card each even where cards touch: `core_cards`):
every region whose outline is a convex quadrilateral of card proportions is
a candidate (`quads`), and overlapping candidates keep the one whose outline
fits best.  Regions made of several cards touching end to end are cut into
cards (`split`).  All of it runs on a downscaled copy; only the final corners
are refined at full resolution, in small windows.  A watched game adds the map
of what differs from the empty table (`background`), whose cards are taken
where the picture alone shows none.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import cv2
import numpy as np

from .maps import CardMap, candidate_masks, evenly_lit, local_contrast_masks, rare_colour_masks
from .outline import CardOutline, order_corners, polygon_iou
from .paper import CORE_DEPTH, PaperModel, paper_maps, pixel_features, searched_size, sides_on_map
from .profile import Profile
from .quads import (MOST_HULL_FILL, apparent_aspect, edge_contrast, fit_quad, intersect_lines, quad_shape_score,
                    rim_support, signed_inside, squared)
from .sizes import CardSizes
from .split import (SPLIT_BUDGET, SeamGradient, card_on_side, cut_row, peel_strip, split_blob, split_evenly,
                    split_to_size)

WORK_LONG_SIDE = 1024      # px: the downscaled copy the search runs on (see work_scale)
MIN_SHORT_SIDE = 40        # px in the original image: smaller cards are not looked for
SMALLEST_PICTURE = 64      # px: a narrower picture holds no such card with table around it to tell it by
FRAME_MARGIN = 2.0         # px of the searched copy: a corner this near the picture's edge lies on it
MAX_APPARENT_ASPECT = 2.6  # a 1:1.6 card foreshortened by a 45-degree view
CONTAINER_SCORE = 0.8      # a candidate fitting this well replaces the parts of it found as cards
SETTLED_SCORE = 0.95       # a card fitting this well is not fitted again from another map
BOXED_SCORE = 0.85         # a least rectangle stands in for a failed polygon only when it fits this well
LOOSE_BOXED_SCORE = 0.7    # ... and this well, where nothing else is found (`last_resort`)
ROUNDED_BOXED_SCORE = 0.6  # ... or this well, in a blurred map, whose regions' corners are all rounded
ROUNDED_TRUST = 0.5        # a blurred map's outlines are the last resort: below any sharp map's
OPENED_TRUST = 0.5         # an outline fitted once bumps are opened off its region: below a cut piece's
OPENED_KEEPS = 0.67        # ... a region's area the opening must leave for its largest part to be refitted
PAIR_ASPECT = 1.75         # a quad this much longer than wide may be two square cards end to end
PAIR_AREA = 1.6            # ... and is, with this many times the area of the other cards where it lies
PIECE_DEPTH = 0.8          # a quad whose centre lies this many of its widths inside a row is a piece of a card
PIECES_NARROWER = 1.6      # rows this many times wider than the cards found alone hold no such card
RIM_SUPPORT = 0.7          # share of its outline along which a card cut from the edge map shows a rim
SOLID = 0.95              # share of its hull a region fills: one convex shape
ONE_CARD = 0.6            # card areas: a region of less is a piece of a card
TWO_CARDS = 1.2           # ... of less, at most one card (cards overlapping, or a card and some table)
FAN_CARDS = 1.6           # ... of less, perhaps a fan of cards overlapping
FAN_LEAST_CARDS = 1.0      # a region of fewer cards than this is one card at most ...
FAN_MOST_CARDS = 4.0       # ... and one of more that no cut parts is no fan ...
FAN_FILL = 0.6             # ... nor one filling less of its least rectangle
REGION_SCORE = 0.0         # the score of such a region's outline: to be searched, not a card
ALONE_CONTRAST = 0.45      # share of its outline showing a card's step: a card between two neighbours in a
                           # row shows the table along its two long sides only (a half, less some noise)
PIECE_CONTRAST = 0.6       # ... of a card cut from a row (where it was cut is a guess)
PAPER_FILL = 0.78          # a region of the learnt map filling this much of its least rectangle is a card
PAPER_ASPECT_SLACK = 1.3   # ... whose proportions are the deck's give or take this factor (the view squeezes)
PAPER_SNAP = 0.12          # ... its sides moved onto edges this many of its widths away at most
PAPER_TRUST = 0.55         # ... fitting below every polygon: a loose fit of a coarse map
PAPER_PIECE_CONTRAST = 0.3  # a card cut from a row of the learnt map: its map fades over a few pixels, so
                            # little of its outline shows the full step
CORE_FILL = 0.6            # a core filling this much of its least rectangle is one card's
CORE_LEAST_PIXELS = 6      # coarse pixels: a smaller core is a speck
CORE_LEVELS = (0.5, 0.65, 0.8)  # P(core) a core is cut at; a region of no card's shape is cut higher
CORE_PAPER_STEP = 0.4      # P(card) inside a card grown from a core, less P(card) around it: a card
                           # between two others in a row has paper beside it on two sides
CORE_TRUST = 0.9           # ... a card fitting below a clean polygon, above a guessed cut of a row


class Blob(NamedTuple):
    """A region of a map that is not one card by itself: none, or several touching."""

    contour: np.ndarray
    closed: bool               # from a closed map
    contrast_in: np.ndarray    # the image its cards' outlines are proven in
    step: float                # the colour step they show there
    area: float
    fill: float                # share of its least rectangle it fills


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
               min_short_side: float = MIN_SHORT_SIDE, paper: PaperModel | None = None,
               unlike_table: np.ndarray | None = None, fans: bool = False,
               picture: tuple[int, ...] | None = None) -> list[CardOutline]:
    """Every card-like quadrilateral in a BGR image, corners in image pixels.

    `fans`: also the least rectangle of each region of a few cards' size that no cut parts
    and nothing else was found in (most often a fan of cards overlapping), scored
    `REGION_SCORE`: no card itself, but where a fan's top card may be looked for.

    `unlike_table`: when a game is watched, how far each pixel of the searched copy
    (`searched_copy`) lies from the empty table this camera saw there (0-255,
    `background.difference_map`): one more map of where cards may lie.

    `picture`: the shape of the whole picture `image` is a part of, when it is one (a
    tracker reads only the part around a change): the part is searched at the whole's
    scale and with its sizes (`maps`), as the same cards would be in the whole."""
    if min(image.shape[:2]) < SMALLEST_PICTURE:
        return []
    small, scale = searched_copy(image, picture)
    whole = None if picture is None else (round(picture[0] * scale), round(picture[1] * scale))
    min_side = max(8.0, min_short_side * scale * 0.8)
    aspect_lo, aspect_hi = (profile or Profile()).aspect_range
    if unlike_table is not None and unlike_table.shape[:2] != small.shape[:2]:
        unlike_table = None
    found = find_quads(small, min_side, aspect_lo, aspect_hi, paper, scale, unlike_table, fans, whole)
    outlines = [CardOutline(order_corners(q / scale), s) for q, s in found]
    if scale < 1.0 and outlines:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        outlines = [refine_corners(gray, o) for o in outlines]
    return [o for o in outlines if not _side_on_frame(o.corners, image.shape, FRAME_MARGIN / scale)]


def searched_copy(image: np.ndarray, picture: tuple[int, ...] | None = None) -> tuple[np.ndarray, float]:
    """The downscaled copy of a picture that the search runs on, and its scale (`work_scale`;
    of the whole `picture`'s shape, when the image is a part of one)."""
    scale = work_scale(picture or image.shape)
    small = image if scale == 1.0 else cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return small, scale


def _side_on_frame(corners: np.ndarray, shape: tuple[int, ...], margin: float) -> bool:
    """Whether two corners lie on one edge of the picture: that side is the frame's, not a card's.

    Something cut by the frame (a label on a box, a card half out of view)
    has a straight side there whatever it is, and what is left of it may
    have a card's proportions; nothing says it is a card.
    """
    h, w = shape[:2]
    x, y = corners[:, 0], corners[:, 1]
    return any(int(np.count_nonzero(near)) >= 2 for near in
               (x <= margin, x >= w - 1 - margin, y <= margin, y >= h - 1 - margin))


# --------------------------------------------------------------------------- the search

class SearchMaps(NamedTuple):
    """The maps a picture's cards are looked for in, each with the image its regions' outlines
    are proven in (`contrast_in`: `lab`, `edges`, `paper_p`, `unlike_p` or a map of its own)."""

    lab: np.ndarray
    gray: np.ndarray
    edges: np.ndarray
    masks: list                      # (CardMap, contrast_in)
    paper_p: np.ndarray | None       # P(card) of the learnt map, (h, w, 1)
    unlike_p: np.ndarray | None      # how unlike the empty table, (h, w, 1)
    cores: list                      # (quad, score): one card each, from the learnt map's cores


class Regions(NamedTuple):
    """What the maps' regions are: cards by themselves, or regions of several to be cut."""

    singles: list                    # (quad, score, from a whole-only map)
    blobs: list                      # Blob
    last_resort: list                # (quad, score): cards fitted loosely, only where nothing else is
    unlike_singles: list             # (quad, score): cards of the unlike-the-table map
    bumpy: list                      # Bumpy: regions no card fitted, to open once the cards' size is known


def find_quads(small: np.ndarray, min_side: float, aspect_lo: float = 1.0, aspect_hi: float = 1.6,
               paper: PaperModel | None = None, scale: float = 1.0,
               unlike_table: np.ndarray | None = None, fans: bool = False,
               whole: tuple[int, ...] | None = None) -> list[tuple[np.ndarray, float]]:
    """(quad, score) for every card found in the image, already downscaled by `scale` (and
    with `fans`, the regions `find_cards` says); `whole`: the shape of the whole searched
    picture it is a part of (`maps`)."""
    maps = search_maps(small, min_side, aspect_lo, aspect_hi, paper, scale, unlike_table, whole)
    regions = map_regions(maps, small.shape, min_side, aspect_lo, aspect_hi)
    kept = suppress([(q, s) for q, s, _ in regions.singles])
    untaught = {id(q) for q, _, whole_only in regions.singles if whole_only}
    # rows of cards: the learnt map's where there is one (a dotted or striped cloth breaks
    # the edge map's rows into pieces a fraction of a card wide, and no card may lie alone)
    rows_in = maps.edges if maps.paper_p is None else maps.paper_p
    alone, sizes = card_sizes([q for q, _ in kept if id(q) not in untaught],
                              [b.contour for b in regions.blobs if b.contrast_in is rows_in],
                              aspect_lo, aspect_hi)
    kept = suppress(kept + opened_cards(regions.bumpy, sizes, min_side, aspect_lo, aspect_hi))
    pieces, unlike_pieces, searched = cut_regions(regions.blobs, kept, alone, sizes, maps, aspect_lo,
                                                  aspect_hi, fans)
    last_resort = regions.last_resort + searched
    # no card is smaller than the smallest looked for, whether found alone or cut from a row
    # (a size learnt from slivers of a striped cloth would cut more slivers)
    pieces = [(q, s) for q, s in pieces if _shortest_side(q) >= min_side * 0.9] + maps.cores
    known_sizes = sizes if len(alone) >= 3 else None
    if pieces:
        kept = without_split_pairs(kept, [q for q, _ in pieces], known_sizes)
    found = suppress(size_prior(pieces + kept, known_sizes))
    unlike_pieces = [(q, s) for q, s in unlike_pieces if _shortest_side(q) >= min_side * 0.9]
    found += [(q, s) for q, s in suppress(size_prior(regions.unlike_singles + unlike_pieces, known_sizes))
              if not _overlaps(q, found)]
    return found + [(q, s) for q, s in suppress(last_resort) if not _overlaps(q, found)]


def search_maps(small: np.ndarray, min_side: float, aspect_lo: float, aspect_hi: float,
                paper: PaperModel | None, scale: float, unlike_table: np.ndarray | None,
                whole: tuple[int, ...] | None) -> SearchMaps:
    """Every map the cards of `small` are looked for in (`find_quads`'s arguments)."""
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    maps, edges, distance = candidate_masks(lab, whole)
    # the last of these maps is made of edges: its regions have a rim by construction,
    # and cream paper on a cream cloth shows little colour contrast across it, so its
    # cards prove themselves by the rim (`edges`); filled, its regions are as solid as
    # a closed map's
    masks: list[tuple[CardMap, np.ndarray]] = [(m, lab) for m in maps[:-1]]
    masks.append((maps[-1]._replace(closed=True, step=0.0), edges))
    rarity, rare = rare_colour_masks(lab, whole)
    masks += [(m, rarity[..., None]) for m in rare]
    local, near_maps = local_contrast_masks(lab, whole)
    masks += [(m, local[..., None]) for m in near_maps]
    paper_p, cores = None, []
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    if paper is not None:
        card, core = paper.coarse_probability(pixel_features(lab, evenly_lit(lab[..., 0], whole), rarity,
                                                             local, distance, scale, whole))
        p = searched_size(card, lab.shape)
        paper_p = p[..., None]
        masks += [(m, paper_p) for m in paper_maps(p, whole)]
        cores = [(q, s) for q, s in core_cards(card, core, gray, aspect_lo, aspect_hi, p)
                 if _shortest_side(q) >= min_side * 0.9 and paper_step(p, q) >= CORE_PAPER_STEP]
    # What differs from the empty table is read as the learnt map is (both say "how likely
    # not table"), but only where the picture alone shows no card: the picture's own
    # outlines are the surer wherever it has them.
    unlike_p = None
    if unlike_table is not None:
        unlike_p = unlike_table[..., None]
        masks += [(m, unlike_p) for m in paper_maps(unlike_table, whole)]
    return SearchMaps(lab, gray, edges, masks, paper_p, unlike_p, cores)


def map_regions(maps: SearchMaps, shape: tuple[int, ...], min_side: float, aspect_lo: float,
                aspect_hi: float) -> Regions:
    """Every region of every map of card size, as a card by itself or as a region to cut."""
    min_area = min_side * min_side
    max_area = 0.5 * shape[0] * shape[1]
    edges, paper_p, unlike_p = maps.edges, maps.paper_p, maps.unlike_p
    singles: list[tuple[np.ndarray, float, bool]] = []
    blobs: list[Blob] = []
    last_resort, unlike_singles, bumpy = [], [], []
    seen: set[tuple[int, int, int, int, int]] = set()
    settled: list[tuple[int, int, int, int]] = []   # boxes of cards no other map will fit better
    for (mask, closed, step, whole_only, rounded), contrast_in in maps.masks:
        from_edges = contrast_in is edges
        to_cut = [] if whole_only else blobs
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        for c in contours:
            if len(c) < 4 * min_side * 0.8:
                continue
            area = cv2.contourArea(c)
            if area < min_area or area > max_area:
                continue
            x, y, w, h = cv2.boundingRect(c)
            if rounded and (min(x, y) <= 1 or x + w >= shape[1] - 1 or y + h >= shape[0] - 1):
                continue  # cut by the frame, a blurred region's rectangle is anything (a lit wall's corner)
            # the same region seen in another map of the same kind (the rarity map's
            # outline of a region can fit where a colour distance's did not)
            key = (x // 4, y // 4, w // 4, h // 4, contrast_in is maps.lab)
            if key in seen or any(_box_iou((x, y, w, h), b) > 0.9 for b in settled):
                continue
            seen.add(key)
            hull = cv2.convexHull(c)
            hull_area = cv2.contourArea(hull)
            rect = cv2.minAreaRect(c)
            (_, _), (rw, rh), _ = rect
            blob = Blob(c, closed, contrast_in, step, area, area / max(1.0, rw * rh))
            # not one convex card (many or none); a card seen at a slant is a parallelogram
            # that its least rectangle fits loosely, but it is still solid
            hull_loose = hull_area < 0.8 * rw * rh
            if (hull_loose or area < 0.5 * rw * rh) and area < SOLID * hull_area:
                if area > 1.6 * min_area and hull_loose:
                    to_cut.append(blob)
                continue
            quad = fit_quad(c, hull=hull)
            score = 0.0 if quad is None else quad_shape_score(quad, c, area, aspect_lo, aspect_hi, hull_area)
            if score == 0:
                # a bump on the outline (table texture caught on the rim) can take a corner of the
                # hull's polygon: the region's least rectangle, its sides refitted, is the other guess
                boxed = squared(c, cv2.boxPoints(rect).astype(np.float64))
                boxed_score = quad_shape_score(boxed, c, area, aspect_lo, aspect_hi, hull_area)
                if boxed_score >= (ROUNDED_BOXED_SCORE if rounded else BOXED_SCORE):
                    quad, score = boxed, boxed_score
                elif boxed_score >= LOOSE_BOXED_SCORE and not from_edges and not rounded and \
                        _shortest_side(boxed) >= min_side * 0.9 and \
                        edge_contrast(contrast_in, boxed, step) >= ALONE_CONTRAST:
                    last_resort.append((boxed, boxed_score))
            if score == 0 and not from_edges and not rounded:
                # a cloth's spots touching a card join its region as bumps on its outline:
                # opened by a disc wider than a spot, the region is the card's again (`opened_cards`)
                bumpy.append(Bumpy(c, min(rw, rh), contrast_in, step))
            if score == 0 and (contrast_in is paper_p or contrast_in is unlike_p):
                # a loose fit, and perhaps two cards side by side: only where nothing else is found
                loose, loose_score = _paper_card(maps.gray, rect, blob.fill, aspect_lo, aspect_hi)
                if loose_score > 0 and _shortest_side(loose) >= min_side * 0.9 and \
                        edge_contrast(contrast_in, loose, step) >= ALONE_CONTRAST:
                    last_resort.append((loose, loose_score))
            if score > 0 and _shortest_side(quad) >= min_side * 0.9:
                if contrast_in is unlike_p:
                    if edge_contrast(contrast_in, quad, step) >= ALONE_CONTRAST:
                        unlike_singles.append((quad, score))
                elif score >= 0.85 if from_edges else edge_contrast(contrast_in, quad, step) >= ALONE_CONTRAST:
                    singles.append((quad, score * ROUNDED_TRUST if rounded else score, whole_only))
                    if score >= SETTLED_SCORE and not rounded:
                        settled.append((x, y, w, h))
                    if apparent_aspect(quad) > PAIR_ASPECT:
                        to_cut.append(blob)
            elif area > 1.6 * min_area:
                to_cut.append(blob)
    return Regions(singles, blobs, last_resort, unlike_singles, bumpy)


def _best_fit(contour: np.ndarray, aspect_lo: float, aspect_hi: float) -> tuple[np.ndarray | None, float]:
    """The better scored of a region's fitted polygon and its least rectangle squared to it
    (the polygon of a well rounded outline may put a corner halfway along a side)."""
    area = cv2.contourArea(contour)
    hull = cv2.convexHull(contour)
    hull_area = cv2.contourArea(hull)
    boxed = squared(contour, cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float64))
    best, best_score = None, 0.0
    for quad in (fit_quad(contour, hull=hull), boxed):
        score = 0.0 if quad is None else quad_shape_score(quad, contour, area, aspect_lo, aspect_hi, hull_area)
        if score > best_score:
            best, best_score = quad, score
    return best, best_score


class Bumpy(NamedTuple):
    """A region of a map whose outline fitted no card."""

    contour: np.ndarray
    width: float                     # its least rectangle's short side
    contrast_in: np.ndarray          # the map whose edge contrast a card fitted to it must show
    step: float


def opened_cards(bumpy: list[Bumpy], sizes: CardSizes | None, min_side: float, aspect_lo: float,
                 aspect_hi: float) -> list[tuple[np.ndarray, float]]:
    """(quad, score) of the cards fitted to regions once their bumps are opened off, of one
    card's size where they lie (none while the cards' size is unknown).

    A region opened may also be two cards touching, or a fan, a card's shape
    too once opened: it is still cut (`cut_regions`), and kept here only with
    one card's area.  The opening is the finder's dearest step on a large
    region (a disc a fifth of its width), so a region is not opened when
    what the opening must leave of it is already too large for one card.
    """
    if not sizes:
        return []
    found = []
    for c, width, contrast_in, step in bumpy:
        least_refit = OPENED_KEEPS / MOST_HULL_FILL * cv2.contourArea(c)
        if least_refit >= PAIR_AREA * _largest_card_area(sizes, c):
            continue
        opened = _without_bumps(c, width)
        if opened is None:
            continue
        refit, refit_score = _best_fit(opened, aspect_lo, aspect_hi)
        if refit_score > 0 and _shortest_side(refit) >= min_side * 0.9 and _one_card(refit, sizes) and \
                edge_contrast(contrast_in, refit, step) >= ALONE_CONTRAST:
            found.append((refit, refit_score * OPENED_TRUST))
    return found


def _largest_card_area(sizes: CardSizes, contour: np.ndarray) -> float:
    """A bound on a card's area anywhere about a region: the size plane at the corners of its
    bounding box grown by half on every side.  A quad fitted to the opened region holds it and
    is hardly larger (`quad_shape_score`), so its centre lies well inside that box; and a plane's
    largest value over a box is at a corner."""
    x, y, w, h = cv2.boundingRect(contour)
    corners = [(x + dx * w, y + dy * h) for dx in (-0.5, 1.5) for dy in (-0.5, 1.5)]
    return max(s * l for s, l in map(sizes.at, corners))


def _without_bumps(contour: np.ndarray, width: float) -> np.ndarray | None:
    """The outline of a region opened by a disc a fifth of its `width` across (at least 5 px):
    what is left of its largest part, None when the opening took more than a third of it."""
    x, y, w, h = cv2.boundingRect(contour)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(mask, [contour - np.array([x - 1, y - 1], np.int32)], -1, 255, -1)
    k = max(5, 2 * int(round(0.1 * width)) + 1)
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    parts, _ = cv2.findContours(opened, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not parts:
        return None
    part = max(parts, key=cv2.contourArea)
    if cv2.contourArea(part) < OPENED_KEEPS * cv2.contourArea(contour):
        return None
    return part + np.array([x - 1, y - 1], np.int32)


def cut_regions(blobs: list[Blob], kept: list, alone: list, sizes: CardSizes | None, maps: SearchMaps,
                aspect_lo: float, aspect_hi: float, fans: bool) -> tuple[list, list, list]:
    """The cards cut from regions of several (`blobs`), given the cards found alone (`kept`,
    `alone`) and their sizes: (pieces, pieces of the unlike-the-table map, last resorts: fans'
    top cards and regions to search, only where nothing else is found)."""
    edges, paper_p, unlike_p = maps.edges, maps.paper_p, maps.unlike_p
    aspect = sizes.long / sizes.short if sizes else None
    # the most card-like regions first (they fill their bounding box), so that the
    # split budget goes to rows of cards before fragments of a patterned cloth
    blobs = sorted(blobs, key=lambda b: (b.contrast_in is unlike_p, -b.fill))
    cards_in: dict[int, float] = {}
    if sizes:
        # with the cards' size known, a region too small to hold two is at most one card,
        # and rows of many cards go first: each cut there parts more cards
        cards_in = {id(b): b.area / _card_area(sizes, b.contour) for b in blobs}
        blobs = [b for b in blobs if cards_in[id(b)] >= ONE_CARD]
        blobs.sort(key=lambda b: (b.contrast_in is unlike_p, -min(cards_in[id(b)], 12.0)))
    # seams between touching cards are looked for in the lightness
    gradient = SeamGradient(maps.lab[..., 0])
    pieces, unlike_pieces, last_resort = [], [], []
    budget = [SPLIT_BUDGET]
    blob_boxes: list[tuple[bool, np.ndarray, tuple[int, int, int, int]]] = []
    cards = [(q, q.min(axis=0), q.max(axis=0), s) for q, s in kept if apparent_aspect(q) <= PAIR_ASPECT]
    for blob in blobs:
        c, closed, contrast_in, step = blob.contour, blob.closed, blob.contrast_in, blob.step
        box = cv2.boundingRect(c)
        if any(cl == closed and seen_in is contrast_in and _box_iou(box, b) > 0.85
               for cl, seen_in, b in blob_boxes):
            continue  # the same group of cards, seen in another map of the same kind
        blob_boxes.append((closed, contrast_in, box))
        x, y, w, h = box
        near = [(q, s) for q, lo, hi, s in cards if lo[0] < x + w and hi[0] > x and lo[1] < y + h and hi[1] > y]
        if any(_contains_point(q, c) or _inside(c, q) for q, _ in near):
            continue  # the blob is that card, or a part of it (paper beside the body)
        if sizes and _explained(c, box, [q for q, s in near if s >= CONTAINER_SCORE], 0.5 * _card_area(sizes, c)):
            continue  # every card in it was found alone: cutting it would only find them again
        if sizes and cards_in[id(blob)] < FAN_CARDS:
            # perhaps a fan of cards overlapping, which no cut parts, or a card with something
            # beside it: the top card, a side of it along the outline, where nothing else is found
            last_resort.extend(card_on_side(c, *_card_size(sizes, c), edges, MAX_APPARENT_ASPECT))
        got = [] if sizes and cards_in[id(blob)] < TWO_CARDS else \
            cut_blob(blob, alone, sizes, gradient, aspect, aspect_lo, aspect_hi, budget)
        # a fan spread little is hardly larger than a card: too small to hold two, it is
        # still a region for its top card to be looked for in
        if fans and not got and sizes and FAN_LEAST_CARDS <= cards_in[id(blob)] <= FAN_MOST_CARDS \
                and blob.fill >= FAN_FILL:
            last_resort.append((order_corners(cv2.boxPoints(cv2.minAreaRect(c))), REGION_SCORE))
        if contrast_in is edges:
            pieces.extend((q, s) for q, s in got if rim_support(edges, q) >= RIM_SUPPORT)
        elif contrast_in is unlike_p:
            unlike_pieces.extend((q, s) for q, s in got
                                 if edge_contrast(contrast_in, q, step) >= PAPER_PIECE_CONTRAST)
        else:
            least = PAPER_PIECE_CONTRAST if contrast_in is paper_p else PIECE_CONTRAST
            pieces.extend((q, s) for q, s in got if edge_contrast(contrast_in, q, step) >= least)
    return pieces, unlike_pieces, last_resort


def cut_blob(blob: Blob, alone: list, sizes: CardSizes | None, gradient: SeamGradient,
             aspect: float | None, aspect_lo: float, aspect_hi: float, budget: list) -> list:
    """The cards a region of several is cut into: the cut that parts the most of them."""
    c = blob.contour
    # one card found alone may itself be two: its size bounds pieces only when others agree
    bound = _card_size(sizes, c) if len(alone) >= 2 else (0.0, 0.0)
    got = split_blob(c, *bound, aspect_lo, aspect_hi, budget=budget)
    if not got and aspect:
        got = split_evenly(c, aspect)
    if sizes and blob.closed:
        peeled = peel_strip(c, gradient, sizes)
        if len(peeled) > len(got):
            got = peeled
    row = cut_row(c, gradient, aspect_hi)
    if len(row) > len(got):
        got = row
    if len(got) > 1 or not sizes or len(alone) < 2:
        return got
    # no cut found: the strip cut to the size of the cards found alone
    sized = split_to_size(c, *_card_size(sizes, c))
    return sized if len(sized) > len(got) else got


def _overlaps(quad: np.ndarray, found: list[tuple[np.ndarray, float]]) -> bool:
    return any(polygon_iou(quad, f) > 0.2 or _contains(f, quad) or _contains(quad, f) for f, _ in found)


def _paper_card(gray: np.ndarray, rect, fill: float, aspect_lo: float,
                aspect_hi: float) -> tuple[np.ndarray | None, float]:
    """(quad, score) of a card from a region of the learnt map, or (None, 0).

    The learnt map is made on a coarse copy: its regions are the cards'
    places but their outlines are ragged, and no polygon fits them.  A region
    that fills its least rectangle as a card does is that card; its sides
    are then moved onto the picture's own edges nearby.
    """
    card = _snapped_rect(gray, rect, aspect_lo, aspect_hi) if fill >= PAPER_FILL else None
    return (None, 0.0) if card is None else (card, PAPER_TRUST * fill)


def core_cards(card: np.ndarray, core: np.ndarray, gray: np.ndarray, aspect_lo: float,
               aspect_hi: float, p: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """(quad, score) of a card around each core of the learnt map (coarse, P 0-1; `p`, its
    P(card) at the searched size, 0-255).

    A core is a card less a band a fifth of its width wide (`paper.CORE_DEPTH`
    of its half-width): its least rectangle grown by that band is about the
    card, whose sides are moved onto where P(card) falls (`paper.sides_on_map`)
    and then onto the picture's own edges nearby.  Where
    cards touch in a row, the map may not fall below one half between their
    cores, and one region holds several: it is looked at again at the higher
    levels (`CORE_LEVELS`), where the dips between the cards part it.
    """
    blurred = cv2.blur(core, (3, 3))
    fy, fx = gray.shape[0] / core.shape[0], gray.shape[1] / core.shape[1]
    bands = CORE_DEPTH / (1.0 - CORE_DEPTH)   # the two bands' width, in core widths
    out = []

    def rect_of(region: np.ndarray):
        """The least rectangle of a core's pixels (full-size px), and the share of it they fill."""
        ys, xs = np.nonzero(region)
        if len(xs) < CORE_LEAST_PIXELS:
            return None
        pts = (np.column_stack([xs, ys]).astype(np.float32) + 0.5) * np.float32([fx, fy])
        centre, (w, h), angle = cv2.minAreaRect(pts)
        return centre, (w + fx, h + fy), angle, len(pts) * fx * fy / max(1.0, (w + fx) * (h + fy))

    def grown(rect, pad: float = 0.0) -> np.ndarray | None:
        centre, (w, h), angle, fill = rect
        w, h = w + pad, h + pad
        if fill < CORE_FILL:
            return None
        grow = bands * min(w, h)
        return _snapped_rect(gray, sides_on_map(p, (centre, (w + grow, h + grow), angle)), aspect_lo, aspect_hi)

    def cards_in(region: np.ndarray, level: int) -> None:
        rect = rect_of(region)
        card = grown(rect) if rect else None
        if card is not None:
            out.append((card, CORE_TRUST * rect[3]))
            return
        if rect is None or level + 1 == len(CORE_LEVELS):
            return
        n, seeds = cv2.connectedComponents((region & (blurred > CORE_LEVELS[level + 1])).astype(np.uint8))
        if n <= 2:   # one seed or none: nothing parts the region
            if n == 2:
                cards_in(seeds == 1, level + 1)
            return
        # Cut higher, each core is narrower than one cut at this level: across the row (where
        # no neighbour joins it) the region shared among the seeds, each pixel to the nearest,
        # still shows the width at this level, and the seed is grown by what it lost there.
        _, nearest = cv2.distanceTransformWithLabels((seeds == 0).astype(np.uint8), cv2.DIST_L2, 3,
                                                     labelType=cv2.DIST_LABEL_CCOMP)
        for k in range(1, n):
            seed = seeds == k
            part, own = rect_of(region & (nearest == nearest[seed][0])), rect_of(seed)
            if part is None or own is None:
                continue
            card = grown(own, max(0.0, min(part[1]) - min(own[1])))
            if card is not None:
                out.append((card, CORE_TRUST * own[3]))
            else:
                cards_in(seed, level + 1)

    n, labels, stats, _ = cv2.connectedComponentsWithStats((blurred > CORE_LEVELS[0]).astype(np.uint8))
    for k in range(1, n):
        if stats[k, cv2.CC_STAT_AREA] >= CORE_LEAST_PIXELS:
            cards_in(labels == k, 0)
    return out


def _snapped_rect(gray: np.ndarray, rect, aspect_lo: float, aspect_hi: float) -> np.ndarray | None:
    """The corners of a rotated rectangle of the deck's proportions (give or take what the view
    squeezes), its sides moved onto the picture's own edges nearby; None for other proportions."""
    (_, _), (w, h), _ = rect
    short = min(w, h)
    if not aspect_lo / PAPER_ASPECT_SLACK <= max(w, h) / max(1.0, short) <= aspect_hi * PAPER_ASPECT_SLACK:
        return None
    box = CardOutline(order_corners(cv2.boxPoints(rect).astype(np.float64)))
    return refine_corners(gray, box, max(3, int(PAPER_SNAP * short))).corners


def paper_step(p: np.ndarray, quad: np.ndarray) -> float:
    """Mean P(card) (0-255 map) a little inside the quad less a little outside it, 0-1."""
    margin = 8
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - margin, 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + margin, (p.shape[1] - 1, p.shape[0] - 1))
    crop = p[y0:y1 + 1, x0:x1 + 1]
    inside = np.zeros(crop.shape, np.uint8)
    cv2.fillPoly(inside, [np.int32(np.round(quad - (x0, y0)))], 1)
    within = cv2.erode(inside, np.ones((5, 5), np.uint8)) > 0
    ring = (cv2.dilate(inside, np.ones((9, 9), np.uint8)) > 0) & (inside == 0)
    if not within.any() or not ring.any():
        return 0.0
    return float(crop[within].mean() - crop[ring].mean()) / 255.0


def size_prior(cands: list[tuple[np.ndarray, float]],
               sizes: CardSizes | None = None) -> list[tuple[np.ndarray, float]]:
    """Lower the score of candidates much smaller or larger than a card where they lie.

    Every card of the deck has the same size, so a quad covering a part of a
    card (its paper beside the body, say) is far smaller than its neighbours;
    perspective changes sizes too, hence the tolerance of about a third.  The
    card's size comes from `sizes` when given (learnt from whole regions that
    were cards by themselves): cutting touching cards apart can leave many
    small pieces, which must not set the size.  Without it, the median
    candidate is the typical card.
    """
    if len(cands) < 3:
        return cands
    areas = np.array([abs(cv2.contourArea(q.astype(np.float32))) for q, _ in cands])
    if sizes:
        expected = np.array([np.prod(sizes.at(q.mean(axis=0))) for q, _ in cands])
    else:
        expected = np.full(len(cands), float(np.median(areas)))
    out = []
    for (q, score), area, typical in zip(cands, areas, expected):
        off = abs(np.log(max(area, 1e-6) / typical))
        out.append((q, score * float(np.clip(1.0 - max(0.0, off - 0.3), 0.3, 1.0))))
    return out


def card_sizes(found: list[np.ndarray], rows: list[np.ndarray],
               aspect_lo: float, aspect_hi: float) -> tuple[list[np.ndarray], CardSizes]:
    """The cards found alone that tell a card's size, and that size.

    On a table of the paper's colour, the colour maps see only the snakes'
    bodies, and a piece of body between two bends is a fine small
    quadrilateral: learnt from, it halves every card, and no row is cut
    right.  The edge map, or better the learnt map, holds those rows (`rows`,
    its regions of several cards): a piece lies along the middle of one
    (`_part_of_strip`), and when the rows are far wider than everything
    found alone, all of it was pieces; a row's width is then a card's short
    side (its long side unknown: the middle of the deck's proportions).
    Rows are weighed by their area: a map also holds fragments narrower than
    any card (a stripe of the cloth, a card's corner), but little of it.
    The few cards found alone may all be seen squeezed across their width,
    and look longer than any card of the deck; a card turned the other way
    is not: the long side is at most `aspect_hi` times the short.
    """
    alone = _without_doubles([q for q in found if not _part_of_strip(q, rows)])
    sizes = CardSizes.from_cards(alone)
    if len(rows) >= 2:
        width = _weighted_median([_strip_width(c) for c in rows], [cv2.contourArea(c) for c in rows])
        if not sizes or width > PIECES_NARROWER * sizes.short:
            return [], CardSizes(width, 0.5 * (aspect_lo + aspect_hi) * width)
    return alone, sizes.at_most(aspect_hi)


def _weighted_median(values: list[float], weights: list[float]) -> float:
    """The value below which half the total weight lies."""
    order = np.argsort(values)
    cumulative = np.cumsum(np.asarray(weights, float)[order])
    return float(np.asarray(values, float)[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


def _without_doubles(quads: list[np.ndarray]) -> list[np.ndarray]:
    """The cards found alone less those that are two cards end to end.

    Two nearly square cards touching end to end make a fine card of twice
    the length, found alone as readily as a real one; learnt from, a few of
    them make every card look larger than it is, and rows are then cut at
    the wrong lengths.  A quad is two cards when it is long (`PAIR_ASPECT`)
    and has about twice the area the other cards have where it lies.
    """
    long_ones = [apparent_aspect(q) > PAIR_ASPECT for q in quads]
    others = [q for q, long_one in zip(quads, long_ones) if not long_one]
    if len(others) < 3 or len(others) == len(quads):
        return quads
    sizes = CardSizes.from_cards(others)
    return others + [q for q, long_one in zip(quads, long_ones) if long_one and _one_card(q, sizes)]


def _part_of_strip(quad: np.ndarray, regions: list[np.ndarray]) -> bool:
    """Whether a quad lies along the middle of a region far wider than itself.

    A piece of a snake's body between two bends is a fine quadrilateral, and
    on a table of the paper's colour it stands out alone; but it runs down the
    middle of its row of cards, which the edge map holds as one region: its
    centre lies deeper inside that region than the piece is wide.  A card in
    a row lies no deeper than half its own width.
    """
    outline = CardOutline(quad)
    x, y = (float(v) for v in outline.centre)
    for c in regions:
        bx, by, bw, bh = cv2.boundingRect(c)
        if bx <= x <= bx + bw and by <= y <= by + bh and \
                cv2.pointPolygonTest(c, (x, y), True) > PIECE_DEPTH * outline.short_side:
            return True
    return False


def _strip_width(contour: np.ndarray) -> float:
    """Twice the deepest point inside a region: the width of a row of cards."""
    x, y, w, h = cv2.boundingRect(contour)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(mask, [contour], -1, 255, -1, offset=(1 - x, 1 - y))
    return 2.0 * float(cv2.distanceTransform(mask, cv2.DIST_L2, 3).max())


def _card_size(sizes: CardSizes, contour: np.ndarray) -> tuple[float, float]:
    """(short, long) of a card where the region lies (at the centre of its bounding box)."""
    x, y, w, h = cv2.boundingRect(contour)
    return sizes.at((x + w / 2, y + h / 2))


def without_split_pairs(kept: list[tuple[np.ndarray, float]], pieces: list[np.ndarray],
                        sizes: CardSizes | None) -> list[tuple[np.ndarray, float]]:
    """`kept` less each long quad (`PAIR_ASPECT`) a piece cut from a region lies in: a region
    that splits into cards is not one long card.  Unless it is no pair by its area where it
    lies (`_one_card`): a card seen at a slant across its width looks as long."""
    return [(q, s) for q, s in kept if apparent_aspect(q) <= PAIR_ASPECT or _one_card(q, sizes)
            or not any(_contains(q, p) for p in pieces)]


def _one_card(quad: np.ndarray, sizes: CardSizes | None) -> bool:
    """Whether a quad has less than `PAIR_AREA` cards' area where it lies, too little for two
    (False when the cards' size is not known)."""
    return sizes is not None and \
        abs(cv2.contourArea(quad.astype(np.float32))) < PAIR_AREA * float(np.prod(sizes.at(quad.mean(axis=0))))


def _card_area(sizes: CardSizes, contour: np.ndarray) -> float:
    """The area a card has where the region lies."""
    short, long_ = _card_size(sizes, contour)
    return short * long_


def _shortest_side(quad: np.ndarray) -> float:
    c = quad.tolist()
    sides = []
    for i in range(4):
        dx, dy = c[i - 1][0] - c[i][0], c[i - 1][1] - c[i][1]
        sides.append(math.sqrt(dx * dx + dy * dy))
    return min(sides)


def _box_iou(a, b) -> float:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    iw = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    ih = max(0, min(ay + ah, by + bh) - max(ay, by))
    inter = iw * ih
    return inter / float(aw * ah + bw * bh - inter) if inter else 0.0


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
        if clashes and score >= CONTAINER_SCORE and apparent_aspect(quad) <= PAIR_ASPECT:
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


def _explained(contour: np.ndarray, box, cards: list[np.ndarray], min_left: float) -> bool:
    """Whether well-fitting cards cover a blob but for less than `min_left` pixels.

    Cutting rows of touching cards apart is the costliest step of the search,
    and the same row shows in several maps; once its cards were found alone
    (in another map, or at another threshold) there is nothing left to cut.
    """
    if not cards:
        return False
    x, y, w, h = box
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [contour], -1, 255, -1, offset=(-x, -y))
    for q in cards:
        cv2.fillConvexPoly(mask, np.round(q - (x, y)).astype(np.int32), 0)
    return cv2.countNonZero(mask) < min_left


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


# --------------------------------------------------------------------------- full-resolution refinement

def refine_corners(gray: np.ndarray, outline: CardOutline, window: int = 6) -> CardOutline:
    """Move each side onto the strongest nearby edge at full resolution.

    Each side is sampled across at 12 places along it (all four sides in one
    remap); the strongest step of each profile, where strong, gives a point
    of the side, and a robust line through them the side.
    """
    c = outline.corners
    h, w = gray.shape
    d = c[[1, 2, 3, 0]] - c
    length = np.hypot(d[:, 0], d[:, 1])
    if length.min() < 8:
        return outline
    u = d / length[:, None]
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    ts = np.linspace(0.2, 0.8, 12)[None, :] * length[:, None]                 # (4, 12)
    offs = np.arange(-window, window + 1, dtype=np.float64)
    samples = c[:, None, None, :] + ts[:, :, None, None] * u[:, None, None, :] + offs[None, None, :, None] * n[:, None, None, :]
    xs = samples[..., 0].astype(np.float32)
    ys = samples[..., 1].astype(np.float32)
    outside = (xs.min(axis=(1, 2)) < 1) | (ys.min(axis=(1, 2)) < 1) | \
        (xs.max(axis=(1, 2)) > w - 2) | (ys.max(axis=(1, 2)) > h - 2)
    prof = cv2.remap(gray, xs.reshape(-1, len(offs)), ys.reshape(-1, len(offs)), cv2.INTER_LINEAR)
    grad = np.abs(np.diff(prof.astype(np.float32).reshape(4, len(ts[0]), len(offs)), axis=2))
    k = np.argmax(grad, axis=2)
    strong = np.take_along_axis(grad, k[..., None], axis=2)[..., 0] > 12
    shift = offs[k] + 0.5
    pts = c[:, None, :] + ts[:, :, None] * u[:, None, :] + shift[:, :, None] * n[:, None, :]
    lines = []
    for i in range(4):
        if outside[i] or strong[i].sum() < 5:
            lines.append((c[i], u[i]))
            continue
        vx, vy, x0, y0 = cv2.fitLine(pts[i][strong[i]].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    out = []
    for i in range(4):
        p = intersect_lines(lines[i - 1], lines[i])
        if p is None or np.hypot(*(p - c[i])) > 2 * window:
            return outline
        out.append(p)
    return CardOutline(np.array(out), outline.score)
