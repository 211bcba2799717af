"""`companion bench --calibrated`: an unseen deck under an unseen light, before and after calibration.

The proof of issue 5.  Each deck is printed in the held-out art style
(`HELD_OUT_STYLE`, never trained on) and lit by `HELD_OUT_LIGHT` (a lamp
colder-than-candle orange, camera white balance off: outside every training
tier).  For each deck: one calibration photo of it laid out
(`render_deck_photo`), `calibrate_images` on that photo alone, then hard-tier
game scenes of the same deck under the same light, analysed by the plain
`Analyzer` and by the calibrated one, scored against the truth side by side.
Seeds come from the bench's purpose (`scene_seed("bench", ...)`), which no
training run renders.
"""
from __future__ import annotations

import json
import sys
import time

DECKS = 3
RETAKES = 2      # calibration photos taken again after a refusal (a new layout, same deck and light)


def bench_calibrated(count: int, seed: int, decks: int = DECKS, tier: str = "hard", progress=None) -> dict:
    from companion.calibrate.adapt import calibrated_analyzer
    from companion.calibrate.run import calibrate_images
    from companion.synth.deck_layout import HELD_OUT_LIGHT, deck_look, render_deck_photo, render_deck_scene
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.analyze import Analyzer
    from companion.vision.imageio import decode_image
    from companion.vision.profile import profile_from_dict
    from companion.vision.seeds import scene_seed

    from .metrics import Score, covered_cards, score_table

    plain = Analyzer()
    totals = {"without": Score(), "with": Score()}
    per_deck, cal_seconds = [], []
    per = max(1, count // decks)
    covered_total = 0
    for d in range(decks):
        deck = deck_look(HELD_OUT_STYLE, scene_seed("bench", seed, 7_000_000 + d))
        cal, refusals = None, []
        for attempt in range(RETAKES + 1):   # a refused photo is taken again, as a user would
            photo = render_deck_photo(scene_seed("bench", seed, 7_100_000 + d + 1000 * attempt), deck,
                                      light=HELD_OUT_LIGHT)
            t0 = time.perf_counter()
            try:
                cal = calibrate_images([photo.image], ["calibration photo"])
            except ValueError as exc:
                refusals.append(str(exc))
                cal_seconds.append(time.perf_counter() - t0)
                continue
            cal_seconds.append(time.perf_counter() - t0)
            break
        if cal is None:
            per_deck.append({"deck": d, "refused": refusals})
            if progress:
                progress(f"deck {d}: every calibration photo refused: {refusals}")
            continue
        calibrated = calibrated_analyzer(profile_from_dict(cal.profile, f"deck {d}"))
        scores = {"without": Score(), "with": Score()}
        for i in range(per):
            scene = render_deck_scene(scene_seed("bench", seed, 7_200_000 + d * 10_000 + i), deck, tier=tier,
                                      light=HELD_OUT_LIGHT)
            loaded = decode_image(scene.jpeg, scene.truth["image"]["path"])
            size = (loaded.width, loaded.height)
            covered = covered_cards(scene.meta)
            covered_total += len(covered)
            for key, analyzer in (("without", plain), ("with", calibrated)):
                found = analyzer.analyze(loaded.pixels, loaded.path, size)
                s = score_table(scene.truth, found, covered)
                scores[key].add(s)
                totals[key].add(s)
        row = {"deck": d, "aspect": round(deck.aspect, 3), "scenes": per, "photos_refused": refusals,
               "calibration_seconds": round(cal_seconds[-1], 2),
               "calibration_certainty": cal.profile["confidence"]["overall"],
               **{k: v.rates() for k, v in scores.items()}}
        per_deck.append(row)
        if progress:
            progress(json.dumps(row))
    return {"tier": tier, "style": HELD_OUT_STYLE, "light": HELD_OUT_LIGHT.name, "decks": decks,
            "scenes": per * decks, "cards": totals["without"].truth_cards,
            "covered_cards_not_required": covered_total,
            "calibration_seconds_max": round(max(cal_seconds), 2) if cal_seconds else None,
            "without": totals["without"].rates(), "with": totals["with"].rates(), "per_deck": per_deck}


def format_report(r: dict) -> str:
    def pct(v):
        return "   n/a" if v is None else f"{100 * v:5.1f}%"
    names = [("recall", "recall"), ("precision", "precision"), ("kind_accuracy", "kind"),
             ("end_colour_accuracy", "end colour"), ("chain_accuracy", "chains"), ("table_exact", "table-exact")]
    lines = [f"unseen deck ({r['style']} art) under an unseen light ({r['light']}), {r['tier']} tier: "
             f"{r['decks']} decks, {r['scenes']} scenes, {r['cards']} cards "
             f"(and {r['covered_cards_not_required']} mostly covered, not required); "
             f"calibration at most {r['calibration_seconds_max']} s",
             f"{'':<12} {'without':>8} {'with':>8}   calibration"]
    for key, label in names:
        lines.append(f"{label:<12} {pct(r['without'][key]):>8} {pct(r['with'][key]):>8}")
    for d in r["per_deck"]:
        for reason in d.get("refused", []) + d.get("photos_refused", []):
            lines.append(f"deck {d['deck']}: a calibration photo was refused: {reason}")
    return "\n".join(lines)


def main(args) -> int:
    from .run import _single_thread

    if args.count < 1:
        raise ValueError("--count must be at least 1")
    limits = _single_thread()
    say = (lambda m: print(m, file=sys.stderr)) if args.json else None
    report = bench_calibrated(args.count, args.seed, progress=say)
    del limits
    print(json.dumps(report) if args.json else format_report(report))
    return 0
