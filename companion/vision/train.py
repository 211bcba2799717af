"""`companion train`: rebuild the recognition models from rendered scenes of known truth.

The training set is rendered in the training styles only (never the held-out
one) from seeds the bench never uses (`seeds.scene_seed`).  Every found card
is matched to the truth by outline overlap: it teaches the edge model which
of its edges connect (and the colour model their colours), and the kind
model its kind; found outlines that match no card teach the kind `none`.
The models are then scored on a validation set in the held-out style.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from .find import find_cards
from .outline import CardOutline, match_quads, order_corners
from .recognise import MODEL_FILE, MODELS_DIR, CardMeasure, measure, orient, oriented_features
from .seeds import scene_seed

TIER_MIX = ("easy", "medium", "hard", "hard", "medium")
END_MATCH = 0.3   # an edge is a truth end if their midpoints are this close (card short sides)


def match_outlines(truth_cards: list[dict], outlines) -> dict[int, int]:
    """found outline index -> truth card index (IoU >= 0.5, best first)."""
    return match_quads([o.corners for o in outlines], [np.array(t["corners"], float) for t in truth_cards])


def edge_labels(outline, truth: dict) -> tuple[list[int], list[str | None]]:
    """For each outline edge: 1 if a truth end lies at its midpoint, and that end's colour."""
    mids = outline.edge_midpoints
    conn, colours = [], []
    for m in mids:
        best, colour = None, None
        for k, e in enumerate(truth["ends"]):
            d = np.hypot(m[0] - e[0], m[1] - e[1])
            if d < END_MATCH * outline.short_side and (best is None or d < best):
                best = d
                colour = truth["colours"][k] if k < len(truth["colours"]) else None
        conn.append(int(best is not None))
        colours.append(colour)
    return conn, colours


class Samples:
    def __init__(self):
        self.measures: list[CardMeasure] = []
        self.lengths: list[np.ndarray] = []
        self.kinds: list[str] = []
        self.edge_conn: list[list[int]] = []
        self.edge_colour: list[list[str | None]] = []
        self.missed = 0
        self.truth = 0

    def add_scene(self, image: np.ndarray, truth: dict, visibility: dict | None = None,
                  rng: np.random.Generator | None = None) -> None:
        outlines = find_cards(image)
        m = match_outlines(truth["cards"], outlines)
        self.truth += len(truth["cards"])
        self.missed += len(truth["cards"]) - len(m)
        if rng is not None:
            # cards the finder missed still teach recognition, from their true outline
            # moved a little (as found outlines are), when they lie in plain view
            found = set(m.values())
            for j, t in enumerate(truth["cards"]):
                if j in found or (visibility or {}).get(str(t["id"]), 1.0) < 0.95:
                    continue
                q = np.array(t["corners"], float)
                short = float(np.min(np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)))
                q = q + rng.normal(0, 0.015 * short, q.shape)
                outlines.append(CardOutline(order_corners(q)))
                m[len(outlines) - 1] = j
        for i, o in enumerate(outlines):
            self.measures.append(measure(image, o))
            self.lengths.append(o.edge_lengths)
            if i in m:
                t = truth["cards"][m[i]]
                self.kinds.append(t["kind"])
                conn, cols = edge_labels(o, t)
            else:
                self.kinds.append("none")
                conn, cols = [0, 0, 0, 0], [None] * 4
            self.edge_conn.append(conn)
            self.edge_colour.append(cols)


def render_set(purpose: str, base: int, count: int, styles, progress=None) -> Samples:
    from companion.synth.scene import render_scene
    samples = Samples()
    for i in range(count):
        seed = scene_seed(purpose, base, i)
        tier = TIER_MIX[i % len(TIER_MIX)]
        style = styles[i % len(styles)]
        scene = render_scene(seed, tier=tier, style=style)
        samples.add_scene(scene.image, scene.truth, scene.meta.get("visibility"),
                          np.random.default_rng(seed) if purpose == "train" else None)
        if progress and (i + 1) % 20 == 0:
            progress(f"  rendered {i + 1}/{count} {purpose} scenes")
    return samples


def _classifier(seed: int, iters: int = 250):
    from sklearn.ensemble import HistGradientBoostingClassifier
    return HistGradientBoostingClassifier(max_iter=iters, learning_rate=0.08, max_leaf_nodes=15,
                                          l2_regularization=1.0, random_state=seed)


def kind_matrix(samples: Samples, edge_model) -> np.ndarray:
    rows = np.concatenate([m.edge_rows for m in samples.measures])
    p = edge_model.predict_proba(rows)[:, 1].reshape(-1, 4)
    return np.array([oriented_features(m, p[i], orient(p[i], samples.lengths[i]))
                     for i, m in enumerate(samples.measures)])


def fit_models(samples: Samples, seed: int) -> dict:
    from sklearn.model_selection import cross_val_predict
    edges = np.concatenate([m.edge_rows for m in samples.measures])
    conn = np.array([c for cs in samples.edge_conn for c in cs])
    edge_model = _classifier(seed).fit(edges, conn)
    # the kind model learns from edge probabilities as they will look on unseen cards
    p_oof = cross_val_predict(_classifier(seed), edges, conn, cv=3, method="predict_proba")[:, 1].reshape(-1, 4)
    kinds = np.array(samples.kinds)
    feats = np.array([oriented_features(m, p_oof[i], orient(p_oof[i], samples.lengths[i]))
                      for i, m in enumerate(samples.measures)])
    kind_model = _classifier(seed + 1).fit(feats, kinds)
    colours = np.array([c for cs in samples.edge_colour for c in cs], dtype=object)
    has = np.array([c is not None for c in colours])
    colour_model = _classifier(seed + 2).fit(edges[has], colours[has].astype(str))
    return {"edge": edge_model, "kind": kind_model, "colour": colour_model}


def evaluate(models: dict, samples: Samples) -> dict:
    edges = np.concatenate([m.edge_rows for m in samples.measures])
    conn = np.array([c for cs in samples.edge_conn for c in cs])
    feats = kind_matrix(samples, models["edge"])
    kinds = np.array(samples.kinds)
    colours = np.array([c for cs in samples.edge_colour for c in cs], dtype=object)
    has = np.array([c is not None for c in colours])
    out = {
        "cards": int(len(kinds)),
        "find_recall": round(1 - samples.missed / max(1, samples.truth), 4),
        "edge_accuracy": round(float((models["edge"].predict(edges) == conn).mean()), 4),
        "kind_accuracy": round(float((models["kind"].predict(feats) == kinds).mean()), 4),
        "colour_accuracy": round(float((models["colour"].predict(edges[has]) == colours[has].astype(str)).mean()), 4)
        if has.any() else None,
    }
    return out


def train(seed: int = 1, out_dir: str | Path | None = None, scenes: int | None = None,
          validate: int | None = None, progress=print) -> dict:
    import joblib
    from companion.synth.styles import HELD_OUT_STYLE, TRAIN_STYLES

    scenes = 400 if scenes is None else scenes
    validate = max(10, scenes // 5) if validate is None else validate
    out = Path(out_dir) if out_dir else MODELS_DIR
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    progress(f"rendering {scenes} training scenes (styles {', '.join(TRAIN_STYLES)}, seed {seed})")
    samples = render_set("train", seed, scenes, TRAIN_STYLES, progress)
    progress(f"fitting on {len(samples.kinds)} found outlines")
    models = fit_models(samples, seed)
    progress(f"rendering {validate} validation scenes in the held-out style {HELD_OUT_STYLE!r}")
    held = render_set("validate", seed, validate, (HELD_OUT_STYLE,), progress)
    report = {
        "seed": seed, "train_scenes": scenes, "validate_scenes": validate,
        "train_styles": list(TRAIN_STYLES), "held_out_style": HELD_OUT_STYLE,
        "tiers": list(TIER_MIX), "train_cards": len(samples.kinds),
        "kind_counts": {k: int(n) for k, n in zip(*np.unique(samples.kinds, return_counts=True))},
        "train": evaluate(models, samples), "held_out": evaluate(models, held),
        "seconds": round(time.time() - t0, 1),
    }
    models["meta"] = report
    joblib.dump(models, out / MODEL_FILE, compress=3)
    (out / "training.json").write_text(json.dumps(report, indent=2) + "\n")
    progress(json.dumps(report["held_out"]))
    return report


def main(args) -> int:
    report = train(args.seed, args.out, args.scenes)
    print(f"wrote {Path(args.out) if args.out else MODELS_DIR}/{MODEL_FILE} "
          f"(held-out kind accuracy {report['held_out']['kind_accuracy']}, "
          f"colour accuracy {report['held_out']['colour_accuracy']})")
    return 0
