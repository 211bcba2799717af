"""Name each found card: kind, the colour at each connecting end, where the ends are.

Three small scikit-learn models, loaded once (`Recogniser.load`):
- `edge`: is this edge of the card a connecting edge (a body meets it)?
- `kind`: head, tail, middle, rainbow_head, rainbow_tail, back, unknown or
  `none` (not a card at all: a phone, a box, a patch of table); `none` is
  dropped before anything is reported.
- `colour`: the palette colour at a connecting edge.
All predictions for one frame are made in one batch per model.  A face guess is
believed only with positive evidence (`Recogniser.believed_kinds`): the kind model's
conviction, its connecting edges where its kind needs them and none elsewhere
(`end_evidence`), features typical of its kind (`face_atypicality`) and one of the
deck's inks at its ends, weighed together against true faces (`face_surprise`);
otherwise it is reported `unknown`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .features import all_end_features, card_features, prepare_all, warp_card
from .outline import CardOutline
from .predict import probabilities

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
MODEL_FILE = "recognition.joblib"
KINDS = ("head", "tail", "middle", "rainbow_head", "rainbow_tail", "back", "unknown", "none")
ONE_END = ("head", "tail", "rainbow_head", "rainbow_tail")
FACE_KINDS = ("middle",) + ONE_END
CARD_LIKE_OUTLINE = 0.9   # a finder's score (`CardOutline.score`) of an outline fitted as well as a card's
FOREIGN_DOUBT = 0.3       # the `unknown` probability at which such an outline, named none, is a card
# Ends settled by the table's own colours (`colours_by_the_table`):
DOUBT = 0.3        # an end whose second likeliest colour is this likely against its likeliest
SURE = 0.9         # an end read this surely shows where its colour lies in this picture
SURE_ENDS = 2      # ... and this many of them, at least
FAR = 15.0         # balanced a, b units from a colour's sure ends: not that colour
# Other colourings of a card worth reporting (`alternatives`): at most this many, each at
# least this likely against the colouring read
ALTERNATIVES = 2
ALTERNATIVE_SHARE = 0.1
# The evidence a face guess shows, each signed so that larger is less like a Hisss face:
# the kind model's conviction, its weakest claimed connecting edge, its surest stray
# one, how unlike the training faces of its kind it is, and how surely its weakest
# connecting end shows one of the deck's inks (a rainbow end has none: not judged).
EVIDENCE_SIGNS = {"face_probability": -1.0, "claimed_end": -1.0, "stray_end": 1.0, "atypicality": 1.0,
                  "end_colour": -1.0}


def face_atypicality(feats: np.ndarray, kinds: list[str], typical: dict) -> np.ndarray:
    """How unlike the training faces of its named kind each card's features are (NaN for
    cards not named a face): the Mahalanobis distance to that kind's Gaussian (fitted by
    `companion train`, shrunk), per feature so that its scale does not grow with their count.

    A discriminative model is sure of itself far from anything it was shown: another
    game's card it never saw may come out a confident `head`.  A face must also look like
    the faces the model learned from, which needs no example of what it is not.
    """
    out = np.full(len(feats), np.nan)
    x = (np.asarray(feats, np.float64) - typical["mean"]) / typical["scale"]
    names = np.asarray(kinds)
    for kind, (centre, precision) in typical["kinds"].items():
        rows = names == kind
        if rows.any():
            d = x[rows] - centre
            out[rows] = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", d, precision, d), 0.0) / x.shape[1])
    out[np.isin(names, FACE_KINDS) & np.isnan(out)] = 0.0   # a kind too rare to model is not judged
    return out


def typicality_shift(feats: np.ndarray, kinds: list[str], typical: dict) -> np.ndarray | None:
    """How far one deck's faces, as photographed, lie from the training faces of their kinds:
    the mean offset (in `face_atypicality`'s standardised units) from each face's kind centre.

    A deck printed and lit unlike every training render is atypical as a whole, and the
    positive-evidence check would take its faces for another game's; a calibration photo,
    whose kinds are known, says by how much, and `shifted_typical` moves every centre so."""
    x = (np.asarray(feats, np.float64) - typical["mean"]) / typical["scale"]
    offsets = [x[i] - typical["kinds"][k][0] for i, k in enumerate(kinds) if k in typical["kinds"]]
    return np.mean(offsets, axis=0) if offsets else None


def shifted_typical(typical: dict, shift) -> dict:
    """`typical` with every kind's centre moved by `shift` (from `typicality_shift`)."""
    shift = np.asarray(shift, np.float32)
    return {**typical, "kinds": {k: (centre + shift, precision) for k, (centre, precision) in typical["kinds"].items()}}


def end_evidence(p_edge: np.ndarray, kinds: list[str], turns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(weakest claimed, strongest stray) connecting-edge certainty of each face guess, NaN
    for cards not named a face.

    A Hisss face is printed to its edge, the body meeting it where the kind says: a middle
    at both ends of its axis, a head or tail at the one end it was turned to, and nowhere
    else.  Most games' cards have a white border (no edge at all), and their pictures
    repeat turned half a turn (an edge across from the one a `head` would need).
    """
    claimed = np.full(len(kinds), np.nan)
    stray = np.full(len(kinds), np.nan)
    for i, (kind, k) in enumerate(zip(kinds, turns)):
        if kind not in FACE_KINDS:
            continue
        ends = (k, (k + 2) % 4) if kind == "middle" else (k,)
        claimed[i] = min(p_edge[i][e] for e in ends)
        stray[i] = max(p_edge[i][e] for e in range(4) if e not in ends)
    return claimed, stray


def face_surprise(evidence: dict[str, np.ndarray], groups: list[str], reference: dict) -> np.ndarray:
    """How unlike a true face each face guess's evidence is: over the pieces of evidence
    (`EVIDENCE_SIGNS`), the sum of -log(share of the reference faces of its group whose
    evidence is as bad or worse) -- Fisher's combination of tail probabilities.  NaN for
    a group without reference faces.

    One bar per piece of evidence, each letting 98% of true faces through, together turned
    away one hard-tier face in eight: a face is seldom weak in any one respect, but every
    respect costs its share.  Summed, one weak piece is outweighed by the strong others,
    while another game's card, which fails a little in several respects (the kind model
    unsure, its look a little atypical, no clear ink at its ends), still adds up to surprise.
    `reference[group][name]` is the sorted signed evidence of the reference faces.
    """
    out = np.full(len(groups), np.nan)
    names = np.asarray(groups)
    for group, ref in reference.items():
        rows = names == group
        if not rows.any():
            continue
        total = np.zeros(int(rows.sum()))
        for name, sign in EVIDENCE_SIGNS.items():
            if name not in ref:   # models written without a tune set know no conviction of true faces
                continue
            r = np.asarray(ref[name])
            x = sign * np.asarray(evidence[name], np.float64)[rows]
            worse = len(r) - np.searchsorted(r, x, side="left")
            # evidence a card cannot show (a rainbow end's ink) tells nothing either way: it
            # counts as a true face's average piece (-log of a uniform share averages 1), not as
            # a perfect one, else a rainbow guess would face a bar set for one piece more
            total += np.where(np.isnan(x), 1.0, -np.log((worse + 1) / (len(r) + 1)))
        out[rows] = total
    return out


def end_group(kind: str) -> str:
    """Faces are held to the end evidence of their own group: a middle's weaker end is
    weaker than a head's one end, so one bar for both would be set by the middles."""
    return "middle" if kind == "middle" else "head_or_tail"


class ModelMissingError(ValueError):
    """The trained models are not there: run `companion train`."""


@dataclass
class CardReading:
    outline: CardOutline
    kind: str
    colours: list[str]
    ends: list[list[float]]
    confidence: float
    kind_probs: dict[str, float] = field(default_factory=dict)
    edge_order: tuple[int, ...] = ()   # outline edge indices of the ends, in the order of colours
    # the colour model's probabilities at each end, in the order of colours
    colour_probs: tuple[np.ndarray, ...] = field(default=(), compare=False)
    # the balanced Lab colour measured at each end, in the order of colours
    end_labs: tuple[np.ndarray, ...] = field(default=(), compare=False)
    # the next likeliest colourings of this card, ((colours...), confidence), likeliest first
    alternatives: tuple[tuple[tuple[str, ...], float], ...] = field(default=(), compare=False)


@dataclass
class CardMeasure:
    """One card's patch, as the features see it."""
    lab: np.ndarray          # balanced Lab patch
    raw: np.ndarray          # Lab patch as photographed
    paper_lab: np.ndarray


def measure_all(image: np.ndarray, outlines: list[CardOutline]) -> list[CardMeasure]:
    """Each outline's card patch, as the features see it, the patches prepared in one batch."""
    if not outlines:
        return []
    labs, raws, papers = prepare_all(np.stack([warp_card(image, o.corners) for o in outlines]))
    return [CardMeasure(*m) for m in zip(labs, raws, papers)]


def edge_matrix(measures: list[CardMeasure], lengths: list[np.ndarray]) -> np.ndarray:
    """(N, 4, n) features of every edge of every card."""
    return all_end_features(np.stack([m.lab for m in measures]), np.stack([m.raw for m in measures]),
                            np.stack([m.paper_lab for m in measures]), np.stack(lengths))


def orient(edge_p: np.ndarray, edge_lengths: np.ndarray) -> int:
    """Which outline edge to turn to the top: the most likely connecting edge.

    Connecting edges come in opposite pairs (a middle's two ends), so the axis is
    chosen first; among cards with no connecting edge (backs, foreign cards) the
    short edges are taken, which is how the faces are drawn.
    """
    axis_a = max(edge_p[0], edge_p[2])
    axis_b = max(edge_p[1], edge_p[3])
    if max(axis_a, axis_b) < 0.2:
        short_a = edge_lengths[0] + edge_lengths[2] <= edge_lengths[1] + edge_lengths[3]
        return 0 if short_a else 1
    if axis_a >= axis_b:
        return 0 if edge_p[0] >= edge_p[2] else 2
    return 1 if edge_p[1] >= edge_p[3] else 3


def kind_matrix(measures: list[CardMeasure], p_edge: np.ndarray, turns: list[int]) -> np.ndarray:
    """(N, n) whole-card features, every card turned by its `turns` entry."""
    labs = np.stack([np.rot90(m.lab, k) for m, k in zip(measures, turns)])
    raws = np.stack([np.rot90(m.raw, k) for m, k in zip(measures, turns)])
    papers = np.stack([m.paper_lab for m in measures])
    order = np.array([[(k + i) % 4 for i in range(4)] for k in turns])  # top, right, bottom, left after the turn
    return card_features(labs, raws, papers, np.take_along_axis(p_edge, order, axis=1))


def alternatives(colours: list[str], odds: dict[tuple[str, ...], float], confidence: float
                 ) -> tuple[tuple[tuple[str, ...], float], ...]:
    """The colourings in `odds` (colours in end order -> probability) next likeliest to the one
    read, `colours`, each with the confidence the reading would have had: a camera that cannot
    tell this orange from red says so, and what follows the game knows which of the two the
    deck still holds (`CardReading.alternatives`)."""
    read = odds.get(tuple(colours), 0.0)
    if read <= 0.0:
        return ()
    # a middle's two ends differ (`CARDS.md`)
    others = sorted(((p, c) for c, p in odds.items()
                     if c != tuple(colours) and len(set(c)) == len(c) and p >= ALTERNATIVE_SHARE * read),
                    reverse=True)[:ALTERNATIVES]
    return tuple((c, round(confidence * p / read, 4)) for p, c in others)


def end_odds(probs: tuple[np.ndarray, ...], names: list[str]) -> dict[tuple[str, ...], float]:
    """The probability of each colouring of a card's ends, the ends read independently."""
    names = [str(n) for n in names]
    if len(probs) == 1:
        return {(names[j],): float(p) for j, p in enumerate(probs[0])}
    if len(probs) == 2:
        joint = np.outer(*probs)
        return {(names[a], names[b]): float(joint[a, b]) for a in range(len(names)) for b in range(len(names))}
    return {}


def one_colour_middle(reading: CardReading) -> bool:
    """Whether a reading is a middle with one colour at both ends: no card of any deck, as
    every middle fades from one colour to another (`CARDS.md`).  Until
    `distinct_middle_colours` has had its say, such a reading's confidence is a misreading's."""
    return reading.kind == "middle" and len(reading.colours) == 2 and reading.colours[0] == reading.colours[1]


def distinct_middle_colours(readings: list[CardReading], colours: list[str]) -> list[CardReading]:
    """`readings`, each middle read with one colour at both ends given the likeliest two that
    differ: every middle fades from one colour to another (`CARDS.md`), so the end less sure
    of the shared colour takes its next likeliest.  (Done once the table is read: a guess
    beyond a snake's end read as a middle of one colour is no card of the deck, which
    `extend` relies on to pass over a striped cloth.)"""
    out = []
    for r in readings:
        if one_colour_middle(r) and len(r.colour_probs) == 2:
            joint = np.outer(*r.colour_probs)
            np.fill_diagonal(joint, -1.0)
            a, b = np.unravel_index(int(np.argmax(joint)), joint.shape)
            # as sure as the pair is, against the one-colour pair the confidence was made with
            sure = joint[a, b] / max(float(r.colour_probs[0].max() * r.colour_probs[1].max()), 1e-9)
            r = replace(r, colours=[str(colours[a]), str(colours[b])], confidence=round(r.confidence * float(sure), 4))
        out.append(r)
    return out


def colours_by_the_table(readings: list[CardReading], colours: list[str]) -> list[CardReading]:
    """`readings`, each end the colour model was unsure of (`DOUBT`) given whichever of its two
    likeliest colours the table's own sure ends (`SURE`) of that colour lie nearer in hue.

    A lamp, a camera or a printing moves every card's orange the same way, and
    where it moves it towards red the model splits an orange end between the
    two; the ends of this picture read surely show where its orange and its red
    lie (the balanced a, b of `features.end_features`).  When only one of the
    two colours has sure ends here and the doubtful end lies far from them
    (`FAR`), it is the other.  A middle left with one colour at both ends keeps
    what it was read as."""
    names = [str(c) for c in colours]
    sure: dict[str, list[np.ndarray]] = {}
    for r in readings:
        for name, p, lab in zip(r.colours, r.colour_probs, r.end_labs):
            if float(p.max()) >= SURE:
                sure.setdefault(name, []).append(lab[1:])
    centre = {name: np.mean(labs, axis=0) for name, labs in sure.items() if len(labs) >= SURE_ENDS}
    if not centre:
        return readings
    out = []
    for r in readings:
        now = [_nearer(name, p, lab, names, centre) for name, p, lab in zip(r.colours, r.colour_probs, r.end_labs)]
        if now == list(r.colours) or (r.kind == "middle" and len(set(now)) < 2):
            out.append(r)
        else:
            out.append(replace(r, colours=now))
    return out


def _nearer(name: str, p: np.ndarray, lab: np.ndarray, names: list[str], centre: dict) -> str:
    """Of an end's two likeliest colours, the one whose sure ends lie nearer (see above)."""
    first, second = np.argsort(-p)[:2]
    if p[second] < DOUBT * p[first]:
        return name
    a, b = names[first], names[second]
    da = float(np.linalg.norm(lab[1:] - centre[a])) if a in centre else None
    db = float(np.linalg.norm(lab[1:] - centre[b])) if b in centre else None
    if da is not None and db is not None:
        return b if db < da else a
    if da is not None and da > FAR:
        return b
    if db is not None and db > FAR:
        return a
    return name


class Recogniser:
    def __init__(self, models: dict):
        self.edge = models["edge"]
        self.kind = models["kind"]
        self.colour = models["colour"]
        self.meta = models.get("meta", {})
        thresholds = models.get("thresholds", {})
        self.thresholds = dict(thresholds)   # as stored, for a Recogniser made from this one
        # below this an `unknown` guess is not a card at all (models without it: any unknown stands)
        self.min_unknown_probability = float(thresholds.get("min_unknown_probability", 0.0))
        self.typical = models.get("typical")
        # a face guess whose evidence is more surprising than this for a true face of its group is
        # reported `unknown` (models without a reference: every face guess stands)
        self.face_reference = models.get("face_reference")
        self.max_surprise = {g: float(thresholds.get(f"max_{g}_surprise", np.inf)) for g in ("middle", "head_or_tail")}
        self.kinds = list(self.kind.classes_)
        self.colours = list(self.colour.classes_)

    @classmethod
    def load(cls, models_dir: str | Path | None = None) -> "Recogniser":
        import joblib
        path = Path(models_dir or MODELS_DIR) / MODEL_FILE
        if not path.exists():
            raise ModelMissingError(f"{path}: no trained models; run `companion train`")
        return cls(joblib.load(path))

    def face_evidence(self, p_kind: np.ndarray, feats: np.ndarray, p_edge: np.ndarray, turns: list[int],
                      kinds: list[str], edge_rows: np.ndarray) -> dict[str, np.ndarray]:
        """Each card's evidence for being the face it is named (`EVIDENCE_SIGNS`; NaN off faces)."""
        claimed, stray = end_evidence(p_edge, kinds, turns)
        atypical = (face_atypicality(feats, kinds, self.typical) if self.typical is not None
                    else np.zeros(len(kinds)))
        return {"face_probability": p_kind.max(axis=1), "claimed_end": claimed, "stray_end": stray,
                "atypicality": atypical, "end_colour": self.ink_conviction(edge_rows, kinds, turns)}

    def ink_conviction(self, edge_rows: np.ndarray, kinds: list[str], turns: list[int]) -> np.ndarray:
        """The colour model's probability of its best colour at each face guess's weakest
        coloured end (NaN for cards without one: rainbow ends, non-faces)."""
        ends = [(i, e) for i, (kind, k) in enumerate(zip(kinds, turns)) if kind in ("head", "tail", "middle")
                for e in ((k, (k + 2) % 4) if kind == "middle" else (k,))]
        out = np.full(len(kinds), np.nan)
        if ends:
            best = probabilities(self.colour, np.array([edge_rows[i, e] for i, e in ends])).max(axis=1)
            for (i, _), p in zip(ends, best):
                out[i] = p if np.isnan(out[i]) else min(out[i], p)
        return out

    def believed_kinds(self, p_kind: np.ndarray, feats: np.ndarray, p_edge: np.ndarray,
                       turns: list[int], edge_rows: np.ndarray, scores: list[float] | None = None
                       ) -> list[str]:
        """The kind model's guesses after the checks: a face guess whose evidence, taken
        together, is unlike a true face's (`face_surprise`) is a card we do not know; an
        unsure `unknown` is none, unless the finder fitted its outline as well as a card's
        (`scores`, the outlines' `CardOutline.score`): the model sees only what lies inside.
        For the same reason, an outline so fitted that the model names none, but with an
        `unknown` probability of `FOREIGN_DOUBT` or more, is a card we do not know."""
        named = [str(self.kinds[j]) for j in np.argmax(p_kind, axis=1)]
        groups = [end_group(k) for k in named]
        surprise = (face_surprise(self.face_evidence(p_kind, feats, p_edge, turns, named, edge_rows), groups,
                                  self.face_reference)
                    if self.face_reference is not None else np.zeros(len(named)))
        kinds = list(named)
        for i, kind in enumerate(named):
            if kind in FACE_KINDS and surprise[i] > self.max_surprise[groups[i]]:
                kinds[i] = "unknown"
            elif kind == "unknown" and p_kind[i].max() < self.min_unknown_probability and \
                    (scores is None or scores[i] < CARD_LIKE_OUTLINE):
                kinds[i] = "none"
            elif kind == "none" and scores is not None and scores[i] >= CARD_LIKE_OUTLINE and \
                    p_kind[i][self.kinds.index("unknown")] >= FOREIGN_DOUBT:
                kinds[i] = "unknown"
        return kinds

    def evidence(self, image: np.ndarray, outlines: list[CardOutline]):
        """What the models read off each outline: (edge rows, connecting-edge probabilities,
        the turn that puts each card's first end first, kind features)."""
        measures = measure_all(image, outlines)
        edge_rows = edge_matrix(measures, [o.edge_lengths for o in outlines])
        p_edge = probabilities(self.edge, edge_rows.reshape(-1, edge_rows.shape[2]))
        p_edge = p_edge[:, list(self.edge.classes_).index(1)].reshape(-1, 4)
        turns = [orient(p_edge[i], o.edge_lengths) for i, o in enumerate(outlines)]
        return edge_rows, p_edge, turns, kind_matrix(measures, p_edge, turns)

    def recognise(self, image: np.ndarray, outlines: list[CardOutline], evidence=None) -> list[CardReading]:
        """Readings for the outlines that are cards (kind `none` is dropped); `evidence`, when
        the caller has it already, is `self.evidence(image, outlines)`."""
        if not outlines:
            return []
        edge_rows, p_edge, turns, feats = evidence or self.evidence(image, outlines)
        p_kind = probabilities(self.kind, feats)
        kinds = self.believed_kinds(p_kind, feats, p_edge, turns, edge_rows, [o.score for o in outlines])
        faces = [j for j, k in enumerate(self.kinds) if k in FACE_KINDS]

        # colours for every connecting end of the face cards, in one batch
        wanted: list[tuple[int, int]] = []
        for i, kind in enumerate(kinds):
            k = turns[i]
            if kind == "middle":
                wanted += [(i, k), (i, (k + 2) % 4)]
            elif kind in ("head", "tail"):
                wanted.append((i, k))
        colour_of: dict[tuple[int, int], tuple[str, float, np.ndarray]] = {}
        if wanted:
            rows = np.array([edge_rows[i, e] for i, e in wanted])
            p_col = probabilities(self.colour, rows)
            for (i, e), pr in zip(wanted, p_col):
                j = int(np.argmax(pr))
                colour_of[(i, e)] = (self.colours[j], float(pr[j]), pr)

        out = []
        for i, (o, kind) in enumerate(zip(outlines, kinds)):
            if kind == "none":
                continue
            k = turns[i]
            conf = float(p_kind[i].max())
            if kind == "unknown":
                p_none = p_kind[i][self.kinds.index("none")] if "none" in self.kinds else 0.0
                conf = max(0.0, float(1.0 - p_kind[i][faces].max() - p_none))
            if kind == "middle":
                edge_ids = (k, (k + 2) % 4)
            elif kind in ONE_END:
                edge_ids = (k,)
            else:
                edge_ids = ()
            colours, colour_probs, end_labs = [], [], []
            for e in edge_ids:
                if (i, e) in colour_of:
                    name, p, pr = colour_of[(i, e)]
                    colours.append(str(name))
                    colour_probs.append(pr)
                    end_labs.append(edge_rows[i, e, :3].astype(np.float32))
                    conf *= p
            mids = o.edge_midpoints
            ends = [[round(float(mids[e][0]), 1), round(float(mids[e][1]), 1)] for e in edge_ids]
            # the ends must really be connecting edges: fold that certainty in
            for e in edge_ids:
                conf *= float(max(p_edge[i][e], 1e-3)) ** 0.5
            out.append(CardReading(o, kind, colours, ends, round(conf, 4),
                                   {c: round(float(p), 4) for c, p in zip(self.kinds, p_kind[i])},
                                   edge_ids, tuple(colour_probs), tuple(end_labs),
                                   alternatives(colours, end_odds(tuple(colour_probs), self.colours), conf)))
        return out
