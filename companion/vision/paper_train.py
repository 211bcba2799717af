"""Teach the learnt card-or-table map (`paper.PaperModel`) from rendered tables.

Each rendered scene gives, per pixel of its coarse copy, the features and
its class: table, a card's rim or a card's core (from the renderer's label
of each card's visible pixels).  Pixels are drawn evenly from cores, rims,
the table, and a band of table just around the cards, where the map must
be sharp.  The first stage learns from one set of scenes; the second stage,
which also sees the first stage's maps around each pixel, from another, so
that it learns how the first stage errs on scenes it never saw.
"""
from __future__ import annotations

from multiprocessing import get_context

import cv2
import numpy as np

from .find import work_scale
from .maps import candidate_masks, evenly_lit, local_contrast_masks, rare_colour_masks
from .paper import CORE, CORE_DEPTH, RIM, TABLE, PaperModel, context_features, pixel_features
from .seeds import scene_seed

SCENES = 300                       # per stage
SIZES = ((1280, 720), (960, 720), (640, 480), (1920, 1080))
PIXELS = (("core", 1000), ("rim", 1000), ("table", 1500), ("around", 1000))   # drawn per scene
AROUND = 7                         # coarse px: the band around the cards drawn on its own
HIDDEN = (32, 16)                  # the network's layers: larger ones scored no better held out


def picture_features(image: np.ndarray) -> np.ndarray:
    """The map's features of a BGR picture, made as `find` makes them."""
    scale = work_scale(image.shape)
    small = image if scale == 1.0 else cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    # the very calls `regions.search_maps` makes, so that training can never drift from the finder
    # (the maps they also make are thrown away: training time, not the finder's)
    rarity, _ = rare_colour_masks(lab)
    local, _ = local_contrast_masks(lab)
    _, _, distance = candidate_masks(lab)
    return pixel_features(lab, evenly_lit(lab[..., 0]), rarity, local, distance, scale)


def pixel_classes(label: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """TABLE, RIM or CORE for each coarse pixel (what most of it is), from the renderer's label
    of each card's visible pixels.

    A card's core is measured in its own visible pixels: where another card
    lies on it, its core stops short of that card too.
    """
    core = np.zeros(label.shape, np.float32)
    for k in np.unique(label):
        if k == 0:
            continue
        inside = cv2.distanceTransform((label == k).astype(np.uint8), cv2.DIST_L2, 3)
        core[inside >= CORE_DEPTH * inside.max()] = 1.0
    h, w = shape[:2]
    card = cv2.resize((label > 0).astype(np.float32), (w, h), interpolation=cv2.INTER_AREA) > 0.5
    classes = np.where(card, RIM, TABLE).astype(np.uint8)
    classes[card & (cv2.resize(core, (w, h), interpolation=cv2.INTER_AREA) > 0.5)] = CORE
    return classes


def draw_pixels(classes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Flat indices of the pixels one scene teaches: cores, rims, table, and table around cards."""
    card = classes != TABLE
    around = cv2.dilate(card.astype(np.uint8), np.ones((AROUND, AROUND), np.uint8)).astype(bool) & ~card
    pools = {"core": np.flatnonzero(classes == CORE), "rim": np.flatnonzero(classes == RIM),
             "table": np.flatnonzero(~card), "around": np.flatnonzero(around)}
    picks = [rng.choice(pools[name], min(n, len(pools[name])), replace=False)
             for name, n in PIXELS if len(pools[name])]
    return np.concatenate(picks)


def _scene(args) -> tuple[np.ndarray, np.ndarray]:
    purpose, base, index, tier, style, first = args
    from companion.synth.scene import render_scene
    size = SIZES[index % len(SIZES)] if style is None else None
    scene = render_scene(scene_seed(purpose, base, index), tier=tier, style=style, size=size)
    features = picture_features(scene.image)
    if first is not None:
        features = context_features(features, *first_stage(first, features))
    truth = pixel_classes(scene.label, features.shape)
    idx = draw_pixels(truth, np.random.default_rng([base, index]))
    return features.reshape(-1, features.shape[2])[idx], truth.ravel()[idx]


def first_stage(classifier, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return PaperModel(classifier, None).first_probability(features)


def pixel_set(purpose: str, base: int, indices, tiers, style=None, first=None, workers: int = 2):
    """(features, class) of the pixels drawn from the scenes `indices` (tiers cycled)."""
    jobs = [(purpose, base, i, tiers[i % len(tiers)], style, first) for i in indices]
    # spawned, not forked: a fork of a process whose OpenCV or BLAS threads hold a lock can hang
    with get_context("spawn").Pool(workers) as pool:
        rows = pool.map(_scene, jobs, chunksize=2)
    return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])


def _network(seed: int):
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    return make_pipeline(StandardScaler(), MLPClassifier(HIDDEN, max_iter=60, early_stopping=True,
                                                         random_state=seed))


def pixel_scores(model: PaperModel, X: np.ndarray, y: np.ndarray) -> dict:
    """Card-or-table accuracy, card recall and precision, and core recall and precision of the
    map on drawn pixels (second-stage features)."""
    p = model.second.predict_proba(X)
    card, core = p[:, RIM] + p[:, CORE] > 0.5, p[:, CORE] > 0.5
    is_card, is_core = y != TABLE, y == CORE

    def share(a, b):
        return round(float(np.mean(a[b])), 4)
    return {"pixels": int(len(y)), "accuracy": round(float(np.mean(card == is_card)), 4),
            "card_recall": share(card, is_card), "card_precision": share(is_card, card),
            "core_recall": share(core, is_core), "core_precision": share(is_core, core)}


def train_paper(seed: int, tiers, scenes: int = SCENES, held_out: int = 30, held_out_style: str = "",
                progress=print) -> tuple[PaperModel, dict]:
    """Both stages fitted on training scenes, scored on held-out hard scenes in the held-out style."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    progress(f"paper map: drawing pixels of {scenes} scenes")
    X, y = pixel_set("train", seed, range(scenes), tiers)
    with warnings.catch_warnings():
        # early stopping ends most fits; the cap is on time, not a sign of a bad fit
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = _network(seed).fit(X, y)
        progress(f"paper map: second stage on {scenes} more scenes")
        X2, y2 = pixel_set("train", seed, range(scenes, 2 * scenes), tiers, first=first)
        second = _network(seed).fit(X2, y2)
    model = PaperModel(first, second)
    Xh, yh = pixel_set("validate", seed, range(held_out), ("hard",), style=held_out_style, first=first)
    report = {"scenes_per_stage": scenes, "layers": list(HIDDEN), "features": X.shape[1],
              "train": pixel_scores(model, X2, y2), "held_out": pixel_scores(model, Xh, yh),
              "held_out_scenes": held_out}
    return model, report
