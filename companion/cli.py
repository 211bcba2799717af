"""The `companion` command line.

Each command's parser lives here; its work lives in the stage it belongs to
and is imported only when that command runs, so `companion judge` never loads
OpenCV.  Errors a user can cause are raised as `UserError` (or one of the
domain's ValueErrors) and become one `error:` line with exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from typing import Callable, Sequence


class UserError(Exception):
    """Bad usage or bad input: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse prints usage + message; keep it to one line
        raise UserError(message)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {}


def command(name: str, help: str):
    """Register a sub-command's argument set-up; the set-up must set `run`."""
    def register(setup: Callable[[argparse.ArgumentParser], None]):
        COMMANDS[name] = (help, setup)
        return setup
    return register


def seconds(most: float) -> Callable[[str], float]:
    """An argparse type: a duration above 0 and at most `most` seconds (not nan, not inf)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value <= most:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0 and at most {most:g}")
        return value
    return parse


def pin(text: str) -> str:
    """An argparse type: the referee's six-digit PIN."""
    if not (len(text) == 6 and text.isdigit() and text.isascii()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a six-digit PIN")
    return text


def whole(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `least` (a seed, a count of scenes)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least {least}")
        return value
    return parse


def port(text: str) -> int:
    """An argparse type: a TCP port number."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)")
    return int(text)


def runs(module: str, name: str = "main") -> Callable[[argparse.Namespace], int | None]:
    """A command's `run`: `module.name(args)`, imported only when that command is used
    (so `companion judge` never loads OpenCV or the models)."""
    def run(args):
        return getattr(importlib.import_module(module), name)(args)
    return run


@command("judge", "referee a symbolic game record (no camera)")
def _judge(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="game record JSON ('-' for standard input)")
    p.add_argument("--json", action="store_true", help="print the verdicts as JSON")

    p.set_defaults(run=runs("companion.game.judge_cli"))


@command("advise", "rank the placements of a card and count the cards left (move advisor)")
def _advise(p: argparse.ArgumentParser) -> None:
    from companion.game.advise_cli import add_arguments
    add_arguments(p)

    p.set_defaults(run=runs("companion.game.advise_cli"))


@command("analyze", "find, recognise and assemble every card in photos of the table")
def _analyze(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders of them")
    p.add_argument("--profile", metavar="FILE", help="calibration profile (companion calibrate)")
    p.add_argument("--json", action="store_true", help="one JSON object per image (JSON Lines)")
    p.add_argument("--annotate", metavar="DIR", help="write each image with the analysis drawn on it")

    p.set_defaults(run=runs("companion.vision.cli"))


@command("train", "rebuild the recognition models in models/ from rendered data")
def _train(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=whole(0), default=1, help="seed of the training renders (default 1)")
    p.add_argument("--out", metavar="DIR", default=None, help="where to write the models (default models/)")
    p.add_argument("--scenes", type=whole(1), default=None, help="number of rendered training scenes")
    p.add_argument("--paper", metavar="FILE", default=None,
                   help="take this learnt card-or-table map (paper.joblib) as it is instead of training one")

    p.set_defaults(run=runs("companion.vision.train"))


@command("bench", "measure analysis accuracy and speed on held-out renders")
def _bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("--count", type=int, default=60, help="scenes per tier (default 60)")
    p.add_argument("--seed", type=whole(0), default=1, help="seed of the held-out renders (default 1)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--tiers", default="easy,medium,hard", help="tiers to render (default all three)")
    p.add_argument("--parts", default="tables,speed,memory",
                   help="what to measure: tables (accuracy), speed, memory (default all)")
    p.add_argument("--advisor", action="store_true",
                   help="instead: the move advisor's win rate in simulated games (companion advise)")
    p.add_argument("--games", type=int, nargs="?", const=-1, default=None, metavar="N",
                   help="instead: follow N rendered hard-tier games with `track` (default --count, else 4)")
    p.add_argument("--advisor-games", type=int, default=200, metavar="N",
                   help="--advisor: games to simulate (default 200)")
    p.add_argument("--oracle", action="store_true",
                   help="--games: read frames with the renderer's truth (measures the tracker alone)")
    p.add_argument("--oracle-noise", metavar="MISREAD,MISS",
                   help="--games --oracle: a fallible oracle: share of cards misread, and missed "
                        "(drawn once per card and still table, from the game seed)")
    p.add_argument("--regions", action="store_true",
                   help="--games: `track --regions` (read only the part of a picture around a change)")
    p.add_argument("--players", type=int, default=3, help="--advisor: players per game (default 3)")
    p.add_argument("--calibrated", action="store_true",
                   help="instead: an unseen deck under an unseen light, figures without and with calibration; "
                        "with --games: each game tracked after calibrating on one photo of its own deck")
    p.add_argument("--opponents", choices=("random", "greedy"), default="random",
                   help="--advisor: how the other players play (default random legal placements)")

    def run(args):
        games_only = [flag for flag, given in (("--oracle", args.oracle), ("--oracle-noise", args.oracle_noise),
                                               ("--regions", args.regions)) if given]
        if games_only and args.games is None:
            raise UserError(f"{games_only[0]} goes with --games (the tracker's bench)")
        if args.calibrated and args.games is None:
            if args.tiers != "easy,medium,hard":
                raise UserError("--calibrated measures the hard tier only; --tiers does not apply")
            from companion.bench.calibrated import main as calibrated_main
            return calibrated_main(args)
        if args.advisor:
            if args.games is not None:
                raise UserError("--games follows rendered games with `track`; the advisor's "
                                "count is --advisor-games N")
            if args.advisor_games < 1:
                raise UserError("--advisor-games must be at least 1")
            from companion.bench.advisor import main as advisor_main
            args.games = args.advisor_games
            return advisor_main(args)
        if args.games is not None:
            from companion.bench.games import main as games_main
            return games_main(args)
        from companion.bench.run import main
        return main(args)
    p.set_defaults(run=run)


@command("calibrate", "learn your deck, camera and light from one photo of the whole deck laid out")
def _calibrate(p: argparse.ArgumentParser) -> None:
    p.add_argument("images", nargs="+", metavar="IMAGE", help="photo(s) of all 50 cards face-up, not touching")
    p.add_argument("--out", required=True, metavar="FILE", help="where to write the profile (JSON)")
    p.add_argument("--deck", metavar="FILE", help="the expected deck composition (default calibration/deck.json)")

    p.set_defaults(run=runs("companion.calibrate.run"))


@command("mat", "write a printable marker mat that fixes the table plane and scale in calibration photos")
def _mat(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, metavar="FILE", help="PNG or PDF file to write")

    p.set_defaults(run=runs("companion.calibrate.run", "mat_main"))


@command("synth", "render table photos, whole games and samples with known truth")
def _synth(p: argparse.ArgumentParser) -> None:
    from companion.synth.cli import add_arguments
    add_arguments(p)

    p.set_defaults(run=runs("companion.synth.cli"))


@command("track", "follow a whole game from a camera, stream, video or folder of frames")
def _track(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="SOURCE",
                   help="video file, folder of frames, camera index (0) or stream URL (http MJPEG, rtsp)")
    p.add_argument("--players", metavar="A,B,C", help="turn order, comma-separated (default two players)")
    p.add_argument("--profile", metavar="FILE", help="calibration profile (companion calibrate)")
    p.add_argument("--json", action="store_true", help="print the final account as JSON")
    p.add_argument("--follow", action="store_true", help="print each move as a JSON line once settled")
    p.add_argument("--evidence", metavar="DIR", help="save each move's before/after stills, cards outlined")
    p.add_argument("--resume", action="store_true", help="continue the game saved in the state file")
    p.add_argument("--state", metavar="FILE", help="where the game's state is kept for --resume")
    p.add_argument("--max-offline", type=seconds(24 * 3600), default=30.0, metavar="SECONDS",
                   help="how long a live source may stay away before giving up (default 30)")
    p.add_argument("--regions", action="store_true",
                   help="read only the part of a picture around a change when the table is well known: "
                        "about twice as fast, a little less sure (see README)")

    p.set_defaults(run=runs("companion.track.run"))


@command("serve", "the dashboard: live referee, scoreboard and history in the browser")
def _serve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", help="camera index, stream URL, video file, game record (.json) "
                   "or 'upload' (a phone photo per turn)")
    p.add_argument("--players", help="players in turn order, e.g. Ann,Ben,Cy (starts a new game "
                   "unless the current one has these players and source)")
    p.add_argument("--profile", metavar="FILE", help="calibration profile (companion calibrate)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this computer only)")
    p.add_argument("--port", type=port, default=8000, help="port (default 8000)")
    p.add_argument("--data", metavar="DIR", help="where games are kept (default ~/.local/share/hisss-companion)")
    p.add_argument("--pin", type=pin, help="referee PIN (six digits) to use instead of the stored or generated one")
    p.add_argument("--pace", type=seconds(3600), default=4.0, help="seconds per frame when replaying a game record")

    def run(args):
        from companion.web.server import serve
        players = [n.strip() for n in args.players.split(",") if n.strip()] if args.players else None
        return serve(args.source, players, args.host, args.port, args.data, args.pin, args.pace,
                     args.profile)
    p.set_defaults(run=run)


@command("demo", "the dashboard on the bundled sample game: no camera, no set-up")
def _demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this computer only)")
    p.add_argument("--port", type=port, default=8000, help="port (default 8000)")
    p.add_argument("--pace", type=seconds(3600), default=4.0, help="seconds per turn (default 4)")
    p.add_argument("--data", metavar="DIR", help="keep the demo game here (default: a fresh temporary folder)")

    def run(args):
        from companion.web.server import demo
        return demo(args.host, args.port, args.pace, args.data)
    p.set_defaults(run=run)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="companion", description="Camera companion for the card game Hisss.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (help_text, setup) in COMMANDS.items():
        setup(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def _terminated(signum, frame):
    # SystemExit unwinds like Ctrl+C does, so `finally` blocks remove their temporary folders
    sys.exit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        args = build_parser().parse_args(argv)
        if not getattr(args, "run", None):
            build_parser().print_help()
            return 2
        return int(args.run(args) or 0)
    except BrokenPipeError:
        # the reader went away (`... | head -1`): nothing more to say, to anyone; stdout is
        # pointed at nothing so that Python's own flush at exit does not complain either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (UserError, ValueError, OSError) as exc:
        if debug:
            raise
        # an OSError says which file (and where to, for a move) and why, without its errno
        text = str(exc)
        if isinstance(exc, OSError) and exc.filename and exc.strerror:
            moved = f" -> {exc.filename2}" if exc.filename2 else ""
            text = f"{exc.filename}{moved}: {exc.strerror}"
        message = " ".join(text.split()) or type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not the user's fault: still one line, unless --debug
        if debug:
            raise
        message = " ".join(str(exc).split())
        print(f"error: internal error ({type(exc).__name__}: {message}); rerun with --debug "
              "for the traceback", file=sys.stderr)
        return 1
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
