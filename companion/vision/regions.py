"""The maps a picture's cards are looked for in, and what each region of them is.

A region whose outline is a convex quadrilateral of card proportions, with a
card's step across its outline, is a card by itself; a region that is not
one convex shape, or a long one, may be several cards to cut (`Blob`, `cut`).
A region no card fits may be one with a cloth's spots caught on its outline
(`Bumpy`), opened once the cards' size is known (`opened_cards`).
"""
from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from .maps import CardMap, candidate_masks, evenly_lit, local_contrast_masks, rare_colour_masks
from .paper import PaperModel, paper_maps, pixel_features, searched_size
from .paper_cards import CORE_PAPER_STEP, core_cards, paper_card, paper_polygon, paper_step
from .quads import (MOST_HULL_FILL, apparent_aspect, box_iou, edge_contrast, fit_quad, quad_shape_score,
                    shortest_side, squared)
from .sizes import PAIR_AREA, PAIR_ASPECT, CardSizes, one_card

SETTLED_SCORE = 0.95       # a card fitting this well is not fitted again from another map
BOXED_SCORE = 0.85         # a least rectangle stands in for a failed polygon only when it fits this well
LOOSE_BOXED_SCORE = 0.7    # ... and this well, where nothing else is found (`Regions.last_resort`)
ROUNDED_BOXED_SCORE = 0.6  # ... or this well, in a blurred map, whose regions' corners are all rounded
ROUNDED_TRUST = 0.5        # a blurred map's outlines are the last resort: below any sharp map's
OPENED_TRUST = 0.5         # an outline fitted once bumps are opened off its region: below a cut piece's
OPENED_KEEPS = 0.67        # ... a region's area the opening must leave for its largest part to be refitted
SOLID = 0.95               # share of its hull a region fills: one convex shape
ALONE_CONTRAST = 0.45      # share of its outline showing a card's step: a card between two neighbours in a
                           # row shows the table along its two long sides only (a half, less some noise)


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


class Blob(NamedTuple):
    """A region of a map that is not one card by itself: none, or several touching."""

    contour: np.ndarray
    closed: bool               # from a closed map
    contrast_in: np.ndarray    # the image its cards' outlines are proven in
    step: float                # the colour step they show there
    area: float
    fill: float                # share of its least rectangle it fills


class Regions(NamedTuple):
    """What the maps' regions are: cards by themselves, or regions of several to be cut."""

    singles: list                    # (quad, score, from a whole-only map)
    blobs: list                      # Blob
    last_resort: list                # (quad, score): cards fitted loosely, only where nothing else is
    unlike_singles: list             # (quad, score): cards of the unlike-the-table map
    bumpy: list                      # Bumpy: regions no card fitted, to open once the cards' size is known


class Bumpy(NamedTuple):
    """A region of a map whose outline fitted no card."""

    contour: np.ndarray
    width: float                     # its least rectangle's short side
    contrast_in: np.ndarray          # the map whose edge contrast a card fitted to it must show
    step: float


def search_maps(small: np.ndarray, min_side: float, aspect_lo: float, aspect_hi: float,
                paper: PaperModel | None, scale: float, unlike_table: np.ndarray | None,
                whole: tuple[int, ...] | None) -> SearchMaps:
    """Every map the cards of `small` are looked for in (`find.find_quads`'s arguments)."""
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
                 if shortest_side(q) >= min_side * 0.9 and paper_step(p, q) >= CORE_PAPER_STEP]
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
            if key in seen or any(box_iou((x, y, w, h), b) > 0.9 for b in settled):
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
                if contrast_in is unlike_p and hull_loose:
                    # or one card at a slant whose region the blur rounded and the table's
                    # likeness bit into (`_loosely_fitted`; so loose a region fills too
                    # little of its least rectangle for `paper_card`)
                    last_resort += _loosely_fitted(maps.gray, blob, None, fit_quad(c, hull=hull), min_side,
                                                   aspect_lo, aspect_hi)
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
                        shortest_side(boxed) >= min_side * 0.9 and \
                        edge_contrast(contrast_in, boxed, step) >= ALONE_CONTRAST:
                    last_resort.append((boxed, boxed_score))
            if score == 0 and not from_edges and not rounded:
                # a cloth's spots touching a card join its region as bumps on its outline:
                # opened by a disc wider than a spot, the region is the card's again (`opened_cards`)
                bumpy.append(Bumpy(c, min(rw, rh), contrast_in, step))
            if score == 0 and (contrast_in is paper_p or contrast_in is unlike_p):
                # a loose fit, and perhaps two cards side by side: only where nothing else is found
                last_resort += _loosely_fitted(maps.gray, blob, rect, quad if contrast_in is unlike_p else None,
                                               min_side, aspect_lo, aspect_hi)
            if score > 0 and shortest_side(quad) >= min_side * 0.9:
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


def _loosely_fitted(gray: np.ndarray, blob: Blob, rect, quad: np.ndarray | None, min_side: float,
                    aspect_lo: float, aspect_hi: float) -> list[tuple[np.ndarray, float]]:
    """[(quad, score)] of the card a coarse map's region (`blob`) is when no polygon fits it
    closely: fitted loosely to its least rectangle `rect` when given (`paper_card`), else to
    its polygon `quad` when given (`paper_polygon`), if it shows a card's step along its
    outline; else [].

    Only the unlike-the-table map's regions are given a polygon: each is something that came
    onto a table seen bare, while the learnt map's loose regions on a patterned cloth are as
    often the cloth (development tables: a card more found, two false ones)."""
    loose, score = (None, 0.0) if rect is None else paper_card(gray, rect, blob.fill, aspect_lo, aspect_hi)
    if score == 0 and quad is not None:
        loose, score = paper_polygon(gray, quad, blob.area, aspect_lo, aspect_hi)
    if score > 0 and shortest_side(loose) >= min_side * 0.9 and \
            edge_contrast(blob.contrast_in, loose, blob.step) >= ALONE_CONTRAST:
        return [(loose, score)]
    return []


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


def opened_cards(bumpy: list[Bumpy], sizes: CardSizes | None, min_side: float, aspect_lo: float,
                 aspect_hi: float) -> list[tuple[np.ndarray, float]]:
    """(quad, score) of the cards fitted to regions once their bumps are opened off, of one
    card's size where they lie (none while the cards' size is unknown).

    A region opened may also be two cards touching, or a fan, a card's shape
    too once opened: it is still cut (`cut.cut_regions`), and kept here only with
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
        if refit_score > 0 and shortest_side(refit) >= min_side * 0.9 and one_card(refit, sizes) and \
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
    return max(map(sizes.area_at, corners))


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
