"""`companion synth speed`: how long one picture takes to render, on one core.

The state pool (`states.pooled_game`) is filled first, as in any long run of
renders; then each scene's process CPU time is taken with OpenCV and BLAS held
to one thread.  CPU time rather than wall time: on a shared machine wall time
mostly measures the neighbours (the load average is reported with it).
"""
from __future__ import annotations

import os
import statistics
import time

TIERS = ("easy", "medium", "hard")


def measure_render_speed(tiers=TIERS, count: int = 16, seed: int = 5000, size: tuple[int, int] = (1280, 720),
                         log=None) -> dict:
    """Per tier: median and 90th percentile CPU ms per scene (and median wall ms) over `count` seeds."""
    import cv2
    from threadpoolctl import threadpool_limits     # scikit-learn brings it

    from .tiers import get_tier
    for tier in tiers:
        get_tier(tier)
    if count < 1:
        raise ValueError("--count must be at least 1")
    cv2.setNumThreads(1)
    with threadpool_limits(1):
        return _measure(tuple(tiers), count, seed, size, log or (lambda line: None))


def _measure(tiers, count, seed, size, log) -> dict:
    from .scene import render_scene
    from .states import POOL_SIZE, pooled_game
    t0 = time.process_time()
    for players in range(2, 6):
        for k in range(POOL_SIZE):
            pooled_game(players, k)
    log(f"state pool ready in {time.process_time() - t0:.1f} s CPU")
    render_scene(seed - 1, tiers[0], size=size)          # first-call costs out of the way
    out = {}
    for tier in tiers:
        cpu, wall = [], []
        for s in range(seed, seed + count):
            w0, c0 = time.perf_counter(), time.process_time()
            render_scene(s, tier, size=size)
            cpu.append(1000 * (time.process_time() - c0))
            wall.append(1000 * (time.perf_counter() - w0))
        cpu.sort()
        out[tier] = {"scenes": count, "cpu_median_ms": round(statistics.median(cpu), 1),
                     "cpu_p90_ms": round(cpu[min(count - 1, int(0.9 * count))], 1),
                     "wall_median_ms": round(statistics.median(wall), 1),
                     "load_average": round(os.getloadavg()[0], 1)}
        log(f"{tier}: {out[tier]}")
    return {"size": list(size), "seeds": [seed, seed + count - 1], "tiers": out}
