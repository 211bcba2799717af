"""Name each found card: kind, the colour at each connecting end, where the ends are.

Three small scikit-learn models, loaded once (`Recogniser.load`):
- `edge`: is this edge of the card a connecting edge (a body meets it)?
- `kind`: head, tail, middle, rainbow_head, rainbow_tail, back, unknown or
  `none` (not a card at all: a phone, a box, a patch of table); `none` is
  dropped before anything is reported.
- `colour`: the palette colour at a connecting edge.
All predictions for one frame are made in one batch per model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .features import all_end_features, card_features, prepare, warp_card
from .outline import CardOutline

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
MODEL_FILE = "recognition.joblib"
KINDS = ("head", "tail", "middle", "rainbow_head", "rainbow_tail", "back", "unknown", "none")
ONE_END = ("head", "tail", "rainbow_head", "rainbow_tail")
FACE_KINDS = ("middle",) + ONE_END
# Below this the kind model's best face guess is reported as `unknown` (see recognise);
# `companion train` chooses its own (and one for `unknown` guesses) on scenes of their own
# and stores them with the models.
MIN_FACE_PROBABILITY = 0.6


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


@dataclass
class CardMeasure:
    """One card's patch, as the features see it."""
    lab: np.ndarray          # balanced Lab patch
    raw: np.ndarray          # Lab patch as photographed
    paper_lab: np.ndarray


def measure(image: np.ndarray, outline: CardOutline) -> CardMeasure:
    return CardMeasure(*prepare(warp_card(image, outline.corners)))


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


class Recogniser:
    def __init__(self, models: dict):
        self.edge = models["edge"]
        self.kind = models["kind"]
        self.colour = models["colour"]
        self.meta = models.get("meta", {})
        thresholds = models.get("thresholds", {})
        self.min_face_probability = float(thresholds.get("min_face_probability", MIN_FACE_PROBABILITY))
        # below this an `unknown` guess is not a card at all (models without it: any unknown stands)
        self.min_unknown_probability = float(thresholds.get("min_unknown_probability", 0.0))
        self.kinds = list(self.kind.classes_)
        self.colours = list(self.colour.classes_)

    @classmethod
    def load(cls, models_dir: str | Path | None = None) -> "Recogniser":
        import joblib
        path = Path(models_dir or MODELS_DIR) / MODEL_FILE
        if not path.exists():
            raise ModelMissingError(f"{path}: no trained models; run `companion train`")
        return cls(joblib.load(path))

    def recognise(self, image: np.ndarray, outlines: list[CardOutline]) -> list[CardReading]:
        """Readings for the outlines that are cards (kind `none` is dropped)."""
        if not outlines:
            return []
        measures = [measure(image, o) for o in outlines]
        edge_rows = edge_matrix(measures, [o.edge_lengths for o in outlines])
        p_edge = self.edge.predict_proba(edge_rows.reshape(-1, edge_rows.shape[2]))
        p_edge = p_edge[:, list(self.edge.classes_).index(1)].reshape(-1, 4)
        turns = [orient(p_edge[i], o.edge_lengths) for i, o in enumerate(outlines)]
        feats = kind_matrix(measures, p_edge, turns)
        p_kind = self.kind.predict_proba(feats)
        kinds = [str(self.kinds[j]) for j in np.argmax(p_kind, axis=1)]
        faces = [j for j, k in enumerate(self.kinds) if k in FACE_KINDS]
        for i, kind in enumerate(kinds):
            # a face named without conviction is a card we do not know
            if kind in FACE_KINDS and p_kind[i].max() < self.min_face_probability:
                kinds[i] = "unknown"
            elif kind == "unknown" and p_kind[i].max() < self.min_unknown_probability:
                kinds[i] = "none"

        # colours for every connecting end of the face cards, in one batch
        wanted: list[tuple[int, int]] = []
        for i, kind in enumerate(kinds):
            k = turns[i]
            if kind == "middle":
                wanted += [(i, k), (i, (k + 2) % 4)]
            elif kind in ("head", "tail"):
                wanted.append((i, k))
        colour_of: dict[tuple[int, int], tuple[str, float]] = {}
        if wanted:
            rows = np.array([edge_rows[i, e] for i, e in wanted])
            p_col = self.colour.predict_proba(rows)
            for (i, e), pr in zip(wanted, p_col):
                j = int(np.argmax(pr))
                colour_of[(i, e)] = (self.colours[j], float(pr[j]))

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
            colours = []
            for e in edge_ids:
                if (i, e) in colour_of:
                    name, p = colour_of[(i, e)]
                    colours.append(str(name))
                    conf *= p
            mids = o.edge_midpoints
            ends = [[round(float(mids[e][0]), 1), round(float(mids[e][1]), 1)] for e in edge_ids]
            # the ends must really be connecting edges: fold that certainty in
            for e in edge_ids:
                conf *= float(max(p_edge[i][e], 1e-3)) ** 0.5
            out.append(CardReading(o, kind, colours, ends, round(conf, 4),
                                   {c: round(float(p), 4) for c, p in zip(self.kinds, p_kind[i])},
                                   edge_ids))
        return out
