"""Use what a calibration learned when analysing: the deck's own light, colours and kinds.

`ProfileAdapter.recognise(image, outlines, recogniser)` is what the vision's
`Analyzer.read` calls for a calibrated deck instead of the plain recogniser:

- light: the frame is white-balanced on its own cards' paper (`white_balanced`)
  before the kind model reads it, so a lamp outside everything the models were
  trained under looks ordinary to them;
- kinds: the trained kind model's probabilities carry the profile's per-kind
  offsets (fitted on the calibration photo) before the recogniser's face and
  unknown thresholds; a one-ended card's head-or-tail shape is then weighed
  against this deck's heads and tails (`adapt`).  A face must look like a face
  of this deck: the typical faces of the positive-evidence check are moved by
  as much as the calibration photo's faces lay from them.  An object that is no
  card of this deck stays only if the frame as photographed shows it as a card too;
- end colours (`adapt`): log p(trained colour model) (weighed down under a
  lamp beyond every trained light) + the log-likelihood under the profile's
  per-colour Gaussians of ink reflectance (`measure.reflectance_lab`: each
  pixel divided by the card's own paper, so the lamp's colour and the card's
  shading cancel), those Gaussians first moved to how this frame shows the inks
  (`in_this_frame`, once per frame: `frame_reader`); a middle's two colours are
  chosen together among the pairs the deck holds; each end's posterior is left
  in the reading's `colour_probs` (in the recogniser's colour order), so that
  the analyser's `within_the_deck` weighs what this reader believed when it
  renames a copy too many.

`adapt(image, readings)` alone (no recogniser) names end colours by the
profile's models only.
"""
from __future__ import annotations

from itertools import permutations

import cv2
import numpy as np

from companion.game.cards import Card, Kind
from companion.game.deck import Deck
from companion.vision.cloth import cloth_cells
from companion.vision.features import paper_colour, warp_card
from companion.vision.profile import ProfileError
from companion.vision.recognise import FACE_KINDS, alternatives

from .label import ColourModels
from .measure import REFLECTANCE_PAPER, measure_cards

ONE_END = ("head", "tail", "rainbow_head", "rainbow_tail")
SCENE_VARIANCE = 9.0      # Lab units^2 added to every colour model: play light is not calibration light
FIT_ENDS = 8              # fewer face ends than this in a frame: the profile's colour models stand as they are
FIT_ROUNDS = 3
CHROMA_SCALE = (0.5, 1.25)   # how far a frame may wash out (or deepen) every ink of the photo
# a frame's stray light (`in_this_frame`): each channel's share (B, G, R) of the way from an
# ink's reflectance to the paper's, searched on this grid, a priori within VEIL_SD of none;
# with fewer face ends than VEIL_ENDS, the profile's colour models stand as they are
VEIL_GRID = (np.linspace(-0.2, 0.6, 17), np.linspace(-0.2, 0.4, 7), np.linspace(-0.2, 0.4, 7))
VEIL_SD = 0.2
VEIL_ENDS = 3
# under a lamp beyond every trained light, how much the trained colour model's belief counts
# beside the profile's: it never saw such a light (development tables under the held-out lamp:
# colour errors 51 at full weight, 45 at half, 49 at 0.3)
MODEL_WEIGHT = 0.5
SHAPE_WEIGHT = 0.5        # how much a head/tail shape measurement counts against the model's belief
MIN_PAPERS = 3            # fewer found cards than this: the calibration photo's white balance stands in
STRONG_CAST = 2.5         # largest / smallest paper gain beyond every trained light (with the paper's tint)
# Under such a lamp, an `unknown` of the balanced frame is another game's card when the kind model
# gives it this probability, the finder fitted it this surely (a guessed outline scores 0.5 and
# fits a cloth's cell or a phone's glass as well) and it is at least this share of the faces'
# median area (`ProfileAdapter._vouched_unknowns`).  Chosen on development decks (`bench`
# seeds 3 and 5), not on the bench's own: asking a card's fit of 0.9 dropped foreign cards
# fitted at 0.8 (the lamp blurs their rims); at 0.7 no false card came in there, below it
# outlines on no card and on faces did.
FOREIGN_PROBABILITY = 0.5
FOREIGN_OUTLINE = 0.7
FOREIGN_AREA = 0.4


class ProfileAdapter:
    def __init__(self, colours: tuple[str, ...], means: np.ndarray, covs: np.ndarray, deck: Deck | None,
                 kind_bias: dict[str, float], head_shape: dict | None, reflectance: bool = False,
                 gains_bgr: np.ndarray | None = None, typicality_shift=None):
        self.colours = colours
        self.reflectance = reflectance      # the models are over `refl_lab` (else the older `ink_lab`)
        self.gains_bgr = None if gains_bgr is None else np.asarray(gains_bgr, np.float32)
        self._adapted: tuple | None = None
        self.means, self.covs = means, covs                  # the inks as the calibration photo showed them
        self.models = ColourModels(colours, means, covs + np.eye(3)[None] * SCENE_VARIANCE)
        self.kind_bias = kind_bias
        self.typicality_shift = typicality_shift   # this deck's faces beside the training faces
        self.head_shape = head_shape
        self.pairs = None
        self.deck = deck
        if deck is not None:
            self.pairs = {frozenset(c.colours) for c, n in deck.counts.items() if c.kind is Kind.MIDDLE and n}

    @classmethod
    def from_profile(cls, profile) -> "ProfileAdapter | None":
        """None when the profile holds no colour models (the default profile, or another writer's)."""
        raw = dict(getattr(profile, "raw", {}) or {})
        models = raw.get("colour_models")
        if not models:
            return None
        reflectance = bool(raw.get("colour_models_reflectance"))
        if reflectance:
            models = raw["colour_models_reflectance"]
        try:
            colours = tuple(c for c in profile.colours if c in models)
            means = np.array([models[c]["mean"] for c in colours], float).reshape(len(colours), 3)
            covs = np.array([models[c]["cov"] for c in colours], float).reshape(len(colours), 3, 3)
            if not (np.isfinite(means).all() and np.isfinite(covs).all()):
                raise ValueError("numbers that are not finite")
            deck = None
            if raw.get("deck"):
                try:
                    deck = Deck.from_dict(raw["deck"])
                except (ValueError, TypeError, AttributeError, KeyError):
                    deck = None
            ka = raw.get("kind_adaptation", {}) or {}
            bias = {str(k): float(v) for k, v in dict(ka.get("kind_bias", {}) or {}).items()}
            shape = ka.get("head_shape")
            if shape is not None:
                shape = {k: float(shape[k]) for k in ("head_mean", "tail_mean", "sd")}
            shift = ka.get("typicality_shift")
            shift = None if shift is None else np.asarray(shift, float).ravel()
            gains = (raw.get("white_balance") or {}).get("gains_bgr")
            gains = None if gains is None else np.asarray(gains, float).reshape(3)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProfileError(f"{profile.source or 'profile'}: its calibration is damaged "
                               f"({type(exc).__name__}: {exc}); calibrate again") from None
        return cls(colours, means, covs, deck, bias, shape, reflectance, gains, shift)

    # -- the frame as the trained models should see it
    @property
    def strong_cast(self) -> bool:
        """Whether the calibration photo's lamp cast its paper beyond every trained light."""
        return self.gains_bgr is not None and strong_cast(self.gains_bgr)

    def balance(self, image: np.ndarray, outlines: list) -> np.ndarray:
        return white_balanced(image, outlines, self.gains_bgr)

    def finder_view(self, image: np.ndarray) -> np.ndarray:
        """The frame as the finder should see it, before any card is found: under a strong cast,
        balanced as the calibration photo's paper was; otherwise as it is (the finder knows the
        lights it was trained under, and on games lit by them a balanced frame did no better)."""
        return self.balance(image, []) if self.strong_cast else image

    def frame_reader(self, image: np.ndarray, outlines: list, recogniser):
        """How every stage of the analyser reads outlines in this frame: the frame balanced once,
        on the finder's `outlines`; and under a lamp beyond every trained light, its inks' models
        fitted once, on the first read's ends (a stage reading a card or two alone would read
        them under the photo's models, whose inks such a frame's stray light has moved far;
        under a trained light, on development games, the frame's models cost moves there)."""
        seen = self.balance(image, outlines)
        fitted: list | None = [] if self.strong_cast else None
        return lambda image, outlines: self.recognise(image, outlines, recogniser, seen, fitted)

    def recognise(self, image: np.ndarray, outlines: list, recogniser, seen: np.ndarray | None = None,
                  fitted: list | None = None) -> list:
        """The recogniser's readings of `outlines`, made with what the calibration learned:
        kinds from the white-balanced frame with this deck's kind offsets applied before the
        recogniser's face/unknown thresholds, then colours and kinds re-decided by `adapt`.
        `seen`: the frame already balanced for the whole of it; else it is balanced on `outlines`.
        `fitted`: the frame's colour models once fitted (`adapt`)."""
        seen = self.balance(image, outlines) if seen is None else seen
        readings = self._biased(recogniser).recognise(seen, outlines)
        if any(r.kind == "unknown" for r in readings):
            readings = self._vouched_unknowns(image, readings, recogniser)
        return self.adapt(image, readings, recogniser, biased=True, fitted=fitted)

    def _vouched_unknowns(self, image: np.ndarray, readings: list, recogniser) -> list:
        """The readings less each `unknown` nothing but the balanced frame vouches for.

        Made grey, a patterned cloth's light squares pass for card paper: an object that is no
        card of this deck is reported when the frame as photographed shows it as a card too.
        Under a lamp beyond every trained light that frame says little (the kind model calls
        most other games' cards there no card at all), so there an `unknown` the kind model
        itself calls so (`FOREIGN_PROBABILITY`), outlined far more surely than a guess
        (`FOREIGN_OUTLINE`), not far smaller than the faces (`FOREIGN_AREA`: other games' cards
        are about a Hisss card's size, a cloth's cells are not) and not repeating around itself
        as a cloth's cells do (`cloth_cells`) is kept as well."""
        unknown = [r for r in readings if r.kind == "unknown"]
        kept = {id(r.outline) for r in recogniser.recognise(image, [r.outline for r in unknown])}
        if self.strong_cast:
            faces = [r.outline.area for r in readings if r.kind in FACE_KINDS]
            least = FOREIGN_AREA * float(np.median(faces)) if faces else 0.0
            sure = [r for r in unknown if id(r.outline) not in kept and r.outline.score >= FOREIGN_OUTLINE
                    and r.outline.area >= least and r.kind_probs.get("unknown", 0.0) >= FOREIGN_PROBABILITY]
            if sure:
                cells = cloth_cells(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), [r.outline.corners for r in sure])
                kept |= {id(r.outline) for r, cell in zip(sure, cells) if not cell}
        return [r for r in readings if r.kind != "unknown" or id(r.outline) in kept]

    def _biased(self, recogniser):
        if not self.kind_bias and self.typicality_shift is None:
            return recogniser
        if self._adapted is None or self._adapted[0] is not recogniser:
            from companion.vision.recognise import Recogniser, shifted_typical
            typical = recogniser.typical
            if typical is not None and self.typicality_shift is not None:
                typical = shifted_typical(typical, self.typicality_shift)
            models = {"edge": recogniser.edge, "kind": BiasedKinds(recogniser.kind, self.kind_bias),
                      "colour": recogniser.colour, "meta": recogniser.meta, "typical": typical,
                      "face_reference": recogniser.face_reference, "thresholds": recogniser.thresholds}
            self._adapted = (recogniser, Recogniser(models))
        return self._adapted[1]

    # -- colours
    def in_this_frame(self, ink: np.ndarray, prior: np.ndarray | None = None) -> ColourModels:
        """The profile's colour models as this frame shows the inks of its ends `ink` (n, 3).

        Play is not the calibration photo.  Stray light (glare, a second lamp, the sensor's
        own floor) adds to ink and paper alike, so each channel of an ink's reflectance
        moves towards the paper's by its own share: under a lamp that starves one channel
        (a sodium lamp's blue) that channel's share is large, and every ink turns bluer,
        an orange as red as the photo's red.  Under such a lamp (`strong_cast`) the three
        shares are the frame's: the ones under which the frame's ends are likeliest (each
        end any colour, with `prior`, (n, colours) log-probabilities from elsewhere),
        searched on a grid and refined; then the ends' spread about the moved models: how
        sure a naming in this frame can be.  Under a light the models were trained under,
        the inks wash out alike (`_washed_out`): on development games there, the three
        shares cost moves.
        """
        if not (self.reflectance and self.strong_cast):
            return self._washed_out(ink, prior)
        if len(ink) < VEIL_ENDS:
            return self.models
        prior = 0.0 if prior is None else prior
        covs = self.covs + np.eye(3)[None] * SCENE_VARIANCE
        veil = self._likeliest_veil(ink, prior, covs)
        seen, base = lab_to_bgr(ink), lab_to_bgr(self.means)
        room = REFLECTANCE_PAPER_BGR - base
        for _ in range(FIT_ROUNDS):
            # each channel's share, by least squares over the ends as each is likely each colour
            post = _posterior(ColourModels(self.colours, self._veiled(veil), covs), ink, prior)
            num = np.einsum("nk,nkc->c", post, (seen[:, None, :] - base[None]) * room[None])
            den = np.einsum("nk,kc->c", post, room ** 2)
            veil = np.clip(num / np.maximum(den, 1e-9), VEIL_GRID[0][0], VEIL_GRID[0][-1])
        means = self._veiled(veil)
        post = _posterior(ColourModels(self.colours, means, covs), ink, prior)
        spread = float((post * ((ink[:, None] - means[None]) ** 2).sum(axis=2)).sum() / (3 * post.sum()))
        return ColourModels(self.colours, means, self.covs + np.eye(3)[None] * max(SCENE_VARIANCE, spread))

    def _veiled(self, veil: np.ndarray) -> np.ndarray:
        """The profile's ink means with each channel moved `veil` (..., 3) of its way to the paper's."""
        base = lab_to_bgr(self.means)
        return bgr_to_lab(base + np.asarray(veil)[..., None, :] * (REFLECTANCE_PAPER_BGR - base))

    def _likeliest_veil(self, ink: np.ndarray, prior, covs: np.ndarray) -> np.ndarray:
        """The point of VEIL_GRID under which the ends `ink` are likeliest, each any colour."""
        grid = np.stack(np.meshgrid(*VEIL_GRID, indexing="ij"), axis=-1).reshape(-1, 3)
        means = self._veiled(grid)                                       # (grid, colours, 3)
        inv, logdet = np.linalg.inv(covs), np.linalg.slogdet(covs)[1]
        # (x - m)' A (x - m) expanded, so that the grid costs one product of ends by means
        aim = np.einsum("kij,gkj->gki", inv, means)
        cross = (ink @ aim.reshape(-1, 3).T).reshape(len(ink), *aim.shape[:2]).transpose(1, 0, 2)
        z = -0.5 * (np.einsum("ni,kij,nj->nk", ink, inv, ink)[None] - 2 * cross
                    + np.einsum("gki,gki->gk", means, aim)[:, None] + logdet) + prior
        top = z.max(axis=2)
        fit = (top + np.log(np.exp(z - top[..., None]).sum(axis=2))).sum(axis=1)
        return grid[int(np.argmax(fit - 0.5 * ((grid / VEIL_SD) ** 2).sum(axis=1)))]

    def _washed_out(self, ink: np.ndarray, prior: np.ndarray | None) -> ColourModels:
        """`in_this_frame` under a light the models were trained under (or for a profile measured
        before reflectance, in balanced Lab): one chroma scale and one lightness shift for the
        whole deck."""
        if len(ink) < FIT_ENDS:
            return self.models
        base, models = self.means, self.models
        for _ in range(FIT_ROUNDS):
            post = _posterior(models, ink, 0.0 if prior is None else prior)
            shift = float((post * (ink[:, None, 0] - base[None, :, 0])).sum() / post.sum())
            chroma = float((post * (base[:, 1:] ** 2).sum(axis=1)[None]).sum())
            scale = float((post * (ink[:, 1:] @ base[:, 1:].T)).sum()) / max(chroma, 1e-9)
            means = np.column_stack([base[:, 0] + shift, np.clip(scale, *CHROMA_SCALE) * base[:, 1:]])
            spread = float((post * ((ink[:, None] - means[None]) ** 2).sum(axis=2)).sum() / (3 * post.sum()))
            models = ColourModels(self.colours, means,
                                  self.covs + np.eye(3)[None] * max(SCENE_VARIANCE, spread))
        return models

    def adapt(self, image: np.ndarray, readings: list, recogniser=None, biased: bool = False,
              fitted: list | None = None) -> list:
        """Re-decide kinds and colours in place; with the `recogniser`, its colour beliefs are
        combined with the profile's (each end: log p_profile + MODEL_WEIGHT log p_model).
        `biased`: the readings' kind probabilities already carry this deck's kind offsets.
        `fitted`: empty, the colour models fitted to this read's ends are put in it; else its
        models are this frame's."""
        faces = [r for r in readings if r.kind in ONE_END or r.kind == "middle"]
        if not faces:
            return readings
        looks = measure_cards(image, [r.outline for r in faces])
        inks = [(lk.refl_lab if self.reflectance else lk.ink_lab)[list(r.edge_order)] for r, lk in zip(faces, looks)]
        priors = [np.zeros((len(r.edge_order), len(self.colours))) for r in faces]
        if recogniser is not None:
            model = self._model_colours(recogniser, image, faces)
            weight = MODEL_WEIGHT if self.strong_cast else 1.0
            priors = [weight * np.log(np.maximum(m[list(r.edge_order)], 1e-4)) for r, m in zip(faces, model)]
        coloured = [n for n, r in enumerate(faces) if r.kind in ("head", "tail", "middle")]
        if fitted:
            frame = fitted[0]
        else:
            frame = self.in_this_frame(np.concatenate([inks[n] for n in coloured] + [np.zeros((0, 3))]),
                                       np.concatenate([priors[n] for n in coloured] + [np.zeros((0, len(self.colours)))]))
            if fitted is not None:
                fitted.append(frame)
        # each end's posterior is handed on over the recogniser's colours (a colour the profile
        # has no model of: never), which the analyser's `within_the_deck` reads
        names = [str(c) for c in recogniser.colours] if recogniser is not None else list(self.colours)
        order = np.array([self.colours.index(c) if c in self.colours else 0 for c in names])
        known = np.array([c in self.colours for c in names], float)
        for n, (r, lk) in enumerate(zip(faces, looks)):
            kind_p = self._kind(r, lk, biased)
            edges = list(r.edge_order)
            if r.kind in ("head", "tail", "middle") and edges:
                ll = frame.log_likelihood(inks[n]) + priors[n]
                post = _softmax(ll)
                r.colour_probs = tuple(p[order] * known for p in post)
            if r.kind == "middle" and len(edges) == 2:
                odds = self._pair_odds(ll)
                best = max(odds, key=odds.get, default=(int(ll[0].argmax()), int(ll[1].argmax())))
                r.colours = [self.colours[k] for k in best]
                sure = float(kind_p * odds.get(best, 0.0))
                r.confidence = round(sure, 4)
                r.alternatives = alternatives(
                    r.colours, {(self.colours[a], self.colours[b]): p for (a, b), p in odds.items()}, sure)
            elif r.kind in ("head", "tail") and len(edges) == 1:
                sure = float(kind_p * post[0].max())
                r.colours = [self.colours[int(post[0].argmax())]]
                r.confidence = round(sure, 4)
                r.alternatives = alternatives(r.colours, {(c,): float(p) for c, p in zip(self.colours, post[0])}, sure)
            else:
                r.colours = []
                r.confidence = round(float(kind_p), 4)
                r.alternatives = ()
        return readings

    def _model_colours(self, recogniser, image, faces) -> list[np.ndarray]:
        """The trained colour model's probabilities, (4, colours) per card, in the profile's colour order."""
        from companion.vision.recognise import edge_matrix, measure_all

        rows = edge_matrix(measure_all(image, [r.outline for r in faces]), [r.outline.edge_lengths for r in faces])
        p = recogniser.colour.predict_proba(rows.reshape(-1, rows.shape[2])).reshape(len(faces), 4, -1)
        classes = [str(c) for c in recogniser.colours]
        cols = [classes.index(c) if c in classes else None for c in self.colours]
        out = np.full((len(faces), 4, len(self.colours)), 1e-4)
        for j, c in enumerate(cols):
            if c is not None:
                out[:, :, j] = p[:, :, c]
        return list(out)

    def _pair_odds(self, ll: np.ndarray) -> dict[tuple[int, int], float]:
        """The probability of each pair of colours a middle's two ends can show (the
        profile's pairs, when it learned them), among every pair two ends could look like:
        ends that look alike, or like a pair this deck has no middle of, leave each of the
        deck's pairs unlikely -- that is no middle of this deck (a body guessed between two
        snakes), and its reading must not be sure."""
        n = len(self.colours)
        joint = ll[0][:, None] + ll[1][None, :]
        p = np.exp(joint - joint.max())
        p /= p.sum()
        return {(a, b): float(p[a, b]) for a, b in permutations(range(n), 2)
                if self.pairs is None or frozenset((self.colours[a], self.colours[b])) in self.pairs}

    # -- kinds
    def _kind(self, r, look, biased: bool = False) -> float:
        """Re-decide a one-ended card's kind (among one-ended kinds); the kind's probability."""
        probs = dict(r.kind_probs or {})
        if not probs:
            return 1.0
        group = ONE_END if r.kind in ONE_END else ("middle",)
        z = {k: np.log(max(probs.get(k, 0.0), 1e-6)) + (0.0 if biased else self.kind_bias.get(k, 0.0))
             for k in probs}
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


def paper_gains(image: np.ndarray, outlines: list, fallback: np.ndarray | None = None) -> np.ndarray | None:
    """Per-channel gains that make the cards' paper grey in this frame.

    The trained models never saw a lamp as orange as a candle with the camera's
    white balance off; dividing the cast out brings such a frame back among
    what they know.  The cast is read off the paper of this frame's own cards
    (so a lamp changed since calibration is followed), or taken from the
    calibration photo's paper (`fallback`) when too few cards are in view.
    """
    if len(outlines) >= MIN_PAPERS:
        papers = np.array([paper_colour(warp_card(image, o.corners)) for o in outlines], np.float64)
        paper = np.median(papers, axis=0)
        return (float(np.mean(paper)) / np.maximum(paper, 1.0)).astype(np.float32)
    return fallback


def strong_cast(gains: np.ndarray) -> bool:
    """Whether paper gains undo a cast beyond every light the models were trained under (the
    warmest: 2700 K with a fifth of it corrected, red 2.4 times blue)."""
    return float(np.max(gains) / np.min(gains)) > STRONG_CAST


def white_balanced(image: np.ndarray, outlines: list, fallback: np.ndarray | None = None) -> np.ndarray:
    """The frame with `paper_gains` applied (itself when there is nothing to go by).  Under a
    strong cast, after a light blur: the channel such a lamp starves is multiplied, and its
    noise with it, which the finder's maps and the recogniser's edges read as texture."""
    g = paper_gains(image, outlines, fallback)
    if g is None:
        return image
    if strong_cast(g):
        image = cv2.GaussianBlur(image, (3, 3), 0)
    lut = np.clip(np.arange(256, dtype=np.float32)[:, None] * g[None, :], 0, 255).round().astype(np.uint8)
    return cv2.LUT(image, lut.reshape(256, 1, 3))


class BiasedKinds:
    """The trained kind model with this deck's per-kind log-prior offsets (fitted at calibration)."""

    def __init__(self, model, bias: dict[str, float]):
        self.model = model
        self.classes_ = model.classes_
        self._b = np.array([float(bias.get(str(k), 0.0)) for k in model.classes_])

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = np.log(np.maximum(self.model.predict_proba(x), 1e-9)) + self._b[None]
        p = np.exp(z - z.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)


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


def _posterior(models: ColourModels, ink: np.ndarray, prior) -> np.ndarray:
    return _softmax(models.log_likelihood(ink) + prior)


def _softmax(z: np.ndarray) -> np.ndarray:
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def lab_to_bgr(lab: np.ndarray) -> np.ndarray:
    """(..., 3) Lab (OpenCV's float scale) to BGR on the scale of 0 to 1."""
    lab = np.asarray(lab, np.float32)
    return cv2.cvtColor(lab.reshape(-1, 1, 3), cv2.COLOR_Lab2BGR).reshape(lab.shape).astype(np.float64)


def bgr_to_lab(bgr: np.ndarray) -> np.ndarray:
    bgr = np.asarray(bgr, np.float32)
    return cv2.cvtColor(bgr.reshape(-1, 1, 3), cv2.COLOR_BGR2Lab).reshape(bgr.shape).astype(np.float64)


REFLECTANCE_PAPER_BGR = lab_to_bgr(REFLECTANCE_PAPER)
