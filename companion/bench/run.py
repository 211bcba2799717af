"""`companion bench`: accuracy, speed and memory of `analyze` on held-out renders.

Scenes are rendered in the held-out art style from bench seeds, which no
training run ever renders (`companion.vision.seeds`); each goes through the
real path (JPEG bytes decoded, analysed by one `Analyzer` with its models
loaded once) and is scored against its truth.  Speed is measured single-
threaded at 1280x720 and 1920x1080; memory as the peak RSS of a separate
`companion analyze` process reading a 4K photo.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TIERS = ("easy", "medium", "hard")
SPEED_SIZES = ((1280, 720), (1920, 1080))


def _single_thread():
    import cv2
    cv2.setNumThreads(1)
    try:
        from threadpoolctl import threadpool_limits
        return threadpool_limits(1)
    except ImportError:  # pragma: no cover - sklearn brings threadpoolctl
        return None


def bench_scene_seed(seed: int, tier: str, index: int) -> int:
    """The render seed of a tier's scene: fixed by the tier itself, not by its place among
    the tiers asked for, so `--tiers hard` measures the very scenes a full run does."""
    from companion.vision.seeds import scene_seed
    return scene_seed("bench", seed, TIERS.index(tier) * 1_000_000 + index)


def bench_tables(analyzer, count: int, seed: int, tiers=TIERS, progress=None) -> dict:
    """Per tier: the accuracy figures over `count` held-out scenes."""
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.imageio import decode_image

    from .metrics import Score, covered_cards, score_table

    out = {}
    for tier in tiers:
        total = Score()
        hidden = 0
        sizes: dict[str, int] = {}
        for i in range(count):
            scene = render_scene(bench_scene_seed(seed, tier, i), tier=tier, style=HELD_OUT_STYLE)
            loaded = decode_image(scene.jpeg, scene.truth["image"]["path"])
            found = analyzer.analyze(loaded.pixels, loaded.path, (loaded.width, loaded.height))
            covered = covered_cards(scene.meta)
            total.add(score_table(scene.truth, found, covered))
            hidden += len(covered)
            key = f"{loaded.width}x{loaded.height}"
            sizes[key] = sizes.get(key, 0) + 1
        out[tier] = {"scenes": count, "cards": total.truth_cards, "covered_cards_not_required": hidden,
                     "resolutions": sizes, **total.rates()}
        if progress:
            progress(f"{tier}: {out[tier]}")
    return out


def bench_speed(analyzer, seed: int, frames: int = 20) -> dict:
    """Milliseconds per frame (median, p95) for each size, one thread, models already loaded."""
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.seeds import scene_seed

    out = {}
    for k, (w, h) in enumerate(SPEED_SIZES):
        images = [render_scene(scene_seed("bench", seed, 9_000_000 + k * 1000 + i), tier="medium",
                               style=HELD_OUT_STYLE, size=(w, h)).image for i in range(frames)]
        analyzer.analyze(images[0])  # first call pays one-time set-up (OpenCV, sklearn)
        times, cpu = [], []
        for image in images:
            t0, c0 = time.perf_counter(), time.process_time()
            analyzer.analyze(image)
            times.append((time.perf_counter() - t0) * 1000.0)
            cpu.append((time.process_time() - c0) * 1000.0)
        # wall time is what a user waits; CPU time is what one core spends, and is
        # the figure to trust when other programs share the machine
        out[f"{w}x{h}"] = {"frames": frames, "ms_median": round(float(np.median(times)), 1),
                           "ms_p95": round(float(np.percentile(times, 95)), 1),
                           "cpu_ms_median": round(float(np.median(cpu)), 1),
                           "cpu_ms_p95": round(float(np.percentile(cpu, 95)), 1)}
    return out


_MEASURED_ANALYZE = """
import sys
from companion.cli import main
code = main(["analyze", "--json", sys.argv[1]])
# VmHWM is this process's own peak: ru_maxrss would also count the pages a fork
# borrowed from the parent before exec.
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
print("PEAK_KB", peak.split()[1], file=sys.stderr)
sys.exit(code)
"""


def bench_memory(seed: int) -> dict:
    """Peak RSS (MB) of `companion analyze` on one 4K photo, in its own process."""
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.seeds import scene_seed

    scene = render_scene(scene_seed("bench", seed, 9_500_000), tier="hard", style=HELD_OUT_STYLE, size=(3840, 2160))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table_4k.jpg"
        path.write_bytes(scene.jpeg)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _MEASURED_ANALYZE, str(path)], capture_output=True, text=True)
        seconds = time.perf_counter() - t0
    peaks = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("PEAK_KB")]
    return {"image": "3840x2160", "exit": proc.returncode,
            "peak_rss_mb": round(int(peaks[0]) / 1024.0, 1) if peaks else None,
            "seconds_with_start_up": round(seconds, 2)}


def main(args) -> int:
    from companion.vision.analyze import Analyzer

    if args.count < 1:
        raise ValueError("--count must be at least 1")
    limits = _single_thread()
    t0 = time.perf_counter()
    analyzer = Analyzer()
    load_ms = (time.perf_counter() - t0) * 1000.0
    say = (lambda m: print(m, file=sys.stderr)) if args.json else None
    tiers = tuple(t.strip() for t in getattr(args, "tiers", ",".join(TIERS)).split(",") if t.strip())
    parts = {p.strip() for p in getattr(args, "parts", "tables,speed,memory").split(",")}
    unknown = [t for t in tiers if t not in TIERS] + sorted(parts - {"tables", "speed", "memory"})
    if unknown:
        raise ValueError(f"unknown tier or part: {', '.join(unknown)}")
    report = {"seed": args.seed, "model_load_ms": round(load_ms, 1)}
    if "tables" in parts:
        report["tiers"] = bench_tables(analyzer, args.count, args.seed, tiers, progress=say)
    if "speed" in parts:
        report["speed"] = bench_speed(analyzer, args.seed)
    if "memory" in parts:
        report["memory"] = bench_memory(args.seed)
    del limits
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return 0


def format_report(report: dict) -> str:
    def pct(v):
        return "  n/a" if v is None else f"{100 * v:5.1f}%"
    lines = [f"held-out renders, seed {report['seed']}; models loaded once in {report['model_load_ms']} ms",
             "tier    scenes cards recall precision  kind  colour  chains  table-exact"]
    for tier, r in report.get("tiers", {}).items():
        lines.append(f"{tier:<7} {r['scenes']:>6} {r['cards']:>5} {pct(r['recall'])} {pct(r['precision'])}   "
                     f"{pct(r['kind_accuracy'])} {pct(r['end_colour_accuracy'])} {pct(r['chain_accuracy'])}  "
                     f"{pct(r['table_exact'])}")
    for size, s in report.get("speed", {}).items():
        lines.append(f"speed {size}: median {s['ms_median']} ms, p95 {s['ms_p95']} ms per frame (1 thread); "
                     f"CPU median {s['cpu_ms_median']} ms, p95 {s['cpu_ms_p95']} ms")
    if "memory" in report:
        m = report["memory"]
        lines.append(f"memory: peak RSS {m['peak_rss_mb']} MB analysing a {m['image']} photo (exit {m['exit']})")
    return "\n".join(lines)
