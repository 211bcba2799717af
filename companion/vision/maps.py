"""Where cards may lie: binary maps of a (downscaled) picture in which cards stand out as regions.

Cards differ from the table, not from a fixed colour: the paper may be white,
cream or dark and the table anything.  Each map marks what cannot be table in
its own way (far from the table's colours at a few thresholds, a colour the
table's border seldom shows, a region enclosed by edges), opened to keep the
notches between touching cards or closed to bridge a body's dark outline.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import cv2
import numpy as np
from scipy import ndimage

from .quads import CLEAR_STEP

BORDER_SHARE = 0.06   # of the picture's short side: the ring taken to show the table
RARITY_BINS = 32      # per Lab axis: 8 units wide, finer than cream from white
TABLE_SHARE = 0.8     # about how much of a picture is table
RARE = 230            # P(table | colour) under a tenth: the border is only a sample of the table
HALF_RARE = 200       # under a fifth: on a cloth whose light squares are of the paper's colour
LOCAL_WINDOW = 0.4    # of the picture's short side: the table around a card, far wider than the card
LOCAL_LEVEL = 2.5     # times the table's own median distance from itself: the paper of a dim card


class CardMap(NamedTuple):
    """A binary map in which cards stand out as regions."""

    mask: np.ndarray
    closed: bool                # closed to bridge a body's outline (else opened: notches kept)
    step: float = CLEAR_STEP    # the colour step a card of this map shows across its outline
    whole_only: bool = False    # its regions are cards only whole: never cut apart, never teaching the size
    rounded: bool = False       # blurred: its cards' corners are rounded, their least rectangles fit them


# The sizes below that follow the cards' size (closings, the light's blur, the local
# table's window) are shares of the picture searched.  When it is a part of a camera's
# picture (a tracker reads only the part around a change), they are shares of the whole
# picture (`whole`, its (height, width) as searched): the cards are as large in the part as
# in the whole, and a part read otherwise than the whole misreads what the whole reads.
# The border ring stays the part's own: around a change, it is the table there.


def _closing_size(shape: tuple[int, ...]) -> int:
    """The closing that bridges a body's outline: about half a percent of the picture."""
    return max(3, int(round(max(shape[0], shape[1]) / 200)))


def candidate_masks(lab: np.ndarray, whole: tuple[int, ...] | None = None
                    ) -> tuple[list[CardMap], np.ndarray, np.ndarray]:
    """Binary maps in which cards are likely to stand out as regions, the edges the
    last of them is made of (`rim_edges`) and the distance from the table's colours.

    A pixel is foreground when its colour is far from every colour the table
    is made of (a patterned cloth has several).  Open maps keep the notches
    where two touching cards' rounded corners meet (what splitting needs);
    closed maps bridge the snake's dark outline where it runs into a
    connecting edge and would otherwise cut the paper in two.
    """
    lab = cv2.GaussianBlur(lab, (3, 3), 0)
    dist = table_distance(lab)
    opening = np.ones((3, 3), np.uint8)
    k = _closing_size(whole or lab.shape)
    closing = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    out = []
    # L1 distances (about 1.3 times the Euclidean ones); on a smooth table, cards
    # paler in contrast than the lowest of them still stand out of its own noise,
    # and show no more than that level across their outline
    noise = float(np.percentile(_ring(dist[..., None]), 90))
    levels = (18, 28, 44) if 2.0 * noise > 14 else (max(8.0, 2.0 * noise), 18, 28, 44)
    for t in levels:
        m = cv2.morphologyEx(cv2.threshold(dist, t, 255, cv2.THRESH_BINARY)[1], cv2.MORPH_OPEN, opening)
        step = min(CLEAR_STEP, t)
        out.append(CardMap(m, False, step))
        out.append(CardMap(cv2.morphologyEx(m, cv2.MORPH_CLOSE, closing), True, step))
    edges = rim_edges(lab[..., 0])
    out.append(CardMap(edge_regions(edges, k + 2), False))
    return out, edges, dist


def rare_colour_masks(lab: np.ndarray, whole: tuple[int, ...] | None = None) -> tuple[np.ndarray, list[CardMap]]:
    """Maps of the pixels whose colour the table's border seldom shows, and the rarity map.

    A patterned cloth shares colours with the paper (white squares beside
    cream cards) and a lamp spreads the table over many shades, so a few
    table colours and a distance miss cards there.  Instead the border ring,
    where the table runs out of the frame, gives the table's own colour
    histogram, and every colour is scored by how much more common it is in
    the whole picture than on the table (histogram back-projection): the
    paper is common inside and rare on the border however close its hue.

    Where the cloth's light squares are of the paper's colour, the border
    shows that colour too and the paper is only half rare: a second pair of
    maps holds it.  On real tables, half-rare colours also make large ragged
    regions, whose pieces would be false cards, and a false card alone would
    teach a wrong card size: those maps yield only regions that are a card
    whole.
    """
    rarity = colour_rarity(cv2.GaussianBlur(lab, (5, 5), 0), whole)
    return rarity, rare_maps(rarity, whole)


def rare_maps(rarity: np.ndarray, whole: tuple[int, ...] | None = None) -> list[CardMap]:
    """The open and closed maps of the rare pixels and of the half-rare ones (whole cards only)."""
    k = _closing_size(whole or rarity.shape)
    closing = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    out = []
    for level in (RARE, HALF_RARE):
        m = cv2.morphologyEx(cv2.threshold(rarity, level, 255, cv2.THRESH_BINARY)[1], cv2.MORPH_OPEN,
                             np.ones((3, 3), np.uint8))
        whole = level == HALF_RARE
        out += [CardMap(m, False, whole_only=whole),
                CardMap(cv2.morphologyEx(m, cv2.MORPH_CLOSE, closing), True, whole_only=whole)]
    return out


def local_contrast_masks(lab: np.ndarray, whole: tuple[int, ...] | None = None
                         ) -> tuple[np.ndarray, list[CardMap]]:
    """The distance of each pixel from the table around it, and the open and closed maps of it.

    In dim light the camera's noise is as strong as the step from cream
    paper to a grey cloth, and a vignette darkens the table's corners by
    more: no distance from the table's colours holds the paper, only its
    ink.  Blurred, the noise falls below the step, and measured from the
    table around it (a median over a window far wider than a card), the
    paper stands out wherever it lies.  The blur rounds the cards' corners,
    so these maps' regions are fitted by their least rectangles; and since
    the fit is poor, they are cards only whole (`whole_only`).
    """
    h, w = lab.shape[:2]
    short = min((whole or lab.shape)[:2])
    f = max(1, short // 60)
    coarse = cv2.resize(lab, (w // f, h // f), interpolation=cv2.INTER_AREA)
    window = int(LOCAL_WINDOW * (short // f)) | 1
    table = cv2.merge([cv2.medianBlur(np.ascontiguousarray(coarse[..., i]), window) for i in range(3)])
    table = cv2.resize(table, (w, h), interpolation=cv2.INTER_LINEAR)
    blurred = cv2.GaussianBlur(lab, (0, 0), 2.0)
    dist = cv2.addWeighted(cv2.absdiff(blurred[..., 0], table[..., 0]), 0.6,
                           cv2.absdiff(blurred[..., 1], table[..., 1]), 1.0, 0)
    dist = cv2.add(dist, cv2.absdiff(blurred[..., 2], table[..., 2]))
    level = LOCAL_LEVEL * max(1.0, float(np.percentile(_ring(dist[..., None]), 50)))
    k = _closing_size(whole or lab.shape)
    closing = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    m = cv2.morphologyEx(cv2.threshold(dist, level, 255, cv2.THRESH_BINARY)[1], cv2.MORPH_OPEN,
                         np.ones((3, 3), np.uint8))
    # inside, the paper lies above the level; outside, the table about a level and a half below
    step = 0.5 * level
    return dist, [CardMap(m, False, step, whole_only=True, rounded=True),
                  CardMap(cv2.morphologyEx(m, cv2.MORPH_CLOSE, closing), True, step, whole_only=True, rounded=True)]


def evenly_lit(L: np.ndarray, whole: tuple[int, ...] | None = None) -> np.ndarray:
    """Lightness divided by the light falling on the table (its large-scale blur), at mid-grey.

    A lamp pool or vignetting makes the middle of the table lighter or darker
    than its border; cards are small beside the blur and change it little.
    """
    h, w = L.shape
    f = max(1, min((whole or L.shape)[:2]) // 64)
    light = cv2.resize(L, (w // f, h // f), interpolation=cv2.INTER_AREA).astype(np.float32)
    light = cv2.resize(cv2.GaussianBlur(light, (0, 0), 8.0), (w, h), interpolation=cv2.INTER_LINEAR)
    # (OpenCV's max and min for numpy's maximum and clip: the quotient is never negative;
    # each in place, as the lightness is made float in one pass: a frame's worth of floats each)
    even = cv2.divide(L.astype(np.float32), cv2.max(light, 1.0, dst=light), scale=128.0)
    return cv2.min(even, 255.0, dst=even).astype(np.uint8)


def colour_rarity(lab: np.ndarray, whole: tuple[int, ...] | None = None) -> np.ndarray:
    """Per pixel (uint8), 255 where its colour cannot be table, 0 where the table is that colour.

    P(table | colour) = share of table x P(colour | border) / P(colour | picture),
    the border's histogram smoothed over neighbouring bins, since the table's
    colours in the middle of the picture differ a little from the border's.
    A lamp pool lights the middle unlike the border, so colours are also
    compared with the light divided out; a colour is rare if rare either way
    (dividing out the light also moves a pattern's colours a little).
    """
    even = lab.copy()
    even[..., 0] = evenly_lit(lab[..., 0], whole)
    return cv2.max(_rarity(lab), _rarity(even))


def _rarity(lab: np.ndarray) -> np.ndarray:
    """`colour_rarity` of the colours as given: border and picture counted in 32^3 bins.

    OpenCV's histogram and back-projection do the per-pixel work (a numpy bin
    index per pixel cost more than the rest of the map); the counts are exact
    integers either way, so the result is the same to the bit.
    """
    ranges = [0, 256] * 3
    bins = [RARITY_BINS] * 3
    on_border = cv2.calcHist([_ring(lab)[:, None, :]], [0, 1, 2], None, bins, ranges)
    on_border = ndimage.gaussian_filter(on_border, 0.6, mode="constant")
    in_picture = cv2.calcHist([lab], [0, 1, 2], _every_other(lab.shape[:2]), bins, ranges).astype(np.float64)
    p_table = TABLE_SHARE * (on_border / on_border.sum()) / np.maximum(in_picture / in_picture.sum(), 1e-9)
    table = (255.0 * (1.0 - np.minimum(1.0, p_table))).astype(np.uint8).astype(np.float32)
    # a 3-d array would reach OpenCV as 32x32 pixels of 32 channels: wrap it as a 3-d Mat
    table = cv2.Mat(table, wrap_channels=False)
    return cv2.calcBackProject([lab], [0, 1, 2], table, ranges, 1.0)


@functools.lru_cache(maxsize=8)
def _every_other(shape: tuple[int, int]) -> np.ndarray:
    """A mask of every other pixel of every other row (a frame size repeats: made once)."""
    mask = np.zeros(shape, np.uint8)
    mask[::2, ::2] = 255
    mask.setflags(write=False)
    return mask


def _ring(a: np.ndarray) -> np.ndarray:
    """Every other pixel of the picture's border ring, one row each."""
    m = max(2, int(BORDER_SHARE * min(a.shape[0], a.shape[1])))
    c = a.shape[2]
    return np.concatenate([a[:m:2, ::2].reshape(-1, c), a[-m::2, ::2].reshape(-1, c),
                           a[m:-m:2, :m:2].reshape(-1, c), a[m:-m:2, -m::2].reshape(-1, c)])


def rim_edges(L: np.ndarray) -> np.ndarray:
    """The lightness edges (Canny) strong beside the table's own: cards' rims and art.

    Edges scale with the light, but a smooth pale table (cream paper on cream
    laminate, its cards' rims a few units of lightness deep) would then lose
    its rims: the bar is also kept to half again the table's own strongest
    gradients.
    """
    v = float(np.median(L[::4, ::4]))
    high = min(max(24.0, 0.6 * v), max(24.0, 1.5 * table_gradient(L)))
    return cv2.Canny(L, max(8.0, 0.4 * high), high)


def edge_regions(edges: np.ndarray, k: int) -> np.ndarray:
    """Regions enclosed by edges: a card on a table of its own colour still has a rim.

    The card's rim and the art inside it form one connected set of edges; its
    outer contour, filled, is the card (or a row of touching cards).  Table
    texture touching the rim is trimmed off by an opening.
    """
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(edges)
    cv2.drawContours(filled, contours, -1, 255, -1)
    return cv2.morphologyEx(filled, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))


def table_gradient(L: np.ndarray) -> float:
    """The 99th percentile of the lightness gradient (as Canny measures it) on the border ring."""
    m = max(3, int(BORDER_SHARE * min(L.shape)))   # (a strip's edge pixels are left out: 3 keeps one)
    strips = (L[:m], L[-m:], L[m:-m, :m], L[m:-m, -m:])
    g = [np.abs(cv2.Sobel(t, cv2.CV_16S, 1, 0)).astype(np.int32) + np.abs(cv2.Sobel(t, cv2.CV_16S, 0, 1))
         for t in strips if t.size]
    return float(np.percentile(np.concatenate([x[1:-1, 1:-1].ravel() for x in g]), 99))


def table_colours(lab: np.ndarray, share: float = 0.1, max_colours: int = 4) -> np.ndarray:
    """The colours the table is made of: the common colours of the picture's border.

    The table runs out of the frame on every side while cards mostly lie
    inside it, so the border ring shows the table (a patterned cloth has
    several colours); the most common colour of the whole picture is kept too.
    """
    ring = _ring(lab)
    whole = lab[::4, ::4].reshape(-1, 3)
    colours = []
    for sub, min_share in ((ring, share), (whole, 1.0)):
        q = (sub // 16).astype(np.int32)
        keys = q[:, 0] * 256 + q[:, 1] * 16 + q[:, 2]
        counts = np.bincount(keys, minlength=4096)
        order = _most_common(counts, max_colours)
        # each bin's mean colour: sums of whole numbers are exact (in any order), so as np.mean's
        values = sub.astype(np.float64)
        colours.append(_bin_sum(values, keys, order[0]) / counts[order[0]])
        for key in order[1:max_colours]:
            if counts[key] < min_share * len(keys):
                break
            colours.append(_bin_sum(values, keys, key) / counts[key])
    return np.array(colours, np.float32)


def _most_common(counts: np.ndarray, n: int) -> np.ndarray:
    """The bins in order of their counts, most first, as far as the first `n` (at least).

    As `np.argsort(counts)[::-1]`, whose sort of the 4096 bins (most of them
    empty, ties it is slow on) cost more than the rest of the table's colours:
    the bins in use are sorted instead, and where any two of the largest
    counts tie (which the sort orders its own way) all of them as before.
    """
    used = np.flatnonzero(counts)
    top = used[np.argsort(counts[used])[-(n + 1):]]
    if len(top) <= n or len(np.unique(counts[top])) <= n:
        return np.argsort(counts)[::-1]
    return top[::-1]


def _bin_sum(values: np.ndarray, keys: np.ndarray, key: int) -> np.ndarray:
    """The sum of the colours (whole numbers, as float64) that fall in one bin: a product with
    the bin's 0/1 mask, exact as a weighted bincount is, and cheaper for the few bins wanted."""
    return (keys == key).astype(np.float64) @ values


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
