"""`companion synth ...`: write rendered scenes, games and the bundled samples to disk."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from companion.cli import whole
from companion.game.record import PLAYER_COUNTS, parse_players


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The `synth` sub-commands (called from companion/cli.py)."""
    sub = p.add_subparsers(dest="synth_command", metavar="WHAT", parser_class=type(p))
    sc = sub.add_parser("scenes", help="still photographs of tables with their analyze-format truth")
    sc.add_argument("--out", required=True, metavar="DIR")
    sc.add_argument("--count", type=int, default=10)
    sc.add_argument("--seed", type=whole(0), default=0, help="first seed; scene k uses seed + k")
    sc.add_argument("--tier", default="easy", help="easy | medium | hard")
    sc.add_argument("--style", action="append", metavar="STYLE",
                    help="art style (repeat to choose among several; default: the training styles)")
    sc.add_argument("--size", metavar="WxH", help="picture size, e.g. 1280x720 (default: the tier's)")
    sc.add_argument("--textures", metavar="DIR", help="folder of table photos to use as surfaces too")
    sc.add_argument("--labels", action="store_true",
                    help="also write NAME.label.png (16-bit: truth card id + 1 where the card is seen)")
    gm = sub.add_parser("game", help="a whole simulated game as frames, a video and its truth")
    gm.add_argument("--out", required=True, metavar="DIR")
    gm.add_argument("--players", default="3", help="a number (2-5) or names separated by commas")
    gm.add_argument("--seed", type=whole(0), default=0)
    gm.add_argument("--tier", default="medium")
    gm.add_argument("--style", help="art style (default: drawn from the training styles)")
    gm.add_argument("--size", metavar="WxH", default="1280x720")
    gm.add_argument("--fps", type=int, default=10)
    gm.add_argument("--illegal-rate", type=float, default=0.0, help="share of turns that break a rule")
    gm.add_argument("--draw-pile", action="store_true", help="show the face-down draw pile as a fan")
    sm = sub.add_parser("samples", help="regenerate the committed sample_images/ folder")
    sm.add_argument("--out", default="sample_images", metavar="DIR")
    sp = sub.add_parser("speed", help="CPU ms per rendered scene on one thread, per tier")
    sp.add_argument("--tiers", default="easy,medium,hard", help="comma-separated tiers")
    sp.add_argument("--count", type=int, default=16, help="scenes per tier")
    sp.add_argument("--seed", type=whole(0), default=5000, help="first seed; scene k uses seed + k")
    sp.add_argument("--size", metavar="WxH", default="1280x720")


MOST_ILLEGAL = 0.5   # a game in which most turns break a rule leaves no snake to film


def _size(text: str | None):
    if text is None:
        return None
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"size must look like 1280x720, got {text!r}") from None
    if not (64 <= w <= 8192 and 64 <= h <= 8192):
        raise ValueError(f"size {text} out of range (64-8192 pixels a side)")
    return (w, h)


def _players(text: str):
    if text.isdigit():
        n = int(text)
        if n not in PLAYER_COUNTS:
            raise ValueError(f"players must be 2-5, got {n}")
        return n
    return list(parse_players(text))   # (two to five names, checked there)


def main(args: argparse.Namespace) -> int:
    what = getattr(args, "synth_command", None)
    if what == "scenes":
        return write_scenes(Path(args.out), args.count, args.seed, args.tier, args.style,
                            _size(args.size), args.textures, args.labels)
    if what == "game":
        from .game import render_game
        if not 0.0 <= args.illegal_rate <= MOST_ILLEGAL:
            raise ValueError(f"--illegal-rate is a share of turns from 0 to {MOST_ILLEGAL}, not {args.illegal_rate}")
        path = render_game(args.out, _players(args.players), args.seed, tier=args.tier, style=args.style,
                           fps=args.fps, size=_size(args.size), illegal_rate=args.illegal_rate,
                           draw_pile=args.draw_pile)
        print(f"wrote {path}")
        return 0
    if what == "samples":
        from .samples import write_samples
        for line in write_samples(Path(args.out)):
            print(line)
        return 0
    if what == "speed":
        import sys

        from .speed import measure_render_speed
        tiers = tuple(t.strip() for t in args.tiers.split(",") if t.strip())
        if not tiers:
            raise ValueError("--tiers names no tier (easy, medium, hard)")
        report = measure_render_speed(tiers, args.count, args.seed, _size(args.size),
                                      log=lambda line: print(line, file=sys.stderr))
        print(json.dumps(report))
        return 0
    raise ValueError("say what to render: companion synth scenes|game|samples|speed --help")


def write_scenes(out: Path, count: int, seed: int, tier: str, styles, size, textures, labels: bool = False) -> int:
    from .scene import render_scene
    from .styles import check_style
    from .tiers import get_tier
    get_tier(tier)
    for s in styles or []:
        check_style(s)
    if count < 1:
        raise ValueError("--count must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    times = []
    for k in range(count):
        t0 = time.perf_counter()
        scene = render_scene(seed + k, tier, size=size, textures_dir=textures,
                             style=styles[0] if styles and len(styles) == 1 else None,
                             styles=styles if styles and len(styles) > 1 else None)
        times.append(time.perf_counter() - t0)
        scene.save(out, f"{tier}_{seed + k:08d}", label=labels)
    times.sort()
    print(json.dumps({"scenes": count, "out": str(out), "median_ms": round(1000 * times[len(times) // 2], 1)}))
    return 0
