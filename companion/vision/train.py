"""`companion train`: rebuild the models from rendered scenes of known truth.

First the finder's learnt map of table, card rims and card cores
(`paper_train`), since what the finder finds with it is what the recognition
models then learn from.  The training set is rendered in the training styles
only (never the held-out one) from seeds the bench never uses
(`seeds.scene_seed`).  Every found card is matched to the truth by outline
overlap: it teaches the edge model which of its edges connect (and the
colour model their colours), and the kind model its kind; found outlines
that match no card teach the kind `none`.  The models are then scored on a
validation set in the held-out style.  What true faces show is measured on
the training faces out of fold (`face_reference`), how surprising a face's
evidence may be, and the probability below which an `unknown` is not a
card, on scenes of their own (`choose_thresholds`).
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import cv2
import numpy as np

from .find import find_cards
from .outline import CardOutline, match_quads, order_corners, polygon_iou
from .recognise import (EVIDENCE_SIGNS, FACE_KINDS, MODEL_FILE, MODELS_DIR, CardMeasure, edge_matrix, end_evidence,
                        end_group, face_atypicality, face_surprise, kind_matrix, measure_all, orient)
from .paper import PAPER_FILE, PaperModel
from .paper_train import SCENES as PAPER_SCENES, train_paper
from .seeds import scene_seed

TIER_MIX = ("easy", "medium", "hard", "hard", "medium")
# Training renders are kept to camera-frame sizes: a card's patch is 48 px
# whatever the picture, and 4K renders cost ten times as much to make.
SIZES = ((1280, 720), (960, 720))
END_MATCH = 0.3   # an edge is a truth end if their midpoints are this close (card short sides)
TEACH_IOU = 0.65  # a found outline overlapping its card less than this teaches nothing (see Samples)
# Ordinary scenes hold few other games' cards (about one in four scenes, at most a few):
# too few to learn `unknown` from, and the tune set's dozen could not choose a threshold
# steadily.  A batch of scenes of their own (a sixth as many as the ordinary ones, render
# indices from FOREIGN_INDEX so they never repeat an ordinary scene) lays 3-6 more.
FOREIGN_INDEX = 500_000
FOREIGN_PER_SCENE = (3, 4, 5, 6)
# The share of the tune set's true faces whose evidence together is believed
# (`choose_thresholds`).  Held to the same share one bar at a time, the bars together
# turned away one hard-tier face in eight.
FACE_KEPT = 0.98


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
    """What the finder finds on rendered scenes, measured, with the truth of each outline.

    An outline that covers its card only loosely (a core grown a little
    askew, a row cut in the wrong place) reads its ends partly from the
    neighbours' paper, yet its card's kind and colours would be its labels:
    with `teach`, such outlines are left out (a card so left out is taught
    from its true outline, as a missed one is).  The held-out scores keep
    them, as the finder gives them.
    """

    def __init__(self, paper=None, teach: bool = True):
        self.paper = paper   # the learnt map the finder uses (`paper.PaperModel`), if any
        self.teach = teach
        self.measures: list[CardMeasure] = []
        self.lengths: list[np.ndarray] = []
        self.kinds: list[str] = []
        self.edge_conn: list[list[int]] = []
        self.edge_colour: list[list[str | None]] = []
        self.missed = 0
        self.truth = 0
        self.scenes = 0
        self.foreign_scenes = 0   # of them, scenes rich in other games' cards

    def extend(self, other: "Samples") -> None:
        for name in ("measures", "lengths", "kinds", "edge_conn", "edge_colour"):
            getattr(self, name).extend(getattr(other, name))
        self.missed += other.missed
        self.truth += other.truth
        self.scenes += other.scenes
        self.foreign_scenes += other.foreign_scenes

    def add_scene(self, image: np.ndarray, truth: dict, visibility: dict | None = None,
                  rng: np.random.Generator | None = None) -> None:
        outlines = find_cards(image, paper=self.paper)
        if self.teach:
            outlines = _without_loose(outlines, truth["cards"])
        m = match_outlines(truth["cards"], outlines)
        self.scenes += 1
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
        self.measures.extend(measure_all(image, outlines))
        for i, o in enumerate(outlines):
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


def _without_loose(outlines: list[CardOutline], cards: list[dict]) -> list[CardOutline]:
    m = match_outlines(cards, outlines)
    return [o for i, o in enumerate(outlines)
            if i not in m or polygon_iou(o.corners, np.array(cards[m[i]]["corners"], float)) >= TEACH_IOU]


def render_set(purpose: str, base: int, count: int, styles, progress=None, foreign: bool = False,
               paper=None) -> Samples:
    """`count` scenes of `purpose`; with `foreign`, scenes of their own (indices from
    FOREIGN_INDEX) each with FOREIGN_PER_SCENE other games' cards more than the tier lays."""
    from companion.synth.scene import render_scene
    samples = Samples(paper, teach=purpose != "validate")
    first = FOREIGN_INDEX if foreign else 0
    for i in range(count):
        seed = scene_seed(purpose, base, first + i)
        tier = TIER_MIX[i % len(TIER_MIX)]
        style = styles[i % len(styles)]
        extra = FOREIGN_PER_SCENE[i % len(FOREIGN_PER_SCENE)] if foreign else 0
        scene = render_scene(seed, tier=tier, style=style, size=SIZES[i % len(SIZES)], foreign=extra)
        samples.add_scene(scene.image, scene.truth, scene.meta.get("visibility"),
                          np.random.default_rng(seed) if purpose == "train" else None)
        if progress and (i + 1) % 20 == 0:
            progress(f"  rendered {i + 1}/{count} {purpose} scenes{' rich in foreign cards' if foreign else ''}")
    samples.foreign_scenes = count if foreign else 0
    return samples


def _classifier(seed: int):
    """A small neural network behind a scaler: one matrix product per layer at run time.

    Gradient-boosted trees scored no better on the held-out style but cost a
    tree walk per tree and class on every frame; this costs microseconds.
    """
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(64, 32), alpha=1e-3,
                                                         max_iter=600, early_stopping=True,
                                                         n_iter_no_change=25, random_state=seed))


KIND_MEMBERS = 10


def _ensemble(seed: int):
    """KIND_MEMBERS kind networks from different starting weights, their probabilities averaged.

    One network's answer far from its training data depends on its random start: another
    game's card that one network calls a sure `head`, another calls something else, and
    the average is unsure (deep ensembles; Lakshminarayanan et al. 2017).  Which real
    foreign cards a single network let through changed with the training seed; on the
    held-out style the average also names more kinds right (seed 1: 0.9565 -> 0.9674).
    Ten members rather than five: with five, a dozen training outlines more or fewer (a
    finder change) moved held-out kind accuracy by a point (0.9515 -> 0.9414); with ten,
    the same training set gave 0.9479 and held-out tables gained precision and kind
    accuracy (hard 94.3 -> 94.6%, 95.1 -> 95.6%), for 0.5 MB more and no measurable time.
    """
    from sklearn.ensemble import VotingClassifier
    return VotingClassifier([(f"net{k}", _classifier(seed + 100 * k)) for k in range(KIND_MEMBERS)],
                            voting="soft")


def _linear(seed: int):
    """Logistic regression: on the held-out style it judged edges best (0.95 against
    0.89-0.92 for networks and boosted trees, which learned the training styles' look)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=4000, random_state=seed))


def _colour_learner(seed: int):
    """The end-colour model: logistic regression, one linear score per palette colour.

    A small network (one hidden layer of 32) placed its boundaries between neighbouring
    inks (blue/green, orange/yellow) wherever the scenes drawn put them: on the settled
    frames of five development games in the held-out style, end colour was 88.2% with
    seed-1 models and 93.1% with seed-2 ones.  Measured at the true ends of found cards
    there, over ten training sets (seeds 1-4 and six draws of as many scenes from their
    union): network 93.7% (standard deviation 2.0), five networks each fitted on a bootstrap
    of whole scenes 93.4% (1.1), logistic regression 95.5% (1.4), and on the adev77 medium
    and hard scenes 97.9/98.0% against 98.3/98.3%.  Whole pipeline, seeds 1-4: games
    92.1/93.1/93.6/94.0% (network 88.2/93.1/89.5/93.5), adev77 hard 95.6% and medium 97.3%
    on average (network 95.2 and 96.4), recall, precision and kinds within half a point.
    720 more scenes rendered for the colour model alone (two minutes more) did not lift
    it further (seeds 1/2: games 91.9/93.3%).
    """
    return _linear(seed)


def features_of(samples: Samples, edge_model=None, p_edge=None):
    """(edge rows (4N, n), connecting labels, edge probabilities (N, 4), kind features)."""
    edges = edge_matrix(samples.measures, samples.lengths)
    edges = edges.reshape(-1, edges.shape[2])
    conn = np.array([c for cs in samples.edge_conn for c in cs])
    if p_edge is None:
        p_edge = edge_model.predict_proba(edges)[:, 1].reshape(-1, 4)
    turns = [orient(p_edge[i], samples.lengths[i]) for i in range(len(samples.measures))]
    return edges, conn, p_edge, kind_matrix(samples.measures, p_edge, turns)


def fit_models(samples: Samples, seed: int) -> dict:
    from sklearn.model_selection import cross_val_predict
    edges, conn, _, _ = features_of(samples, p_edge=np.zeros((len(samples.measures), 4)))
    edge_model = _linear(seed).fit(edges, conn)
    # the kind model learns from edge probabilities as they will look on unseen cards
    p_oof = cross_val_predict(_linear(seed), edges, conn, cv=3, method="predict_proba")[:, 1].reshape(-1, 4)
    _, _, _, feats = features_of(samples, p_edge=p_oof)
    kinds = np.array(samples.kinds)
    kind_model = _ensemble(seed + 1).fit(feats, kinds)
    colours = np.array([c for cs in samples.edge_colour for c in cs], dtype=object)
    has = np.array([c is not None for c in colours])
    colour_model = _colour_learner(seed + 2).fit(edges[has], colours[has].astype(str))
    return {"edge": edge_model, "kind": kind_model, "colour": colour_model,
            "typical": fit_face_typicality(feats, kinds),
            "face_reference": face_reference(feats, kinds, p_oof, samples.lengths), "thresholds": {}}


def face_reference(feats: np.ndarray, kinds: np.ndarray, p_edge: np.ndarray, lengths) -> dict:
    """What true faces show, for `recognise.face_surprise`: per group (middles; heads, tails
    and rainbow ends: their evidence differs) the sorted signed evidence of the training
    faces -- their connecting edges where their kind needs them, none elsewhere
    (`recognise.end_evidence`), features like those of their kind (`face_atypicality`).
    The kind and colour models' own conviction is added from the tune set (`choose_thresholds`):
    on the faces they were fitted to they are overconfident.

    Nothing here needs an example of what a face is not, so it holds for cards of games
    the renderer never drew.  It is measured out of fold (edge probabilities as the kind
    model learned from them, Gaussians fitted on the other two thirds of the scenes), on
    thousands of faces: the few hundred of the tune set leave the tails, where the
    decisions are, to a face or two.
    """
    from sklearn.model_selection import KFold
    atypical = np.full(len(kinds), np.nan)
    for fit_rows, held_rows in KFold(3).split(feats):   # in scene order: folds of whole scenes
        typical = fit_face_typicality(feats[fit_rows], kinds[fit_rows])
        atypical[held_rows] = face_atypicality(feats[held_rows], list(kinds[held_rows]), typical)
    turns = [orient(p_edge[i], lengths[i]) for i in range(len(kinds))]
    claimed, stray = end_evidence(p_edge, list(kinds), turns)
    evidence = {"claimed_end": claimed, "stray_end": stray, "atypicality": atypical}
    group = np.array([end_group(k) for k in kinds])
    faces = np.isin(kinds, FACE_KINDS)
    return {g: {name: np.sort(EVIDENCE_SIGNS[name] * values[faces & (group == g)]).astype(np.float32)
                for name, values in evidence.items()}
            for g in ("middle", "head_or_tail") if (faces & (group == g)).any()}


def fit_face_typicality(feats: np.ndarray, kinds: np.ndarray) -> dict:
    """What a face of each kind looks like, for `recognise.face_atypicality`: the training
    faces' kind features, standardised, and per face kind a Gaussian whose covariance is
    shrunk (Ledoit-Wolf: a rainbow end has a few dozen examples for ~90 features)."""
    from sklearn.covariance import LedoitWolf
    faces = np.isin(kinds, FACE_KINDS)
    mean = feats[faces].mean(axis=0).astype(np.float64)
    scale = np.maximum(feats[faces].std(axis=0).astype(np.float64), 1e-6)
    per_kind = {}
    for kind in FACE_KINDS:
        rows = kinds == kind
        if rows.sum() >= 5:
            fit = LedoitWolf().fit((feats[rows] - mean) / scale)
            per_kind[kind] = (fit.location_.astype(np.float32), fit.precision_.astype(np.float32))
    return {"mean": mean.astype(np.float32), "scale": scale.astype(np.float32), "kinds": per_kind}


def choose_thresholds(models: dict, tune: Samples, grid=np.round(np.arange(0.5, 0.96, 0.05), 2)) -> dict:
    """What a guess must show to be believed, chosen on scenes neither fitted nor scored on:

    - max_<group>_surprise: a face guess whose evidence together (`recognise.face_surprise`)
      is more surprising than this is reported `unknown`; the bar FACE_KEPT of the true faces
      named a face clear.  The kind and colour models' conviction joins the reference
      evidence here (`models["face_reference"]` gains it): on the training faces they are
      overconfident;
    - min_unknown_probability: below it an `unknown` guess is dropped as not a card,
      the one with the fewest errors:
      errors are foreign cards so dropped and non-cards named `unknown`, both wrong alike
      (the issue wants every foreign card reported and nothing else), so of equals the
      middle one: errors are often as few over a long stretch, and its strictest end
      dropped foreign cards that the tune set could not tell from the rest.
    """
    from .recognise import Recogniser
    edges, _, p_edge, feats = features_of(tune, models["edge"])
    p = models["kind"].predict_proba(feats)
    classes = np.array(models["kind"].classes_).astype(str)
    kinds = np.array(tune.kinds)
    named = classes[p.argmax(axis=1)]
    true_faces = np.isin(kinds, FACE_KINDS) & np.isin(named, FACE_KINDS)
    turns = [orient(p_edge[i], tune.lengths[i]) for i in range(len(kinds))]
    evidence = Recogniser({**models, "thresholds": {}}).face_evidence(p, feats, p_edge, turns, list(named),
                                                                   edges.reshape(len(kinds), 4, -1))
    groups = np.array([end_group(k) for k in named])
    out = {}
    reference = models["face_reference"]
    for g in reference:
        rows = true_faces & (groups == g)
        if rows.any():
            for name in ("face_probability", "end_colour"):   # the models' own conviction, out of sample
                values = EVIDENCE_SIGNS[name] * evidence[name][rows]
                reference[g][name] = np.sort(values[~np.isnan(values)]).astype(np.float32)
    surprise = face_surprise(evidence, list(groups), reference)
    for g in reference:
        rows = true_faces & (groups == g)
        if rows.any():
            out[f"max_{g}_surprise"] = round(float(np.quantile(surprise[rows], FACE_KEPT, method="higher")), 4)
    if "unknown" in classes:
        p_unknown = p[:, list(classes).index("unknown")]
        relevant = np.isin(kinds, ("unknown", "none"))
        out["min_unknown_probability"] = fewest_errors_threshold(
            p_unknown[relevant], (named == "unknown")[relevant], (kinds == "unknown")[relevant], grid,
            ties="middle")
    return out


def fewest_errors_threshold(p_face: np.ndarray, named_face: np.ndarray, is_face: np.ndarray, grid,
                            ties: str = "strictest") -> float:
    """The threshold of `grid` with the fewest positives below it plus negatives named positive
    at or above it.  When several tie: the highest (`ties="strictest"`), or the middle one
    (`"middle"`: where errors are as few over a stretch, the ends of the stretch are set by
    a card or two of the tune set, its middle is the choice another sample moves least)."""
    errors = [int((is_face & (p_face < t)).sum() + (~is_face & named_face & (p_face >= t)).sum()) for t in grid]
    best = [t for t, e in zip(grid, errors) if e == min(errors)]
    return float(max(best) if ties == "strictest" else best[(len(best) - 1) // 2])


def evaluate(models: dict, samples: Samples) -> dict:
    from .recognise import Recogniser
    edges, conn, p_edge, feats = features_of(samples, models["edge"])
    kinds = np.array(samples.kinds)
    faces = np.isin(kinds, FACE_KINDS)
    turns = [orient(p_edge[i], samples.lengths[i]) for i in range(len(kinds))]
    believed = np.array(Recogniser(models).believed_kinds(models["kind"].predict_proba(feats), feats, p_edge, turns,
                                                          edges.reshape(len(kinds), 4, -1)))
    colours = np.array([c for cs in samples.edge_colour for c in cs], dtype=object)
    has = np.array([c is not None for c in colours])
    return {
        "cards": int(len(kinds)),
        "find_recall": round(1 - samples.missed / max(1, samples.truth), 4),
        "edge_accuracy": round(float((models["edge"].predict(edges) == conn).mean()), 4),
        "kind_accuracy": round(float((models["kind"].predict(feats) == kinds).mean()), 4),
        # faces reported as the right face after every threshold (the rest mostly `unknown`)
        "believed_face_accuracy": round(float((believed[faces] == kinds[faces]).mean()), 4) if faces.any() else None,
        "colour_accuracy": round(float((models["colour"].predict(edges[has]) == colours[has].astype(str)).mean()), 4)
        if has.any() else None,
    }


def train(seed: int = 1, out_dir: str | Path | None = None, scenes: int | None = None,
          validate: int | None = None, progress=print, paper_file: str | Path | None = None) -> dict:
    """Fit every model and write it to `out_dir`.  `paper_file`: a learnt map trained before, taken
    as it is instead of trained again (over half the time; a change to recognition alone need
    not move the finder)."""
    from companion.synth.styles import HELD_OUT_STYLE, TRAIN_STYLES

    scenes = 360 if scenes is None else scenes
    validate = min(30, max(2, scenes // 4)) if validate is None else validate
    # the finder's learnt map first: the recognition models learn from what the finder finds with it
    if paper_file is not None:
        paper = _reused_map(paper_file)
        paper_report = {**paper.meta, "reused_from": Path(paper_file).name}
        progress(f"paper map: reused from {paper_file}")
    else:
        paper, paper_report = train_paper(seed, TIER_MIX, min(PAPER_SCENES, scenes), validate, HELD_OUT_STYLE,
                                          progress)
    progress(f"rendering {scenes} training scenes (styles {', '.join(TRAIN_STYLES)}, seed {seed})")
    samples = render_set("train", seed, scenes, TRAIN_STYLES, progress, paper=paper)
    samples.extend(render_set("train", seed, max(1, scenes // 6), TRAIN_STYLES, progress, foreign=True, paper=paper))
    progress(f"rendering {validate} validation scenes in the held-out style {HELD_OUT_STYLE!r}")
    held = render_set("validate", seed, validate, (HELD_OUT_STYLE,), progress, paper=paper)
    # the thresholds are quantiles of the tune set's true faces and error counts over its
    # foreign cards: a third as many scenes as training, and a sixth more rich in foreign cards
    tune_scenes, tune_foreign = max(2, scenes // 3), max(2, scenes // 6)
    progress(f"rendering {tune_scenes} tuning scenes and {tune_foreign} rich in foreign cards "
             "(training styles, seeds of their own)")
    tune = render_set("tune", seed, tune_scenes, TRAIN_STYLES, progress, paper=paper)
    tune.extend(render_set("tune", seed, tune_foreign, TRAIN_STYLES, progress, foreign=True, paper=paper))
    report = write_models(samples, held, seed, out_dir, progress, tune,
                          paper if paper_file is None else None, paper_report)
    if paper_file is not None:
        # the file itself, not the model saved again: another scikit-learn pickles it in other bytes
        target = Path(out_dir or MODELS_DIR) / PAPER_FILE
        if not target.exists() or not target.samefile(paper_file):
            shutil.copyfile(paper_file, target)
    return report


def _reused_map(path: str | Path) -> PaperModel:
    """The learnt map in `path`; a missing file or one that holds no map is the user's error."""
    try:
        paper = PaperModel.load(path)
    except Exception as exc:   # joblib fails in many ways on a file that is not one of its own
        raise ValueError(f"{path}: not a learnt map ({type(exc).__name__})") from None
    if paper is None:
        raise FileNotFoundError(f"{path}: no learnt map there")
    return paper


def write_models(samples: Samples, held: Samples, seed: int, out_dir: str | Path | None = None,
                 progress=print, tune: Samples | None = None, paper=None, paper_report: dict | None = None) -> dict:
    """Fit on `samples`, choose the face threshold on `tune`, score on `held`, write models/
    (joblib, training.json, README.md)."""
    import joblib
    from companion.synth.styles import HELD_OUT_STYLE, TRAIN_STYLES

    out = Path(out_dir) if out_dir else MODELS_DIR
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    progress(f"fitting on {len(samples.kinds)} found outlines")
    models = fit_models(samples, seed)
    if tune is not None and tune.kinds:
        models["thresholds"] = {**models["thresholds"], **choose_thresholds(models, tune)}
    report = {
        "seed": seed, "train_scenes": samples.scenes - samples.foreign_scenes,
        "train_foreign_scenes": samples.foreign_scenes, "validate_scenes": held.scenes,
        "train_styles": list(TRAIN_STYLES), "held_out_style": HELD_OUT_STYLE,
        "tiers": list(TIER_MIX), "train_cards": len(samples.kinds),
        "kind_counts": {str(k): int(n) for k, n in zip(*np.unique(samples.kinds, return_counts=True))},
        "train": evaluate(models, samples), "held_out": evaluate(models, held),
        "tune_scenes": tune.scenes - tune.foreign_scenes if tune is not None else 0,
        "tune_foreign_scenes": tune.foreign_scenes if tune is not None else 0,
        "thresholds": dict(models.get("thresholds", {})),
        "paper": paper_report,
        # another release of these can fit other numbers from the same seed
        "libraries": library_versions(),
    }
    # the time taken is only said, never stored: the same seed must give the same bytes
    progress(f"fitted and scored in {time.time() - t0:.1f} s")
    models["meta"] = report
    joblib.dump(models, out / MODEL_FILE, compress=3)
    if paper is not None:
        paper.meta = paper_report or {}
        paper.save(out / PAPER_FILE)
    (out / "training.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "README.md").write_text(models_readme(report))
    progress(json.dumps(report["held_out"]))
    return report


def library_versions() -> dict[str, str]:
    import sklearn
    return {"numpy": np.__version__, "scikit-learn": sklearn.__version__, "opencv": cv2.__version__}


def models_readme(report: dict) -> str:
    """models/README.md: what each file is, what it learned from, how it scored on held-out data."""
    tr, ho = report["train"], report["held_out"]
    kinds = ", ".join(f"{k} {n}" for k, n in report["kind_counts"].items())
    paper = report.get("paper") or {}
    paper_ho, paper_tr = paper.get("held_out", {}), paper.get("train", {})
    paper_layers = "layers of " + " and ".join(str(n) for n in paper.get("layers", [])) + " units"
    paper_features, paper_scenes = paper.get("features"), paper.get("scenes_per_stage")
    paper_held, held_style = paper.get("held_out_scenes"), report["held_out_style"]
    paper_accuracy, paper_recall = paper_ho.get("accuracy"), paper_ho.get("card_recall")
    paper_precision, paper_train_accuracy = paper_ho.get("card_precision"), paper_tr.get("accuracy")
    core_recall, core_precision = paper_ho.get("core_recall"), paper_ho.get("core_precision")
    reused = f" --paper models/{PAPER_FILE}" if paper.get("reused_from") else ""
    libraries = ", ".join(f"{k} {v}" for k, v in (report.get("libraries") or {}).items())
    reused_note = ("\nThis run took the map as it was (`--paper`) and trained the recognition models on what\n"
                   "the finder finds with it; the map's figures are from the run that trained it."
                   if reused else "")
    return f"""# Trained models

Written by `companion train --seed {report['seed']}{reused}` (do not edit by hand; rerun it).
`recognition.joblib` holds three scikit-learn classifiers (each behind a scaler), a
Gaussian per face kind of the kind features (`typical`), the evidence true faces show
(`face_reference`) and the thresholds below,
loaded once by `companion.vision.recognise.Recogniser`:

| model | predicts | from |
|---|---|---|
| `edge` (logistic regression) | whether a card edge is a connecting edge (a body meets it) | colour statistics of the edge zone, white-balanced on the card's paper |
| `kind` ({KIND_MEMBERS} small neural networks, their probabilities averaged) | head, tail, middle, rainbow_head, rainbow_tail, back, unknown, none (not a card) | body-shape profile along the card, stripe measures, edge probabilities |
| `colour` (logistic regression) | the palette colour at a connecting edge | Lab statistics of the end zone after per-card white balance |

`paper.joblib` holds the finder's learnt map of table, card rims and card cores
(`companion.vision.paper.PaperModel`, loaded by `companion.vision.analyze.Analyzer`): two small
neural networks ({paper_layers}) over {paper_features} features of each pixel of a coarse copy of
the picture (its colour beside the table's, how rare that colour is on the table, how smooth and
how edged its neighbourhood is, each also as a ratio to the table's own; thin dark and light lines
at full size), the second also seeing the first one's maps around the pixel.  Each stage learnt
from {paper_scenes} scenes of its own (purpose "train", the tiers and styles below, 640x480 to
1920x1080); pixels are drawn evenly from card cores, card rims, table, and the table just around
cards.  On the drawn pixels of {paper_held} held-out hard scenes in `{held_style}`: card-or-table
accuracy {paper_accuracy}, card recall {paper_recall}, card precision {paper_precision}
(training: {paper_train_accuracy}); core recall {core_recall}, core precision {core_precision}.{reused_note}

## Trained on

{report['train_scenes']} rendered scenes (`companion.synth.scene.render_scene`, 1280x720 and 960x720),
tiers cycling {', '.join(report['tiers'])}, art styles {', '.join(report['train_styles'])} only; the style
`{report['held_out_style']}` is never trained on.  Each print's paper is drawn from white to yellowed
with age (`companion.synth.styles`), so that balancing a card on its paper meets papers
that are not white.  Seeds come from `companion.vision.seeds`
(purpose "train"), which no bench run ever renders.  A further {report.get('train_foreign_scenes', 0)} scenes of their own
each lay 3-6 other games' cards more than their tier does (ordinary scenes hold too few
to learn `unknown` from).  Every outline the finder returned
was matched to the truth (overlap >= 0.5): matched ones teach their kind, edges and end
colours; unmatched ones teach `none`.  Cards the finder missed, when in plain view,
were added from their true outline jittered by 1.5% of a card width.
{report['train_cards']} outlines: {kinds}.
Fitted with {libraries or "libraries not recorded"}: other releases of them can fit other
numbers from the same seed.

## Scores

| set | outlines | finder recall | edge accuracy | kind accuracy | faces believed and right | end-colour accuracy |
|---|---|---|---|---|---|---|
| training | {tr['cards']} | {tr['find_recall']} | {tr['edge_accuracy']} | {tr['kind_accuracy']} | {tr.get('believed_face_accuracy')} | {tr['colour_accuracy']} |
| held out: {report['validate_scenes']} scenes in `{report['held_out_style']}` | {ho['cards']} | {ho['find_recall']} | {ho['edge_accuracy']} | {ho['kind_accuracy']} | {ho.get('believed_face_accuracy')} | {ho['colour_accuracy']} |

Accuracies are over the outlines the finder returned (including its false finds,
whose right answer is `none`); kind accuracy is the kind model's own guess, "faces
believed and right" the share of true faces reported as their kind after the checks
below (most of the rest are reported `unknown`).  Whole-table figures come from `companion bench`.

## Thresholds

| threshold | a card is believed with | value |
|---|---|---|
{thresholds_table(report.get('thresholds', {}))}

A face guess is believed only with positive evidence that it is a Hisss face: the
kind model's conviction, its connecting edges where its kind needs them, none
elsewhere, features typical of the training faces of its kind (a Gaussian per
kind), and one of the deck's inks at each connecting end (the colour model's conviction).
Each piece is ranked among true faces of its group (the edges and the look among the
training faces, measured out of fold: `companion.vision.train.face_reference`; the
models' conviction among the tune set's faces), and the pieces' tail shares are combined
(Fisher: the sum of their -log, `companion.vision.recognise.face_surprise`).  A face
guess more surprising than the bar its group's true faces clear {FACE_KEPT:.0%} of the time is
reported `unknown`; none of this needs an example of another game's card.  An
`unknown` guess below the unknown probability (the one with the fewest errors) is
dropped as not a card, unless the finder fitted its outline as well as a card's
(`companion.vision.recognise.CARD_LIKE_OUTLINE`).  Both are chosen on {report.get('tune_scenes', 0)} scenes of their own (purpose "tune", training
styles) and {report.get('tune_foreign_scenes', 0)} more rich in other games' cards, neither fitted nor scored on
(`choose_thresholds`).

Weighed together, the checks turn away far fewer true faces than one bar per piece of
evidence did (hard development scenes: 3% against 10%); a foreign card a little off in
every respect adds up only when the ink at its ends is weighed too: without that piece,
one real foreign card in `../shared/real_photos/cards/009.jpg` passed with models of
one seed or another.  With it no real foreign card is read as a face (seeds 1 and 2).
"""


THRESHOLD_MEANINGS = {
    "max_middle_surprise": "a middle's evidence together at most this surprising (sum of -log tail shares)",
    "max_head_or_tail_surprise": "a head's, tail's or rainbow end's evidence together at most this surprising",
    "min_unknown_probability": "an `unknown` guess's probability at least",
}


def thresholds_table(thresholds: dict) -> str:
    return "\n".join(f"| `{k}` | {THRESHOLD_MEANINGS.get(k, '')} | {v} |" for k, v in thresholds.items())


def main(args) -> int:
    report = train(args.seed, args.out, args.scenes, paper_file=args.paper)
    print(f"wrote {Path(args.out) if args.out else MODELS_DIR}/{MODEL_FILE} "
          f"(held-out kind accuracy {report['held_out']['kind_accuracy']}, "
          f"colour accuracy {report['held_out']['colour_accuracy']})")
    return 0
