"""Use what a calibration learned when analysing: the deck's own colours and kinds.

`ProfileAdapter.adapt(image, readings)` takes the recogniser's readings and
re-decides, with the profile's evidence about *this* deck under *this* light:

- end colours: each connecting end's balanced Lab (the same measurement the
  calibration made) is scored under the profile's per-colour Gaussians,
  widened for the light changing between calibration and play; a middle's two
  colours are chosen together among the pairs the deck actually holds;
- kinds: the trained model's kind probabilities are shifted by the profile's
  per-kind offsets (fitted on the calibration photo), and a one-ended card's
  head-or-tail shape evidence is weighed against this deck's heads and tails.
  A kind only changes within cards of the same number of ends (the ends'
  places were already found).

The vision's `Analyzer` builds one from its profile and applies it in `read`,
so every command that takes `--profile` gets it.
"""
from __future__ import annotations

from itertools import permutations

import numpy as np

from companion.game.cards import Card, Kind
from companion.game.deck import Deck

from .measure import measure_cards

ONE_END = ("head", "tail", "rainbow_head", "rainbow_tail")
SCENE_VARIANCE = 36.0     # Lab units^2 added to every colour model: play light is not calibration light
# Weight of this deck's colour models beside the trained colour model.  Measured on hard-tier scenes of
# unseen decks under the held-out light (truth outlines, 67 ends): model alone 98.5% of ends right,
# weight 0.3 97.0%, weight 1 82.1%.  A model fitted on one calmly lit photo does not carry over to
# shadows, glare and blur as well as the trained one: with a recogniser the deck's pairs decide, not its inks.
PROFILE_WEIGHT = 0.0
SHAPE_WEIGHT = 0.5        # how much a head/tail shape measurement counts against the model's belief


class ProfileAdapter:
    def __init__(self, colours: tuple[str, ...], means: np.ndarray, covs: np.ndarray, deck: Deck | None,
                 kind_bias: dict[str, float], head_shape: dict | None):
        self.colours = colours
        self.means = means
        covs = covs + np.eye(3)[None] * SCENE_VARIANCE
        self._inv = np.linalg.inv(covs)
        self._logdet = np.linalg.slogdet(covs)[1]
        self.kind_bias = kind_bias
        self.head_shape = head_shape
        self.pairs = None
        if deck is not None:
            self.pairs = {frozenset(c.colours) for c, n in deck.counts.items() if c.kind is Kind.MIDDLE and n}

    @classmethod
    def from_profile(cls, profile) -> "ProfileAdapter | None":
        """None when the profile holds no colour models (the default profile, or another writer's)."""
        raw = dict(getattr(profile, "raw", {}) or {})
        models = raw.get("colour_models")
        if not models:
            return None
        colours = tuple(c for c in profile.colours if c in models)
        means = np.array([models[c]["mean"] for c in colours], float)
        covs = np.array([models[c]["cov"] for c in colours], float)
        deck = None
        if raw.get("deck"):
            try:
                deck = Deck.from_dict(raw["deck"])
            except ValueError:
                deck = None
        ka = raw.get("kind_adaptation", {}) or {}
        return cls(colours, means, covs, deck, dict(ka.get("kind_bias", {}) or {}), ka.get("head_shape"))

    # -- colours
    def colour_log_likelihood(self, lab: np.ndarray) -> np.ndarray:
        d = np.atleast_2d(lab)[:, None, :] - self.means[None]
        m = np.einsum("nki,kij,nkj->nk", d, self._inv, d)
        return -0.5 * (m + self._logdet[None])

    def adapt(self, image: np.ndarray, readings: list, recogniser=None) -> list:
        """Re-decide kinds and colours in place; with the `recogniser`, its colour beliefs are
        combined with the profile's (each end: log p_model + PROFILE_WEIGHT * log p_profile)."""
        faces = [r for r in readings if r.kind in ONE_END or r.kind == "middle"]
        if not faces:
            return readings
        looks = measure_cards(image, [r.outline for r in faces])
        model = self._model_colours(recogniser, image, faces) if recogniser is not None else None
        for n, (r, lk) in enumerate(zip(faces, looks)):
            kind_p = self._kind(r, lk)
            edges = list(r.edge_order)
            if r.kind in ("head", "tail", "middle"):
                weight = PROFILE_WEIGHT if model is not None else 1.0   # alone, the profile decides
                ll = weight * self.colour_log_likelihood(lk.ink_lab[edges]) if edges else None
                if model is not None and edges:
                    ll = ll + np.log(np.maximum(model[n][edges], 1e-4))
            if r.kind == "middle" and len(edges) == 2:
                (a, b), p = self._best_pair(ll)
                r.colours = [self.colours[a], self.colours[b]]
                r.confidence = round(float(kind_p * p), 4)
            elif r.kind in ("head", "tail") and len(edges) == 1:
                ll = ll[0]
                post = np.exp(ll - ll.max())
                post /= post.sum()
                k = int(post.argmax())
                r.colours = [self.colours[k]]
                r.confidence = round(float(kind_p * post[k]), 4)
            else:
                r.colours = []
                r.confidence = round(float(kind_p), 4)
        return readings

    def _model_colours(self, recogniser, image, faces) -> list[np.ndarray]:
        """The trained colour model's probabilities, (4, colours) per card, in the profile's colour order."""
        from companion.vision.recognise import edge_matrix, measure

        rows = edge_matrix([measure(image, r.outline) for r in faces], [r.outline.edge_lengths for r in faces])
        p = recogniser.colour.predict_proba(rows.reshape(-1, rows.shape[2])).reshape(len(faces), 4, -1)
        classes = [str(c) for c in recogniser.colours]
        cols = [classes.index(c) if c in classes else None for c in self.colours]
        out = np.full((len(faces), 4, len(self.colours)), 1e-4)
        for j, c in enumerate(cols):
            if c is not None:
                out[:, :, j] = p[:, :, c]
        return list(out)

    def _best_pair(self, ll: np.ndarray) -> tuple[tuple[int, int], float]:
        scores = {}
        for a, b in permutations(range(len(self.colours)), 2):
            if self.pairs is not None and frozenset((self.colours[a], self.colours[b])) not in self.pairs:
                continue
            scores[(a, b)] = ll[0, a] + ll[1, b]
        if not scores:
            return (int(ll[0].argmax()), int(ll[1].argmax())), 0.0
        keys = list(scores)
        v = np.array([scores[k] for k in keys])
        p = np.exp(v - v.max())
        p /= p.sum()
        j = int(p.argmax())
        return keys[j], float(p[j])

    # -- kinds
    def _kind(self, r, look) -> float:
        """Re-decide a one-ended card's kind (among one-ended kinds); the kind's probability."""
        probs = dict(r.kind_probs or {})
        if not probs:
            return 1.0
        group = ONE_END if r.kind in ONE_END else ("middle",)
        z = {k: np.log(max(probs.get(k, 0.0), 1e-6)) + self.kind_bias.get(k, 0.0) for k in probs}
        if r.kind in ONE_END and self.head_shape and r.edge_order:
            hs = self.head_shape
            x = float(look.far_shape[r.edge_order[0]])
            llr = ((x - hs["tail_mean"]) ** 2 - (x - hs["head_mean"]) ** 2) / (2 * hs["sd"] ** 2)
            llr = SHAPE_WEIGHT * float(np.clip(llr, -8, 8))
            for k in ("head", "rainbow_head"):
                if k in z:
                    z[k] += llr / 2
            for k in ("tail", "rainbow_tail"):
                if k in z:
                    z[k] -= llr / 2
        v = np.array(list(z.values()))
        p = np.exp(v - v.max())
        p /= p.sum()
        post = dict(zip(z, p))
        best = max((k for k in group if k in post), key=lambda k: post[k], default=r.kind)
        r.kind = best
        if best in ("rainbow_head", "rainbow_tail"):
            r.colours = []
        return float(post.get(best, 1.0))


def adapted_card(r) -> Card | None:
    """The reading as a card (for tests and reports)."""
    kinds = {"head": Kind.HEAD, "tail": Kind.TAIL, "middle": Kind.MIDDLE,
             "rainbow_head": Kind.RAINBOW_HEAD, "rainbow_tail": Kind.RAINBOW_TAIL}
    k = kinds.get(r.kind)
    if k is None:
        return None
    return Card(k, tuple(r.colours) if k in (Kind.HEAD, Kind.TAIL, Kind.MIDDLE) else ())


def calibrated_analyzer(profile, models_dir=None):
    """An Analyzer for a calibrated deck (the Analyzer applies the profile's adapter itself)."""
    from companion.vision.analyze import Analyzer

    return Analyzer(profile, models_dir)
