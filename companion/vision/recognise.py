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

from .features import all_end_features, card_features, prepare, rotations, warp_card
from .outline import CardOutline

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
MODEL_FILE = "recognition.joblib"
KINDS = ("head", "tail", "middle", "rainbow_head", "rainbow_tail", "back", "unknown", "none")
ONE_END = ("head", "tail", "rainbow_head", "rainbow_tail")


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
    """Everything measured on one card before the models decide."""
    edge_rows: np.ndarray   # (4, n) features of each outline edge
    lab: np.ndarray
    raw: np.ndarray
    paper_lab: np.ndarray


def measure(image: np.ndarray, outline: CardOutline) -> CardMeasure:
    patch = warp_card(image, outline.corners)
    lab, raw, paper_lab = prepare(patch)
    return CardMeasure(all_end_features(lab, raw, paper_lab, outline.edge_lengths), lab, raw, paper_lab)


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


def oriented_features(m: CardMeasure, edge_p: np.ndarray, k: int) -> np.ndarray:
    order = [(k + i) % 4 for i in range(4)]  # top, right, bottom, left after the turn
    return card_features(rotations(m.lab)[k], rotations(m.raw)[k], m.paper_lab, edge_p[order])


class Recogniser:
    def __init__(self, models: dict):
        self.edge = models["edge"]
        self.kind = models["kind"]
        self.colour = models["colour"]
        self.meta = models.get("meta", {})
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
        edges = np.concatenate([m.edge_rows for m in measures])
        p_edge = self.edge.predict_proba(edges)[:, list(self.edge.classes_).index(1)].reshape(-1, 4)
        turns = [orient(p_edge[i], o.edge_lengths) for i, o in enumerate(outlines)]
        feats = np.array([oriented_features(m, p_edge[i], turns[i]) for i, m in enumerate(measures)])
        p_kind = self.kind.predict_proba(feats)
        kinds = [self.kinds[j] for j in np.argmax(p_kind, axis=1)]

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
            rows = np.array([measures[i].edge_rows[e] for i, e in wanted])
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
                    colours.append(name)
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
