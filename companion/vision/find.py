"""Find every card on the table as a four-cornered outline.

Candidates come from several binary maps in which cards stand out (`maps`,
and the learnt card-or-table map of `paper`, whose cores of cards are one
card each even where cards touch: `paper_cards`): every region whose outline
is a convex quadrilateral of card proportions is a candidate (`regions`).
Regions made of several cards touching end to end are cut into cards (`cut`,
`split`), at the size the cards found alone show (`sizes`), and overlapping
candidates keep the one whose outline fits best (`suppress`).  All of it runs
on a downscaled copy; only the final corners are refined at full resolution,
in small windows (`refine`).  A watched game adds the map of what differs from
the empty table (`background`), whose cards are taken where the picture alone
shows none.
"""
from __future__ import annotations

import cv2
import numpy as np

from .cut import cut_regions
from .outline import CardOutline, order_corners
from .paper import PaperModel
from .profile import Profile
from .quads import shortest_side
from .refine import refine_corners
from .regions import map_regions, opened_cards, search_maps
from .sizes import card_sizes
from .suppress import overlaps, size_prior, suppress, without_split_pairs

WORK_LONG_SIDE = 1024      # px: the downscaled copy the search runs on (see work_scale)
MIN_SHORT_SIDE = 40        # px in the original image: smaller cards are not looked for
SMALLEST_PICTURE = 64      # px: a narrower picture holds no such card with table around it to tell it by
FRAME_MARGIN = 2.0         # px of the searched copy: a corner this near the picture's edge lies on it


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
               picture: tuple[int, ...] | None = None, known: list | None = None) -> list[CardOutline]:
    """Every card-like quadrilateral in a BGR image, corners in image pixels.

    `fans`: also the least rectangle of each region of a few cards' size that no cut parts
    and nothing else was found in (most often a fan of cards overlapping), scored
    `cut.REGION_SCORE`: no card itself, but where a fan's top card may be looked for.

    `unlike_table`: when a game is watched, how far each pixel of the searched copy
    (`searched_copy`) lies from the empty table this camera saw there (0-255,
    `background.difference_map`): one more map of where cards may lie.

    `picture`: the shape of the whole picture `image` is a part of, when it is one (a
    tracker reads only the part around a change): the part is searched at the whole's
    scale and with its sizes (`maps`), as the same cards would be in the whole.

    `known`: the outlines (four corners each, image pixels) of cards known to lie there (a
    watched table's cards whose pixels did not change): a row of them is not cut again (on a
    game's tables of long snakes, the costliest step), its known cards stand for its pieces."""
    if min(image.shape[:2]) < SMALLEST_PICTURE:
        return []
    small, scale = searched_copy(image, picture)
    whole = None if picture is None else (round(picture[0] * scale), round(picture[1] * scale))
    min_side = max(8.0, min_short_side * scale * 0.8)
    aspect_lo, aspect_hi = (profile or Profile()).aspect_range
    if unlike_table is not None and unlike_table.shape[:2] != small.shape[:2]:
        unlike_table = None
    known_quads = [np.asarray(k, np.float64).reshape(4, 2) * scale for k in known or []]
    found = find_quads(small, min_side, aspect_lo, aspect_hi, paper, scale, unlike_table, fans, whole, known_quads)
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


def find_quads(small: np.ndarray, min_side: float, aspect_lo: float = 1.0, aspect_hi: float = 1.6,
               paper: PaperModel | None = None, scale: float = 1.0,
               unlike_table: np.ndarray | None = None, fans: bool = False,
               whole: tuple[int, ...] | None = None, known: list | None = None
               ) -> list[tuple[np.ndarray, float]]:
    """(quad, score) for every card found in the image, already downscaled by `scale` (and
    with `fans`, the regions `find_cards` says); `whole`: the shape of the whole searched
    picture it is a part of (`maps`); `known`: quads of cards known to lie there, in the
    downscaled image's pixels (`find_cards`)."""
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
                                                  aspect_hi, fans, known or [])
    last_resort = regions.last_resort + searched
    # no card is smaller than the smallest looked for, whether found alone or cut from a row
    # (a size learnt from slivers of a striped cloth would cut more slivers)
    pieces = [(q, s) for q, s in pieces if shortest_side(q) >= min_side * 0.9] + maps.cores
    known_sizes = sizes if len(alone) >= 3 else None
    if pieces:
        kept = without_split_pairs(kept, [q for q, _ in pieces], known_sizes)
    found = suppress(size_prior(pieces + kept, known_sizes))
    unlike_pieces = [(q, s) for q, s in unlike_pieces if shortest_side(q) >= min_side * 0.9]
    found += [(q, s) for q, s in suppress(size_prior(regions.unlike_singles + unlike_pieces, known_sizes))
              if not overlaps(q, found)]
    return found + [(q, s) for q, s in suppress(last_resort) if not overlaps(q, found)]
