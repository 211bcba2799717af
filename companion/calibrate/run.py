"""`companion calibrate IMAGE... --out FILE` and `companion mat --out FILE`.

One photo (or several) of the whole deck laid out face-up becomes a profile:
find the cards (`find_laid`), measure them (`measure`), name them from what the
deck must contain (`label`), pool what the photos taught (colour models, card
shape, paper, the kind recogniser's adaptation) and write it (`profile_writer`).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.game.cards import Kind
from companion.game.deck import Deck, load_deck

from .find_laid import find_deck_cards
from .label import CalibrationRefused, DeckReading, label_deck
from .markers import TablePlane, find_plane
from .measure import CardLook, measure_cards
from .profile_writer import profile_dict, summary, write_profile

FACE_KINDS = ("head", "tail", "middle", "rainbow_head", "rainbow_tail")
BIAS_L2 = 0.5          # keeps the kind adaptation near the trained model when the photo says little


@dataclass
class PhotoResult:
    name: str
    looks: list[CardLook]
    reading: DeckReading
    plane: TablePlane | None


@dataclass
class Calibration:
    profile: dict
    photos: list[PhotoResult]
    seconds: float

    def summary(self) -> str:
        return summary(self.profile, self.seconds)


def read_photo(image: np.ndarray, name: str, deck: Deck) -> PhotoResult:
    plane = find_plane(image)
    exclude = None
    if plane is not None:
        centre = plane.mat_outline.mean(axis=0)
        exclude = centre + (plane.mat_outline - centre) * 1.04
    outlines = find_deck_cards(image, deck.size, exclude)
    looks = measure_cards(image, outlines)
    return PhotoResult(name, looks, label_deck(looks, deck), plane)


def calibrate_images(images: list[np.ndarray], names: list[str] | None = None, deck: Deck | None = None,
                     models_dir: str | Path | None = None, adapt_kinds: bool = True) -> Calibration:
    """Learn one deck under one light from photos that each show the whole deck."""
    t0 = time.perf_counter()
    deck = deck or load_deck()
    names = names or [f"photo {i + 1}" for i in range(len(images))]
    if not images:
        raise CalibrationRefused("no photo given")
    photos = []
    for image, name in zip(images, names):
        try:
            photos.append(read_photo(image, name, deck))
        except CalibrationRefused as exc:
            raise CalibrationRefused(f"{name}: {exc}" if len(images) > 1 else str(exc)) from None
    # every photo shows the same deck: where their readings differ, the surest photo's reading stands
    surest = max(photos, key=lambda p: min(c.confidence for c in p.reading.cards))
    first = surest.reading.seen
    disagree = [p.name for p in photos if p.reading.seen.to_dict() != first.to_dict()]
    extra_warnings = [f"{', '.join(disagree)} read the deck differently from {surest.name}; "
                      f"kept the reading of {surest.name} (the surest)"] if disagree else []
    colours = tuple(first.colours)
    lab = np.concatenate([p.reading.end_lab for p in photos])
    vision_lab = np.concatenate([p.reading.vision_lab for p in photos])
    named = np.array(sum((p.reading.end_colour for p in photos), []))
    models, colour_lab = {}, {}
    for c in colours:
        models[c] = _gaussian(lab[named == c])
        # colour_lab is in the vision's own end-colour space, for its recogniser
        colour_lab[c] = vision_lab[named == c].mean(axis=0)
    reflectance_models = _reflectance_models(photos, colours)
    kind_adaptation = _thresholds(photos)
    if adapt_kinds:
        kind_adaptation.update(adapt_kind_model(images, photos, models_dir))
    least = sorted(((c, p) for p in photos for c in p.reading.cards), key=lambda t: t[0].confidence)
    least_sure = [{"card": c.card.code, "photo": p.name,
                   "at": [round(float(v), 1) for v in p.looks[c.look].outline.centre],
                   "confidence": round(c.confidence, 3), "doubt": c.doubt} for c, p in least[:5]]
    warnings = sorted({w for w in surest.reading.warnings}) + extra_warnings
    profile = profile_dict(
        colour_models=models, reflectance_models=reflectance_models, colour_lab=colour_lab,
        card_aspect=_aspect(photos), card_size=_size(photos),
        white_balance=_white_balance(photos), kind_adaptation=kind_adaptation, seen=first, default=deck,
        warnings=warnings, least_sure=least_sure, confidence=least[0][0].confidence,
        photos=[{"name": p.name, "cards": len(p.looks), "markers": p.plane.markers if p.plane else 0}
                for p in photos],
        thresholds={k: float(np.mean([p.reading.thresholds[k] for p in photos])) for k in photos[0].reading.thresholds})
    return Calibration(profile, photos, time.perf_counter() - t0)


def _reflectance_models(photos: list[PhotoResult], colours: tuple[str, ...]) -> dict:
    """Per colour, a Gaussian of its ends' ink as reflectance against the card's own paper
    (`measure.reflectance_lab`): the space the adapter compares play frames in."""
    points: dict[str, list] = {c: [] for c in colours}
    for p in photos:
        for c in p.reading.cards:
            for colour, e in zip(c.card.colours, c.ends):
                points[colour].append(p.looks[c.look].refl_lab[e])
    return {c: _gaussian(np.array(pts, float).reshape(-1, 3)) for c, pts in points.items()}


def _gaussian(pts: np.ndarray) -> dict:
    """A colour model as the profile stores it: mean and covariance of (n, 3) Lab points
    (a broad round one when there are too few to estimate a covariance)."""
    mean = pts.mean(axis=0) if len(pts) else np.zeros(3)
    cov = np.cov(pts.T) if len(pts) > 3 else np.eye(3) * 25.0
    return {"mean": [round(float(v), 3) for v in mean],
            "cov": [[round(float(v), 3) for v in row] for row in cov], "ends": int(len(pts))}


def _aspect(photos: list[PhotoResult]) -> float:
    values = []
    for p in photos:
        for lk in p.looks:
            corners = p.plane.mm(lk.outline.corners) if p.plane else lk.outline.corners
            e = np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)
            a, b = (e[0] + e[2]) / 2, (e[1] + e[3]) / 2
            values.append(max(a, b) / max(1e-6, min(a, b)))
    return float(np.clip(np.median(values), 1.0, 2.5))


def _size(photos: list[PhotoResult]) -> dict:
    short_px = [lk.outline.short_side for p in photos for lk in p.looks]
    long_px = [lk.outline.long_side for p in photos for lk in p.looks]
    out = {"short_px": round(float(np.median(short_px)), 1), "long_px": round(float(np.median(long_px)), 1)}
    mm = [p for p in photos if p.plane is not None]
    if mm:
        sides = []
        for p in mm:
            for lk in p.looks:
                c = p.plane.mm(lk.outline.corners)
                e = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
                sides.append(sorted(((e[0] + e[2]) / 2, (e[1] + e[3]) / 2)))
        s = np.median(np.array(sides), axis=0)
        out.update(short_mm=round(float(s[0]), 1), long_mm=round(float(s[1]), 1), from_markers=True)
    return out


def _white_balance(photos: list[PhotoResult]) -> dict:
    paper_bgr = np.median([lk.paper_bgr for p in photos for lk in p.looks], axis=0)
    paper_lab = np.median([lk.paper_lab for p in photos for lk in p.looks], axis=0)
    gains = float(np.mean(paper_bgr)) / np.maximum(paper_bgr, 1.0)
    return {"paper_bgr": [round(float(v), 1) for v in paper_bgr], "gains_bgr": [round(float(v), 4) for v in gains],
            "paper_lab_balanced": [round(float(v), 2) for v in paper_lab]}


def _thresholds(photos: list[PhotoResult]) -> dict:
    """Shape evidence for kinds measured on this deck: head vs tail, rainbow vs plain."""
    heads, tails, plain, rainbow = [], [], [], []
    for p in photos:
        for c in p.reading.cards:
            lk = p.looks[c.look]
            if c.card.kind is Kind.MIDDLE:
                continue
            e = c.ends[0]
            (heads if c.card.kind.is_head else tails).append(float(lk.far_shape[e]))
            (rainbow if c.card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL) else plain).append(float(lk.stripes[e]))
    return {"head_shape": {"head_mean": float(np.mean(heads)), "tail_mean": float(np.mean(tails)),
                           "sd": float(np.std(heads + tails) / 2 + 0.02)},
            "stripes": {"rainbow_mean": float(np.mean(rainbow)), "plain_mean": float(np.mean(plain))}}


def adapt_kind_model(images, photos: list[PhotoResult], models_dir=None) -> dict:
    """Per-kind log-prior offsets that make the trained kind model agree with this deck.

    The deck's labels are known now, so the model's kind probabilities on the
    photo can be re-weighted (a prior shift, fitted by maximum likelihood with
    a little shrinkage towards no change).  Only face kinds move: backs and
    foreign cards are not in a calibration photo and keep the model's view.
    """
    try:
        from companion.vision.recognise import Recogniser
        rec = Recogniser.load(models_dir)
    except Exception as exc:   # no models yet: calibration still names the deck
        return {"kind_bias": {}, "note": f"kind model not adapted ({' '.join(str(exc).split())})"}
    kinds = list(rec.kinds)
    logp, truth = [], []
    face_feats, face_kinds = [], []
    from .adapt import white_balanced
    for image, p in zip(images, photos):
        outlines = [lk.outline for lk in p.looks]
        # the models see play frames white-balanced (`ProfileAdapter.recognise`): so this one too
        balanced = white_balanced(image, outlines)
        evidence = rec.evidence(balanced, outlines)
        readings = rec.recognise(balanced, outlines, evidence)
        by_outline = {id(r.outline): r for r in readings}
        feats = evidence[3]
        for c in p.reading.cards:
            face_feats.append(feats[c.look])
            face_kinds.append(c.card.kind.value)
            r = by_outline.get(id(outlines[c.look]))
            probs = np.array([max(1e-4, (r.kind_probs.get(k, 0.0) if r else 0.0)) for k in kinds])
            if r is None:
                probs[kinds.index("none")] = 1.0 if "none" in kinds else probs.max()
            logp.append(np.log(probs / probs.sum()))
            truth.append(kinds.index(c.card.kind.value))
    logp, truth = np.array(logp), np.array(truth)
    movable = np.array([k in FACE_KINDS for k in kinds])
    agreement = float(np.mean(logp.argmax(axis=1) == truth))
    b = np.zeros(len(kinds))
    onehot = np.eye(len(kinds))[truth]
    for _ in range(300):
        z = logp + b
        q = np.exp(z - z.max(axis=1, keepdims=True))
        q /= q.sum(axis=1, keepdims=True)
        grad = (onehot - q).mean(axis=0) - 2 * BIAS_L2 * b / len(truth)
        b += 2.0 * grad * movable
    z = logp + b
    after = float(np.mean(z.argmax(axis=1) == truth))
    out = {"kind_bias": {k: round(float(v), 4) for k, v, m in zip(kinds, b, movable) if m},
           "model_agreement": round(agreement, 4), "model_agreement_adapted": round(after, 4)}
    if rec.typical is not None:
        from companion.vision.recognise import typicality_shift
        shift = typicality_shift(np.array(face_feats), face_kinds, rec.typical)
        if shift is not None:
            out["typicality_shift"] = [round(float(v), 4) for v in shift]
    return out


# --------------------------------------------------------------------------- commands

def calibrate_files(paths: list[str], out: str | Path, deck_path: str | None = None) -> Calibration:
    from companion.vision.imageio import image_paths, load_image

    folder = Path(out).parent
    if Path(out).is_dir():
        raise ValueError(f"{out}: a folder; --out names the profile's file")
    if not folder.is_dir():   # before the work, not after it
        raise ValueError(f"{out}: folder {folder} does not exist")
    photos = image_paths(paths)
    if Path(out).resolve() in {Path(p).resolve() for p in photos}:
        raise ValueError(f"{out}: that is one of the photos; write the profile to another file")
    images, names = [], []
    for path in photos:
        loaded = load_image(path)
        images.append(loaded.pixels)
        names.append(str(path))
    result = calibrate_images(images, names, load_deck(deck_path))
    write_profile(result.profile, out)
    return result


def calibrate_profile(photos: list[str], out: str) -> str:
    """For the dashboard's set-up page: calibrate, write `out`, return the summary."""
    return calibrate_files(photos, out).summary()


def main(args) -> int:
    result = calibrate_files(args.images, args.out, getattr(args, "deck", None))
    print(result.summary())
    print(f"profile written to {args.out}; use it with --profile {args.out}")
    return 0


def mat_main(args) -> int:
    path = _write_mat(args.out)
    print(f"marker mat written to {path}: print it at 100% on A4 and lay it flat beside the cards")
    return 0


def _write_mat(out: str) -> Path:
    from .markers import write_mat
    return write_mat(out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(None))
