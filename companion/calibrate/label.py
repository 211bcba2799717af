"""Name every card of a laid-out deck without being told: the deck's own rules are the labels.

What a full deck must contain fixes most of the answer (see shared/CARDS.md):
so many cards with two snake ends (middles), so many with one (heads, tails,
the two rainbow jokers); the jokers are the one-ended cards whose body changes
colour stripe after stripe; a head widens far from its connecting edge where a
tail tapers; every colour is on exactly one head and one tail.  So:

1. edges: an edge is a connecting edge when ink meets its middle; the cut
   between ink and bare edges is found on this photo's own scores (Otsu);
2. kinds: the cards with the strongest second end are the middles (exactly as
   many as the deck holds), the stripiest one-ended cards the jokers, and the
   head/tail split is made by shape;
3. colours: the end colours are clustered into as many clusters as the deck
   has colours, each cluster is named by hue (an assignment against the
   colours' usual hues), then refined as Gaussians while heads and tails are
   each assigned one-to-one to the colours;
4. the middles' colour pairs are read off; a composition other than the
   default is accepted when the colours are clear, with a warning.

A photo that cannot be the deck is refused with the reason (`CalibrationRefused`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

import cv2
import numpy as np
from scipy.optimize import linear_sum_assignment

from companion.game.cards import Card, Kind
from companion.game.deck import Deck

from .measure import CardLook

# Usual sRGB of each colour name: only their hues matter, to name clusters.
REFERENCE_RGB = {
    "red": (215, 35, 40), "orange": (245, 135, 25), "yellow": (245, 215, 40), "green": (45, 160, 60),
    "blue": (35, 95, 205), "purple": (125, 55, 160), "pink": (240, 120, 180), "brown": (130, 80, 40),
    "cyan": (40, 190, 210), "white": (240, 240, 240), "black": (30, 30, 30), "grey": (128, 128, 128),
}
L_WEIGHT = 0.5     # lightness counts half as much as hue and saturation when telling colours apart
USE_INK = True


class CalibrationRefused(ValueError):
    """The photo cannot be the whole deck; the message says why, in one line."""


@dataclass
class LabelledCard:
    look: int                    # index into the CardLooks
    card: Card                   # the deck's name for it
    ends: tuple[int, ...]        # outline edge ids in the order of card.colours
    confidence: float
    doubt: str = ""              # what the labeller was least sure about


@dataclass
class DeckReading:
    cards: list[LabelledCard]
    colour_models: dict[str, dict]           # name -> mean, cov (balanced Lab), ends
    seen: Deck                               # the composition actually seen
    warnings: list[str] = field(default_factory=list)
    thresholds: dict[str, float] = field(default_factory=dict)
    end_lab: np.ndarray | None = None        # (m, 3) every coloured end's ink colour (balanced Lab) ...
    end_colour: list[str] = field(default_factory=list)   # ... the colour it was named ...
    vision_lab: np.ndarray | None = None     # ... and its end colour as the vision's features measure it

    def least_sure(self, n: int = 5) -> list[LabelledCard]:
        return sorted(self.cards, key=lambda c: c.confidence)[:n]


def _where(look: CardLook) -> str:
    x, y = look.outline.centre
    return f"({x:.0f}, {y:.0f})"


def _logistic(z):
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def otsu(values: np.ndarray) -> float:
    """The cut of a 1-D sample that best separates two groups (between-class variance)."""
    v = np.sort(np.asarray(values, float))
    best, cut = -1.0, float(v.mean())
    for i in range(1, len(v)):
        a, b = v[:i], v[i:]
        score = len(a) * len(b) * (a.mean() - b.mean()) ** 2
        if score > best:
            best, cut = score, 0.5 * (v[i - 1] + v[i])
    return cut


# --------------------------------------------------------------------------- is it the deck at all

def check_outlines(looks: list[CardLook], deck: Deck) -> None:
    """Refuse cards touching (merged or nearly merged outlines) and cards of another size."""
    sides = np.array([[lk.outline.short_side, lk.outline.long_side] for lk in looks])
    centres = np.array([lk.outline.centre for lk in looks])
    # the camera's perspective makes cards smaller with distance, about linearly across the picture
    X = np.column_stack([np.ones(len(looks)), centres])
    size = np.sqrt(sides[:, 0] * sides[:, 1])
    keep = np.ones(len(looks), bool)
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(X[keep], size[keep], rcond=None)
        rel = size / (X @ coef)
        keep = np.abs(rel - 1) < 0.12
    aspect = sides[:, 1] / sides[:, 0]
    typical = float(np.median(aspect[keep])) if keep.any() else float(np.median(aspect))
    for i, lk in enumerate(looks):
        if rel[i] > 1.3 or aspect[i] > typical * 1.45:
            raise CalibrationRefused(
                f"the card at {_where(lk)} looks {max(rel[i], aspect[i] / typical):.1f} times the size of "
                "the others: cards touching? lay them with a gap of a finger's width")
    for i in range(len(looks)):
        for j in range(i + 1, len(looks)):
            if np.linalg.norm(centres[i] - centres[j]) > 1.2 * (sides[i, 1] + sides[j, 1]):
                continue
            # cards laid touching are found as one region and refused by size above; two outlines
            # that overlap are cards lying on each other (a near miss is a shadow widening an outline)
            gap = _gap(looks[i].outline.corners, looks[j].outline.corners)
            if gap <= 0.0:
                raise CalibrationRefused(
                    f"the cards at {_where(looks[i])} and {_where(looks[j])} touch: "
                    "lay every card with a gap of a finger's width")
    for i, lk in enumerate(looks):
        if rel[i] < 0.75:
            raise CalibrationRefused(
                f"the card at {_where(lk)} is {100 * (1 - rel[i]):.0f}% smaller than the others: "
                "not a card of this deck (or partly covered)")


def _gap(a: np.ndarray, b: np.ndarray) -> float:
    """Smallest distance between two convex quadrilaterals (0 when they overlap)."""
    a32, b32 = a.astype(np.float32).reshape(-1, 1, 2), b.astype(np.float32).reshape(-1, 1, 2)
    inter, _ = cv2.intersectConvexConvex(a32.reshape(-1, 2), b32.reshape(-1, 2))
    if inter > 0:
        return 0.0
    best = np.inf
    for p, poly in ((a, b32), (b, a32)):
        for t in np.linspace(0, 1, 9)[:-1]:
            for k in range(4):
                q = p[k] * (1 - t) + p[(k + 1) % 4] * t
                best = min(best, abs(cv2.pointPolygonTest(poly, (float(q[0]), float(q[1])), True)))
    return float(best)


# --------------------------------------------------------------------------- edges and kinds

@dataclass
class _Ends:
    axis_edges: np.ndarray     # (n, 2) strong edge first, then its opposite
    strong: np.ndarray         # (n,) score of the strong edge
    weak: np.ndarray           # (n,) score of its opposite
    off: np.ndarray            # (n,) strongest edge off the axis
    cut: float
    spread: float


def find_ends(looks: list[CardLook]) -> _Ends:
    scores = np.array([lk.end_score for lk in looks])
    cut = otsu(scores.ravel())
    hi, lo = scores[scores > cut], scores[scores <= cut]
    spread = max(1e-3, (np.median(hi) - np.median(lo)) / 6.0) if len(hi) and len(lo) else 1.0
    axis_edges, strong, weak, off = [], [], [], []
    for s, lk in zip(scores, looks):
        e = lk.outline.edge_lengths
        # the axis with the stronger best edge; on a tie the short edges (how faces are drawn)
        a = max(s[0], s[2]) + 1e-3 * (e[1] + e[3] > e[0] + e[2])
        b = max(s[1], s[3]) + 1e-3 * (e[0] + e[2] > e[1] + e[3])
        pair = (0, 2) if a >= b else (1, 3)
        first = pair[0] if s[pair[0]] >= s[pair[1]] else pair[1]
        other = (first + 2) % 4
        axis_edges.append((first, other))
        strong.append(s[first])
        weak.append(s[other])
        off.append(max(s[(first + 1) % 4], s[(first + 3) % 4]))
    return _Ends(np.array(axis_edges), np.array(strong), np.array(weak), np.array(off), float(cut), float(spread))


def _off_contrast(look: CardLook, axis: np.ndarray) -> float:
    first = int(axis[0])
    return float(max(look.contrast[(first + 1) % 4], look.contrast[(first + 3) % 4]))


def check_faces(looks: list[CardLook], ends: _Ends) -> None:
    typical_contrast = float(np.median([lk.contrast[int(ax[0])] for lk, ax in zip(looks, ends.axis_edges)]))
    for i, lk in enumerate(looks):
        if ends.strong[i] < ends.cut:
            raise CalibrationRefused(
                f"the card at {_where(lk)} shows no snake meeting an edge: not a Hisss card face "
                "(a foreign card, or a card face-down)")
        # a wavy body may come near a side edge, a printed frame runs along every edge: only a
        # middle standing out from the rest of its edge as much as a real end does counts there
        if ends.off[i] > max(ends.cut, 0.9 * float(np.median(ends.strong))) and \
                _off_contrast(lk, ends.axis_edges[i]) > 0.9 * typical_contrast:
            raise CalibrationRefused(
                f"the card at {_where(lk)} has ink at more than two edges: not a Hisss card face "
                "(a foreign card?)")


def split_kinds(looks: list[CardLook], ends: _Ends, deck: Deck) -> tuple[np.ndarray, dict[int, float]]:
    """Which cards are middles (True), and a kind certainty per card.

    The deck fixes how many middles there are: the cards with the strongest
    second end take those places.  The photo's own cut must agree but for at
    most one card; more disagreement means the photo is not this deck.
    """
    n_middle = deck.kinds()[Kind.MIDDLE]
    n_one = len(looks) - n_middle
    order = np.argsort(-ends.weak)
    middle = np.zeros(len(looks), bool)
    middle[order[:n_middle]] = True
    by_cut = int((ends.weak > ends.cut).sum())
    ranked = ends.weak[order]
    # a pale ink on its paper (yellow on cream) may score under the photo's cut: still, when the
    # deck's count falls in a clear gap of the second-end scores, the count decides
    clear_gap = 0 < n_middle < len(ranked) and ranked[n_middle - 1] - ranked[n_middle] > 1.5 * ends.spread
    if abs(by_cut - n_middle) > 1 and not clear_gap:
        raise CalibrationRefused(
            f"found {by_cut} cards with a snake end at both ends and {len(looks) - by_cut} with one; "
            f"the deck has {n_middle} and {n_one}: cards missing, doubled or foreign")
    cut = ends.cut if not clear_gap else 0.5 * (ranked[n_middle - 1] + ranked[n_middle])
    certainty = {i: float(_logistic((ends.weak[i] - cut) / ends.spread * (1 if middle[i] else -1)))
                 for i in range(len(looks))}
    return middle, certainty


# --------------------------------------------------------------------------- colours

def reference_hues(names: tuple[str, ...]) -> np.ndarray:
    missing = [n for n in names if n not in REFERENCE_RGB]
    if missing:
        raise CalibrationRefused(f"no usual hue known for colour {missing[0]!r}: cannot name it from a photo")
    rgb = np.array([[REFERENCE_RGB[n][::-1] for n in names]], np.float32) / 255.0   # BGR
    lab = cv2.cvtColor(rgb, cv2.COLOR_BGR2Lab)[0]
    return np.arctan2(lab[:, 2], lab[:, 1])


def _features(lab: np.ndarray) -> np.ndarray:
    return np.column_stack([lab[:, 0] * L_WEIGHT, lab[:, 1], lab[:, 2]])


def name_clusters(centres_lab: np.ndarray, names: tuple[str, ...]) -> list[str]:
    """Each cluster's colour name: the one-to-one matching of hues that differs least."""
    hues = np.arctan2(centres_lab[:, 2], centres_lab[:, 1])
    ref = reference_hues(names)
    d = np.abs(np.angle(np.exp(1j * (hues[:, None] - ref[None, :]))))
    rows, cols = linear_sum_assignment(d)
    out = [""] * len(centres_lab)
    for r, c in zip(rows, cols):
        out[r] = names[c]
    return out


class ColourModels:
    """One Gaussian per colour over (L/2, a, b) of balanced end colours."""

    def __init__(self, names: tuple[str, ...], means: np.ndarray, covs: np.ndarray):
        self.names = names
        self.means = means
        self.covs = covs
        self._inv = np.linalg.inv(covs)
        self._logdet = np.linalg.slogdet(covs)[1]

    @classmethod
    def fit(cls, names, x: np.ndarray, labels: np.ndarray, floor: float = 4.0) -> "ColourModels":
        means, covs = [], []
        for k in range(len(names)):
            pts = x[labels == k]
            mean = pts.mean(axis=0) if len(pts) else np.zeros(3)
            cov = np.cov(pts.T) if len(pts) > 3 else np.eye(3) * 25.0
            means.append(mean)
            covs.append(cov + np.eye(3) * floor)
        return cls(tuple(names), np.array(means), np.array(covs))

    def log_likelihood(self, x: np.ndarray) -> np.ndarray:
        """(n, k) log densities."""
        d = x[:, None, :] - self.means[None]
        m = np.einsum("nki,kij,nkj->nk", d, self._inv, d)
        return -0.5 * (m + self._logdet[None] + 3 * np.log(2 * np.pi))

    def posterior(self, x: np.ndarray) -> np.ndarray:
        ll = self.log_likelihood(x)
        ll -= ll.max(axis=1, keepdims=True)
        p = np.exp(ll)
        return p / p.sum(axis=1, keepdims=True)


def _initial_clusters(x: np.ndarray, k: int) -> np.ndarray:
    """K-means made to share the ends out evenly (each colour ends as many cards in a full deck).

    Plain k-means under a strong lamp can merge two near hues (red and orange)
    and split a wide one; evening the cluster sizes stops that.  It only
    starts the refinement, which is free to find uneven colours.
    """
    from sklearn.cluster import KMeans
    labels = KMeans(n_clusters=k, n_init=10, random_state=0).fit(x).labels_
    cap = int(np.ceil(len(x) / k))
    for _ in range(20):
        centres = np.array([x[labels == j].mean(axis=0) if (labels == j).any() else x[0] for j in range(k)])
        cost = ((x[:, None, :] - centres[None]) ** 2).sum(axis=2)
        rows, cols = linear_sum_assignment(np.repeat(cost, cap, axis=1))
        new = np.empty(len(x), int)
        new[rows] = cols // cap
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def assign_one_each(ll: np.ndarray) -> np.ndarray:
    """Rows (cards) to columns (colours), each colour at most once, most likely overall."""
    rows, cols = linear_sum_assignment(-ll)
    out = np.full(len(ll), -1)
    out[rows] = cols
    return out


# --------------------------------------------------------------------------- the whole labelling

class _EndColours(NamedTuple):
    """The colour of every end that has one, as the deck's photo shows it."""

    names: tuple[str, ...]
    row_of: dict[tuple[int, int], int]   # (look, edge) -> row of the ends
    labels: np.ndarray                   # colour index per row
    sure: np.ndarray                     # ... and how sure, per row
    models: ColourModels
    lab: np.ndarray                      # the ends' colours measured (ink or end Lab)
    vision_lab: np.ndarray               # ... and as the vision measures them


def label_deck(looks: list[CardLook], deck: Deck) -> DeckReading:
    n = len(looks)
    if n < deck.size:
        raise CalibrationRefused(
            f"found {n} cards, the whole deck has {deck.size}: {deck.size - n} missing, covered, "
            "off the picture or touching another card")
    check_outlines(looks, deck)
    ends = find_ends(looks)
    check_faces(looks, ends)
    if n > deck.size:
        raise CalibrationRefused(f"found {n} cards, the whole deck has {deck.size}: "
                                 f"{n - deck.size} too many (a duplicate or another game's card?)")
    middle, kind_sure = split_kinds(looks, ends, deck)
    kinds = deck.kinds()
    one = np.flatnonzero(~middle)
    top_edge = {int(i): int(ends.axis_edges[i, 0]) for i in one}

    # jokers: the one-ended cards whose body changes colour most often
    n_jokers = kinds[Kind.RAINBOW_HEAD] + kinds[Kind.RAINBOW_TAIL]
    stripes = np.array([looks[i].stripes[top_edge[i]] for i in one])
    order = np.argsort(-stripes)
    jokers = set(int(one[j]) for j in order[:n_jokers])
    stripe_cut = float(0.5 * (stripes[order[n_jokers - 1]] + stripes[order[n_jokers]])) if n_jokers else 0.0
    stripe_sure = {int(one[j]): float(_logistic(abs(np.log(max(stripes[j], 1e-3) / max(stripe_cut, 1e-3))) * 8))
                   for j in range(len(one))}

    # heads and tails by shape: the widest far ends are heads (as many as the deck's heads)
    shape = {int(i): float(looks[i].far_shape[top_edge[i]]) for i in one}
    plain = [int(i) for i in one if int(i) not in jokers]
    shape_cut = otsu(np.array([shape[i] for i in plain])) if len(plain) > 1 else 0.8
    heads = [i for i in plain if shape[i] > shape_cut]
    tails = [i for i in plain if not shape[i] > shape_cut]
    if len(heads) != kinds[Kind.HEAD] or len(tails) != kinds[Kind.TAIL]:
        # the shape cut disagrees with the deck: take the deck's count, widest first
        ranked = sorted(plain, key=lambda i: -shape[i])
        heads, tails = ranked[:kinds[Kind.HEAD]], ranked[kinds[Kind.HEAD]:]

    colours = end_colours(looks, ends, middle, plain, top_edge, heads, tails, deck)
    names, row_of, labels, colour_sure = colours.names, colours.row_of, colours.labels, colours.sure

    # read each card off
    warnings: list[str] = []
    out: list[LabelledCard] = []
    for i in range(n):
        if middle[i]:
            e0, e1 = int(ends.axis_edges[i, 0]), int(ends.axis_edges[i, 1])
            c0, c1 = names[labels[row_of[(i, e0)]]], names[labels[row_of[(i, e1)]]]
            card = Card(Kind.MIDDLE, (c0, c1))
            sure = kind_sure[i] * colour_sure[row_of[(i, e0)]] * colour_sure[row_of[(i, e1)]]
            ident = card.identity(names)
            edges = (e0, e1) if ident == card else (e1, e0)
            doubt = "colours" if min(colour_sure[row_of[(i, e0)]], colour_sure[row_of[(i, e1)]]) < 0.9 else ""
            out.append(LabelledCard(i, ident, edges, float(sure), doubt or ("kind" if kind_sure[i] < 0.9 else "")))
            continue
        e = top_edge[i]
        head = shape[i] > shape_cut if i in jokers else i in heads
        shape_sure = float(_logistic(abs(shape[i] - shape_cut) / 0.05))
        if i in jokers:
            card = Card(Kind.RAINBOW_HEAD if head else Kind.RAINBOW_TAIL)
            sure = kind_sure[i] * stripe_sure[i] * shape_sure
            doubt = "rainbow?" if stripe_sure[i] < 0.9 else ("head or tail?" if shape_sure < 0.9 else "")
        else:
            r = row_of[(i, e)]
            card = Card(Kind.HEAD if head else Kind.TAIL, (names[labels[r]],))
            sure = kind_sure[i] * stripe_sure[i] * shape_sure * colour_sure[r]
            doubt = "colour" if colour_sure[r] < 0.9 else ("head or tail?" if shape_sure < 0.9 else "")
        out.append(LabelledCard(i, card, (e,), float(sure), doubt))
    joker_kinds = Counter(c.card.kind for c in out if c.card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL))
    if joker_kinds[Kind.RAINBOW_HEAD] != kinds[Kind.RAINBOW_HEAD]:
        # one head and one tail among the jokers: the wider far end is the head
        js = sorted(jokers, key=lambda i: -shape[i])
        for c in out:
            if c.look in js:
                c.card = Card(Kind.RAINBOW_HEAD if js.index(c.look) < kinds[Kind.RAINBOW_HEAD] else Kind.RAINBOW_TAIL)
                c.doubt = c.doubt or "head or tail?"
                c.confidence *= 0.6

    seen_counts = Counter(c.card for c in out)
    seen = Deck(names, dict(seen_counts))
    for card, k in sorted(seen_counts.items()):
        if card.kind is not Kind.MIDDLE and k > deck.count(card):
            raise CalibrationRefused(f"{k} cards read as {card.code}; the deck has {deck.count(card)}: "
                                     "a duplicate too many or another game's card")
    diff = _composition_diff(seen, deck)
    over = {card for card, k in seen_counts.items() if k > deck.count(card)}
    unsure = sorted((c for c in out if c.card in over and c.confidence < 0.8), key=lambda c: c.confidence)
    if diff and unsure:
        # a deck that really differs shows its colours clearly; unclear colours make a false difference
        where = ", ".join(f"{c.card.code} at {_where(looks[c.look])}" for c in unsure[:3])
        raise CalibrationRefused(
            f"the colours are not clear enough to tell this deck's make-up (unsure: {where}): "
            "take the photo again in even light without glare")
    if diff:
        warnings.append("this deck differs from the default composition (" + diff + "); the profile records it")
    models = colours.models
    model_dict = {
        name: {"mean": [float(models.means[k, 0] / L_WEIGHT), float(models.means[k, 1]), float(models.means[k, 2])],
               "cov": _lab_cov(models.covs[k]).tolist(), "ends": int((labels == k).sum())}
        for k, name in enumerate(names)}
    thresholds = {"edge_score": ends.cut, "edge_spread": ends.spread, "head_shape": float(shape_cut),
                  "rainbow_stripes": stripe_cut}
    return DeckReading(out, model_dict, seen, warnings, thresholds, colours.lab, [names[k] for k in labels],
                       colours.vision_lab)


def end_colours(looks: list[CardLook], ends: _Ends, middle: np.ndarray, plain: list[int],
                top_edge: dict[int, int], heads: list[int], tails: list[int], deck: Deck) -> _EndColours:
    """Every end of a middle and the end of each plain head and tail, named by colour:
    clustered, the clusters named by hue, then refined under the deck's rules (one head and
    one tail of each colour, a middle's two ends never one colour, its pairs the deck's)."""
    names = tuple(deck.colours)
    end_refs: list[tuple[int, int]] = []
    for i in range(len(looks)):
        if middle[i]:
            end_refs += [(i, int(ends.axis_edges[i, 0])), (i, int(ends.axis_edges[i, 1]))]
        elif i in plain:
            end_refs.append((i, top_edge[i]))
    lab = np.array([(looks[i].ink_lab if USE_INK else looks[i].end_lab)[e] for i, e in end_refs])
    vision_lab = np.array([looks[i].end_lab[e] for i, e in end_refs])
    x = _features(lab)
    clusters = _initial_clusters(x, len(names))
    centres = np.array([lab[clusters == k].mean(axis=0) for k in range(len(names))])
    cluster_name = name_clusters(centres, names)
    labels = np.array([names.index(cluster_name[c]) for c in clusters])
    row_of = {ref: r for r, ref in enumerate(end_refs)}
    for _ in range(4):
        models = ColourModels.fit(names, x, labels)
        ll = models.log_likelihood(x)
        new = ll.argmax(axis=1)
        for group in (heads, tails):
            rows = [row_of[(i, top_edge[i])] for i in group]
            if len(rows) == len(names):      # the deck's rule: one of each colour
                new[rows] = assign_one_each(ll[rows])
        for i in np.flatnonzero(middle):   # a middle's two ends are never one colour
            r0, r1 = row_of[(i, int(ends.axis_edges[i, 0]))], row_of[(i, int(ends.axis_edges[i, 1]))]
            if new[r0] == new[r1]:
                alt0, alt1 = ll[r0].copy(), ll[r1].copy()
                alt0[new[r1]] = alt1[new[r0]] = -np.inf
                if ll[r1, new[r1]] + alt0.max() > ll[r0, new[r0]] + alt1.max():
                    new[r0] = int(alt0.argmax())
                else:
                    new[r1] = int(alt1.argmax())
        if np.array_equal(new, labels):
            break
        labels = new
    # the refinement may settle with two clusters' names crossed (it started from k-means clusters
    # that mixed two colours): name the final clusters by hue again
    present = [k for k in range(len(names)) if (labels == k).any()]
    if len(present) == len(names):
        final = np.array([lab[labels == k].mean(axis=0) for k in range(len(names))])
        rename = np.array([names.index(n) for n in name_clusters(final, names)])
        if not np.array_equal(rename, np.arange(len(names))):
            labels = rename[labels]
            models = ColourModels.fit(names, x, labels)
            ll = models.log_likelihood(x)
    labels, changed = _prefer_default_pairs(labels, ll, middle, ends, row_of, names, deck)
    post = models.posterior(x)
    colour_sure = post[np.arange(len(x)), labels]
    for r in changed:
        colour_sure[r] = min(colour_sure[r], 0.5)   # the deck's composition decided, not the colour
    return _EndColours(names, row_of, labels, colour_sure, models, lab, vision_lab)


MAX_PAIR_LOSS = 12.0   # nats: how much less likely a middle's colours may be made to fit the default deck


def _prefer_default_pairs(labels, ll, middle, ends, row_of, names, deck: Deck):
    """Where the middles' colour pairs differ from the default composition, try the assignment of
    middles to the default's pairs: take it when no card has to be read much less likely than
    as it was (so a genuinely different deck, with clear colours, keeps its own composition)."""
    mids = [int(i) for i in np.flatnonzero(middle)]
    rows = [(row_of[(i, int(ends.axis_edges[i, 0]))], row_of[(i, int(ends.axis_edges[i, 1]))]) for i in mids]
    seen = Counter(frozenset((labels[a], labels[b])) for a, b in rows)
    slots = [frozenset(names.index(c) for c in card.colours)
             for card in deck.cards() if card.kind is Kind.MIDDLE]
    if seen == Counter(slots) or len(slots) != len(mids):
        return labels, []
    cost = np.zeros((len(mids), len(slots)))
    for r, (a, b) in enumerate(rows):
        for s, pair in enumerate(slots):
            c0, c1 = sorted(pair)
            cost[r, s] = -max(ll[a, c0] + ll[b, c1], ll[a, c1] + ll[b, c0])
    rr, cc = linear_sum_assignment(cost)
    out, changed = labels.copy(), []
    for r, s in zip(rr, cc):
        a, b = rows[r]
        now = -(ll[a, labels[a]] + ll[b, labels[b]])
        c0, c1 = sorted(slots[s])
        pick = (c0, c1) if ll[a, c0] + ll[b, c1] >= ll[a, c1] + ll[b, c0] else (c1, c0)
        if (pick[0], pick[1]) != (labels[a], labels[b]):
            if cost[r, s] - now > MAX_PAIR_LOSS:
                return labels, []          # the colours clearly say otherwise: a different deck
            out[a], out[b] = pick
            changed += [a, b]
    return out, changed


def _lab_cov(cov_feat: np.ndarray) -> np.ndarray:
    """Covariance over (L/2, a, b) back to (L, a, b)."""
    s = np.diag([1.0 / L_WEIGHT, 1.0, 1.0])
    return s @ cov_feat @ s


def _composition_diff(seen: Deck, default: Deck) -> str:
    more, fewer = [], []
    for card in sorted(set(seen.counts) | set(default.counts)):
        a, b = seen.count(card), default.count(card)
        if a > b:
            more.append(f"{card.code} x{a} (default {b})")
        elif a < b:
            fewer.append(f"{card.code} x{a} (default {b})")
    return "; ".join(more + fewer)
