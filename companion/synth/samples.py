"""The committed sample_images/: a few stills of each tier and one short filmed game.

Regenerate with `companion synth samples --out sample_images`.  Everything here
is rendered (no real photos), small (JPEG, 960x540 stills, a 640x360 game of
the first few turns) and well under 10 MB together.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .game import render_game
from .scene import render_scene

STILLS = {"easy": (101, 102, 103), "medium": (201, 202, 203), "hard": (301, 302, 309)}   # 302 and 309: a hand over the cards
STILL_SIZE = (960, 540)
GAME = {"players": ["Ann", "Ben", "Cy"], "seed": 7, "tier": "medium", "fps": 5, "size": (640, 360),
        "max_frames": 10}


def write_samples(out: Path) -> list[str]:
    """Write stills/ and game/ under `out` (replacing only those two folders)."""
    out = Path(out)
    lines = []
    stills = out / "stills"
    if stills.exists():
        shutil.rmtree(stills)
    for tier, seeds in STILLS.items():
        for seed in seeds:
            scene = render_scene(seed, tier, size=STILL_SIZE)
            path = scene.save(stills, f"{tier}_{seed:08d}")
            # the truth names the picture relative to the repository folder it lives in
            lines.append(f"{path}  {len(scene.truth['cards'])} cards, {scene.meta['style']} on {scene.meta['surface']}")
    game = out / "game"
    if game.exists():
        shutil.rmtree(game)
    truth = render_game(game, GAME["players"], GAME["seed"], tier=GAME["tier"], fps=GAME["fps"],
                        size=GAME["size"], max_frames=GAME["max_frames"])
    lines.append(f"{truth}  first {GAME['max_frames']} table states of game seed {GAME['seed']}")
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    lines.append(f"{out}: {total / 1e6:.1f} MB in all")
    return lines
