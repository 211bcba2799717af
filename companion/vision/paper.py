"""Where the table stops and the cards begin, learnt pixel by pixel (`PaperModel`).

Each thresholded map of `maps` holds the cards on some tables and loses them
on others: cream paper on a cloth whose light squares are cream shares every
colour with the table, and only its lack of the cloth's pattern tells it
apart.  A small classifier weighs, for each pixel of a coarse copy of the
picture, its colour beside the table's (the border ring's), how rare that
colour is on the table, how smooth and how edged its neighbourhood is at
three widths, and how those compare with the table's own: what the table
looks like is measured on every picture, so the model learns what a card is
*against* the table rather than any one table's colours.  It is trained on
rendered tables of known truth (`companion train`); its map is one more map
for `find`, whose outlines must still prove themselves as cards.

Cards touching end to end make one region of paper, and the seam between
two of them is a line a pixel or two wide.  So the model tells three
classes apart: table, a card's rim (its outer band) and a card's core (its
middle, a fifth of its width or more from its outline).  Cores of touching
cards stay apart where their paper does not, and each is one card
(`paper_cards.core_cards`).  The thin dark and light lines a seam leaves are kept
at the searched copy's resolution and pooled by their maximum, so that the
coarse copy does not average them away.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

from .maps import CardMap, _closing_size, _ring
from .predict import probabilities

PAPER_FILE = "paper.joblib"        # in models/, beside the recogniser
COARSE_LONG_SIDE = 480             # px: cards of 40 px in a 1280 px picture keep 15 px here
COARSE_MOST_REDUCTION = 6          # from the picture: a card of 40 px keeps 7 px (4K: see coarse_factor)
CONTEXT_WINDOWS = (5, 11, 21, 41)  # coarse px: the first stage's map is averaged over these
PAPER_LEVEL = 128                  # a pixel more likely card than table
PAPER_STEP = 100                   # P(card) x 255 falls by this much across a card's outline
TABLE, RIM, CORE = 0, 1, 2         # the classes: a card is its rim and its core
CORE_DEPTH = 0.4                   # a core pixel lies this share of the card's half-width inside it
PREDICT_ROWS = 1 << 16             # pixels per pass through a network: its layers' memory stays small
FIT_INWARD = 0.3                   # a side of a card grown from its core moves this many card widths in ...
FIT_OUTWARD = 0.2                  # ... or this many out at most, onto where P(card) falls most steeply
FIT_ACROSS = 0.6                   # ... measured across this middle share of the side (a coarse map's corners are round)
FIT_LEAST_FALL = 4                 # P(card) x 255 per px: a side where the map falls more gently stays put
FIT_MOST_SQUEEZE = 1.2             # a fit changing the card's proportions by more keeps the card as it was
SEAM_SIZE = 5                      # searched px: lines up to about this wide (a seam, a gap between cards)
FEATURE_NAMES = (
    "L", "a", "b", "L_even", "rarity", "local", "table_distance",
    "L_std3", "L_std7", "L_std15", "ab_std7", "grad", "grad7", "grad15",
    "rarity7", "rarity15", "L_vs15", "L_vs31", "grad_vs_table", "std7_vs_table",
    "L_std31", "a_vs31", "b_vs31", "coherence7", "coherence15",
    "dark_line", "light_line", "fine_grad", "dark_line5", "light_line5", "fine_grad5",
)


def coarse_factor(shape: tuple[int, ...], scale: float = 1.0) -> int:
    """The whole-number reduction from the searched copy (`scale` times the picture) to the
    coarse one.  A 4K picture searched at half size would otherwise shrink its least cards to
    5 coarse px, smaller than any the map was taught on: on hard development renders the
    finder found 62% of the cards at 4K against 80% at 1080p, and 71% with this limit."""
    f = round(max(shape[0], shape[1]) / COARSE_LONG_SIDE)
    return max(1, min(f, int(COARSE_MOST_REDUCTION * scale)))


def _shrink(a: np.ndarray, f: int) -> np.ndarray:
    if f == 1:
        return a
    h, w = a.shape[:2]
    return cv2.resize(a, (w // f, h // f), interpolation=cv2.INTER_AREA)


def _box(a: np.ndarray, k: int) -> np.ndarray:
    return cv2.boxFilter(a, cv2.CV_32F, (k, k), borderType=cv2.BORDER_REFLECT)


@contextmanager
def _one_thread():
    """OpenCV on one thread: its box filter keeps running sums per band of rows, and the bands
    follow the threads at hand, so that a busier machine would give other bits (and a retrained
    model other bytes)."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(threads)


def _std(a: np.ndarray, k: int, mean: np.ndarray | None = None, square: np.ndarray | None = None) -> np.ndarray:
    """The standard deviation over k x k; `mean` (`_box(a, k)`) and `square` (a * a) when made already."""
    m = _box(a, k) if mean is None else mean
    return np.sqrt(cv2.max(_box(a * a if square is None else square, k) - m * m, 0.0))


@_one_thread()
def pixel_features(lab: np.ndarray, even_l: np.ndarray, rarity: np.ndarray, local: np.ndarray,
                   distance: np.ndarray, scale: float = 1.0, whole: tuple[int, ...] | None = None
                   ) -> np.ndarray:
    """(h, w, len(FEATURE_NAMES)) float32 features of the coarse copy of the searched picture.

    Every input is of the searched copy's size (`scale` times the picture's);
    colours are measured from the table's median on the border ring,
    smoothness and edges also as a ratio to the table's own, so that a busy
    cloth and a plain one read alike.
    """
    f = coarse_factor(whole or lab.shape, scale)
    lab_full, lab = lab, _shrink(lab, f).astype(np.float32)
    L = lab[..., 0]
    ring = _ring(lab)
    table = np.median(ring, axis=0)
    even = _shrink(even_l, f).astype(np.float32)
    even -= float(np.median(_ring(even[..., None])))
    gx, gy = cv2.Sobel(L, cv2.CV_32F, 1, 0), cv2.Sobel(L, cv2.CV_32F, 0, 1)
    grad = np.sqrt(gx * gx + gy * gy)  # (numpy: exactly rounded, whatever the memory alignment)
    rare = _shrink(rarity, f).astype(np.float32)
    # the lightness's square and its means over 15 and 31, each wanted twice
    LL, L15, L31 = L * L, _box(L, 15), _box(L, 31)
    std7 = _std(L, 7, square=LL)
    ab_std = _std(lab[..., 1], 7) + _std(lab[..., 2], 7)
    grad7, grad15 = _box(grad, 7), _box(grad, 15)
    table_grad = float(np.median(_ring(grad7[..., None]))) + 1.0
    table_std = float(np.median(_ring(std7[..., None]))) + 1.0
    planes = [
        L - table[0], lab[..., 1] - table[1], lab[..., 2] - table[2], even, rare,
        _shrink(local, f).astype(np.float32), _shrink(distance, f).astype(np.float32),
        _std(L, 3, square=LL), std7, _std(L, 15, L15, LL), ab_std, grad, grad7, grad15,
        _box(rare, 7), _box(rare, 15), L - L15, L - L31,
        grad7 / table_grad, std7 / table_std,
        _std(L, 31, L31, LL), lab[..., 1] - _box(lab[..., 1], 31), lab[..., 2] - _box(lab[..., 2], 31),
        *(_coherence(gx, gy, k) for k in (7, 15)),
    ]
    lines = _seam_lines(lab_full[..., 0], f, L.shape)
    planes += lines + [_box(p, 5) for p in lines]
    return cv2.merge(planes)


def _seam_lines(L: np.ndarray, f: int, shape: tuple[int, ...]) -> list[np.ndarray]:
    """Thin dark lines, thin light lines and the gradient of the searched copy, each at the
    coarse size by its maximum over the pixels it stands for."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (SEAM_SIZE, SEAM_SIZE))
    gx, gy = cv2.Sobel(L, cv2.CV_32F, 1, 0), cv2.Sobel(L, cv2.CV_32F, 0, 1)
    # (the lines in whole numbers, as the lightness is: the same values, at a fraction of the cost)
    planes = (cv2.morphologyEx(L, cv2.MORPH_BLACKHAT, k), cv2.morphologyEx(L, cv2.MORPH_TOPHAT, k),
              np.sqrt(gx * gx + gy * gy))
    return [_max_pool(p, f, shape).astype(np.float32) for p in planes]


def _max_pool(a: np.ndarray, f: int, shape: tuple[int, ...]) -> np.ndarray:
    if f > 1:
        a = cv2.dilate(a, np.ones((f, f), np.uint8))[f // 2::f, f // 2::f]
    return np.ascontiguousarray(a[:shape[0], :shape[1]])


@_one_thread()
def context_features(features: np.ndarray, card: np.ndarray, core: np.ndarray) -> np.ndarray:
    """The features with the first stage's maps around each pixel (auto-context).

    Alone, a pixel of a card's paper beside a light square of the cloth is
    as likely table as card; seen with the map around it (the card's middle
    sure, a straight run of doubt beside it) it is not.  Likewise a core
    pixel lies amid core, a seam's pixel between two cores.
    """
    square = np.ones((7, 7), np.uint8)
    planes = []
    for p in (card, core):
        planes += [p] + [_box(p, k) for k in CONTEXT_WINDOWS]
        planes += [cv2.erode(p, square), cv2.dilate(p, square)]
    return np.concatenate([features, cv2.merge(planes)], axis=2)


def _coherence(gx: np.ndarray, gy: np.ndarray, k: int) -> np.ndarray:
    """How much the gradients around a pixel share one direction (structure tensor), 0-1.

    A striped or woven cloth is edged all one way over and over; a card's
    paper has no edges and its outline only a few.
    """
    xx, yy, xy = _box(gx * gx, k), _box(gy * gy, k), _box(gx * gy, k)
    return np.sqrt((xx - yy) ** 2 + 4.0 * xy * xy) / (xx + yy + 1.0)


class PaperModel:
    """The learnt table, rim or core map in two stages: the pixel's own features, then those
    and the first stage's maps around it."""

    def __init__(self, first, second, meta: dict | None = None):
        self.first, self.second, self.meta = first, second, meta or {}

    @classmethod
    def load(cls, path: str | Path) -> "PaperModel | None":
        """The model written by `companion train`, or None where there is none (the finder
        then does without it)."""
        path = Path(path)
        if not path.is_file():
            return None
        import joblib
        d = joblib.load(path)
        return cls(d["first"], d["second"], d.get("meta"))

    def save(self, path: str | Path) -> None:
        import joblib
        joblib.dump({"first": self.first, "second": self.second, "meta": self.meta}, path, compress=3)

    def first_probability(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first stage's P(card) and P(core) per pixel of the coarse copy, float32."""
        return _card_and_core(_predict(self.first, features))

    def coarse_probability(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """P(card) and P(core) per pixel of the coarse copy, float32."""
        context = context_features(features, *self.first_probability(features))
        return _card_and_core(_predict(self.second, context))


def searched_size(p: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A coarse map of probabilities as 0-255 at `shape` (the searched copy's)."""
    return cv2.resize(255.0 * p, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR).astype(np.uint8)


def sides_on_map(p: np.ndarray, rect):
    """A rotated rectangle (`cv2.minAreaRect`'s form) with each side moved onto the line where
    `p` (P(card), 0-255) falls most steeply nearby: from outside in, the table meets the card.

    A card grown from its core by the core's depth is only as right as the core's width, and
    the core is cut where P(core) passes one half, which the map's blur shifts with the
    cloth: on dotted and striped cloths cards so grown were a third too large.  The card map's
    own fall is where the paper ends.  A side that meets no clear fall (a neighbour's paper
    beyond it, a hand over it) stays where it was.  Where the paper is lost in a pale table,
    the map falls at the snake's body across the card but at its ends along it: a fit that
    so changes the card's proportions (`FIT_MOST_SQUEEZE`) is no fit to the paper."""
    (cx, cy), (w, h), angle = rect
    short = min(w, h)
    inward, outward = FIT_INWARD * short, FIT_OUTWARD * short
    a = np.deg2rad(angle)
    along_w, along_h = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    # the picture about the card, turned so that the card's sides run along its rows and columns
    size = (int(np.ceil(w + 2 * outward)) + 2, int(np.ceil(h + 2 * outward)) + 2)
    u0, v0 = size[0] / 2.0, size[1] / 2.0
    to_picture = np.array([[along_w[0], along_h[0], cx - u0 * along_w[0] - v0 * along_h[0]],
                           [along_w[1], along_h[1], cy - u0 * along_w[1] - v0 * along_h[1]]])
    upright = cv2.warpAffine(p, to_picture, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    across_h, across_w = FIT_ACROSS * h / 2, FIT_ACROSS * w / 2
    along_u = upright[int(v0 - across_h):int(v0 + across_h) + 1].mean(axis=0)
    along_v = upright[:, int(u0 - across_w):int(u0 + across_w) + 1].mean(axis=1)

    def side(rise: np.ndarray, at: float, sign: int) -> float:
        """Where the profile's slope (`rise`, per px) is steepest towards the card near `at`;
        `sign` +1 for a side the card lies after, -1 for one it lies before."""
        lo, hi = (at - outward, at + inward) if sign > 0 else (at - inward, at + outward)
        lo, hi = max(0, int(round(lo))), min(len(rise) - 1, int(round(hi)))
        if hi <= lo:
            return at
        k = lo + int(np.argmax(sign * rise[lo:hi + 1]))
        return k + 0.5 if sign * rise[k] >= FIT_LEAST_FALL else at

    rise_u, rise_v = np.diff(along_u), np.diff(along_v)
    u1, u2 = side(rise_u, u0 - w / 2, 1), side(rise_u, u0 + w / 2, -1)
    v1, v2 = side(rise_v, v0 - h / 2, 1), side(rise_v, v0 + h / 2, -1)
    if not 1 / FIT_MOST_SQUEEZE <= ((u2 - u1) / (v2 - v1)) / (w / h) <= FIT_MOST_SQUEEZE:
        return rect
    du, dv = (u1 + u2) / 2 - u0, (v1 + v2) / 2 - v0
    return ((cx + du * along_w[0] + dv * along_h[0], cy + du * along_w[1] + dv * along_h[1]),
            (u2 - u1, v2 - v1), angle)


def _card_and_core(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(card) (rim or core) and P(core) from the three classes' probabilities."""
    return np.ascontiguousarray(p[..., RIM] + p[..., CORE]), np.ascontiguousarray(p[..., CORE])


@functools.lru_cache(maxsize=1)
def _blas():
    """The BLAS libraries numpy loaded, found once (looking them up costs more than limiting them)."""
    from threadpoolctl import ThreadpoolController
    return ThreadpoolController()


def _predict(classifier, features: np.ndarray) -> np.ndarray:
    """Each class's probability per pixel (h, w, classes), the network's products on one BLAS
    thread: a second one saved a sixth of the time and cost half as much CPU again (spinning),
    on a machine whose other core reads the camera or serves the dashboard; and one thread gives
    the same bits on any machine."""
    h, w = features.shape[:2]
    rows = features.reshape(h * w, -1)
    out = np.empty((h * w, len(classifier.classes_)), np.float32)
    with _blas().limit(limits=1, user_api="blas"):
        for start in range(0, h * w, PREDICT_ROWS):
            out[start:start + PREDICT_ROWS] = probabilities(classifier, rows[start:start + PREDICT_ROWS])
    return out.reshape(h, w, -1)


def paper_maps(probability: np.ndarray, whole: tuple[int, ...] | None = None) -> list[CardMap]:
    """The open and closed maps of the pixels more likely card than table."""
    k = _closing_size(whole or probability.shape)
    closing = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    m = cv2.threshold(probability, PAPER_LEVEL, 255, cv2.THRESH_BINARY)[1]
    # thin runs of doubt (a light stripe of the cloth touching a card) part from the cards
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * k + 1, 2 * k + 1)))
    return [CardMap(m, False, PAPER_STEP),
            CardMap(cv2.morphologyEx(m, cv2.MORPH_CLOSE, closing), True, PAPER_STEP)]

