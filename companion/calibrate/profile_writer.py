"""What a calibration learned, as the profile JSON that `--profile` reads, and as a summary for people.

The keys `colours`, `card_aspect` and `colour_lab` are the ones
`companion.vision.profile.load_profile` reads; everything else is kept in
`Profile.raw` for the parts that use it (`colour_models` and `kind_adaptation`
by `companion.calibrate.adapt`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from companion.game.deck import PROFILE_FORMAT, Deck


def profile_dict(*, colour_models: dict, reflectance_models: dict, colour_lab: dict, card_aspect: float,
                 card_size: dict, white_balance: dict, kind_adaptation: dict, seen: Deck, default: Deck,
                 warnings: list[str], least_sure: list[dict], confidence: float, photos: list[dict],
                 thresholds: dict) -> dict:
    return {
        "format": PROFILE_FORMAT,
        "created_by": "companion calibrate",
        "colours": list(seen.colours),
        "card_aspect": round(float(card_aspect), 4),
        "colour_lab": {k: [round(float(v), 2) for v in lab] for k, lab in colour_lab.items()},
        "colour_models": colour_models,
        "colour_models_measure": "median balanced Lab (paper made grey) of the coloured ink within 3-18% of "
                                 "a connecting edge, middle 60% of it (companion.calibrate.measure)",
        "colour_models_reflectance": reflectance_models,
        "colour_models_reflectance_measure": "median Lab of the same ink after dividing each pixel by the card's "
                                             "paper, channel by channel (paper = 0.9 grey): light and shading "
                                             "cancel (companion.calibrate.measure.reflectance_lab)",
        "card_size": card_size,
        "white_balance": white_balance,
        "kind_adaptation": kind_adaptation,
        "thresholds": {k: round(float(v), 4) for k, v in thresholds.items()},
        "deck": seen.to_dict(),
        "deck_differs_from_default": seen.to_dict()["cards"] != default.to_dict()["cards"],
        "warnings": warnings,
        "confidence": {"overall": round(float(confidence), 4), "least_sure": least_sure},
        "photos": photos,
    }


def write_profile(profile: dict, path: str | Path) -> Path:
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise ValueError(f"{path}: folder {path.parent} does not exist")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(profile, indent=1, default=_plain) + "\n", encoding="utf-8")
    tmp.replace(path)            # a half-written profile never replaces a good one
    return path


def _plain(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON: {type(o).__name__}")


def summary(profile: dict, seconds: float) -> str:
    """What was learned and how sure, in a few lines."""
    size = profile["card_size"]
    mm = f", {size['short_mm']:.0f} x {size['long_mm']:.0f} mm" if size.get("short_mm") else ""
    lines = [f"calibrated on {len(profile['photos'])} photo(s) in {seconds:.1f} s: "
             f"{sum(profile['deck']['cards'].values())} cards, every one named",
             f"card aspect {profile['card_aspect']:.3f} (long/short){mm}",
             "colours (balanced Lab of the card ends, and how many ends):"]
    for name in profile["colours"]:
        m = profile["colour_models"][name]
        L, a, b = m["mean"]
        spread = float(np.sqrt(np.trace(np.array(m["cov"])) / 3))
        lines.append(f"  {name:<7} L {L:5.1f}  a {a:6.1f}  b {b:6.1f}   spread {spread:4.1f}   {m['ends']} ends")
    wb = profile["white_balance"]
    lines.append(f"paper as photographed (BGR) {[round(v) for v in wb['paper_bgr']]}; "
                 f"white-balance gains {[round(v, 2) for v in wb['gains_bgr']]}")
    ka = profile["kind_adaptation"]
    if ka.get("kind_bias"):
        lines.append(f"kind recogniser adapted: it read {ka['model_agreement']:.0%} of this deck's kinds right "
                     "before adaptation")
    conf = profile["confidence"]
    lines.append(f"overall certainty {conf['overall']:.3f}; least sure:")
    for c in conf["least_sure"]:
        lines.append(f"  {c['card']:<14} at ({c['at'][0]:.0f}, {c['at'][1]:.0f})  certainty {c['confidence']:.2f}"
                     + (f"  ({c['doubt']})" if c.get("doubt") else ""))
    for w in profile["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
