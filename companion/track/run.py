"""`companion track SOURCE`: follow a whole game and give the referee's account.

This module wires the parts together (source and watchdog -> tracker ->
output, evidence, saved state); the parts themselves know nothing of the
command line.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Callable, TextIO

from companion.game.record import parse_players

from .evidence import save_move_evidence
from .reading import AnalyzeFn
from .background import TableReader
from .regions import crop_reader
from .sources import SourceError, guess_fps, open_source
from .tracker import Tracker, TrackEvent, TrackerSettings
from .watchdog import SourceStatus, watch

DEFAULT_PLAYERS = ["Player 1", "Player 2"]


class TrackError(ValueError):
    """Bad usage of `companion track` (reported as one line)."""


def players_or_default(text: str | None) -> list[str]:
    return list(parse_players(text)) if text else list(DEFAULT_PLAYERS)


def make_analyzer(profile: str | None) -> AnalyzeFn:
    from companion.vision.analyze import Analyzer
    return Analyzer(profile).analyze


def default_state_path(source: str, evidence: str | None) -> Path:
    """Where a game's state is kept unless --state says: the evidence folder, else the user's state dir."""
    if evidence:
        return Path(evidence) / "track-state.json"
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.abspath(source) if Path(source).exists()
                  else source).strip("_")[-120:]
    return base / "companion" / f"track-{slug or 'source'}.json"


def save_state(path: Path, state: dict) -> None:
    """Write atomically: a crash mid-write leaves the previous state, never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".track-", suffix=".json", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(state, fh)
    os.replace(tmp, path)


def load_state(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrackError(f"--resume: no saved game at {path}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise TrackError(f"--resume: cannot read {path} ({exc})") from None


def follow_game(source: str, tracker: Tracker, *, start: int = 0, evidence: str | None = None,
                on_move: Callable[[dict], None] | None = None,
                on_correction: Callable[[dict], None] | None = None,
                on_events: Callable[[list[TrackEvent]], None] | None = None,
                on_status: Callable[[SourceStatus], None] | None = None,
                max_offline: float = 30.0) -> bool:
    """Feed every frame of a source to the tracker; True when a recording ran to its end."""
    src = open_source(source, start=start)
    first = start if not src.live else tracker.last_frame + 1  # a live camera cannot rewind
    def status(change: SourceStatus) -> None:
        tracker.on_source_status(change)
        if on_status:
            on_status(change)
    def told(events: list[TrackEvent]) -> None:
        for event in events:
            if event.kind == "move":
                if evidence:
                    number = len(tracker.moves)
                    event.data["stills"] = save_move_evidence(evidence, number, event.data,
                                                               event.stills, event.outlines)
                if on_move:
                    on_move(event.data)
            elif event.kind == "correction" and on_correction:
                on_correction(event.data)
        if on_events and events:
            on_events(events)
    for index, image in watch(src, first, max_offline=max_offline, on_status=status):
        told(tracker.feed(index, image))
    if src.live:
        return False
    told(tracker.end_of_source())
    return True


def main(args, analyze: AnalyzeFn | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    players = players_or_default(args.players)
    state_path = Path(args.state) if args.state else default_state_path(args.source, args.evidence)
    saved = load_state(state_path) if args.resume else None
    # a source that cannot be named fails before models are loaded
    settings = TrackerSettings.for_fps(guess_fps(open_source(args.source)))
    # the camera's pictures are read against the empty table learnt from them (`background`)
    reader = TableReader(make_analyzer(args.profile)) if analyze is None else None
    analyze = analyze or reader
    # --regions: only the part of a picture around a change is read (`regions`), when it can be
    read_region = None
    if getattr(args, "regions", False):
        read_region = reader.region if reader is not None else crop_reader(analyze)
    tracker = Tracker(analyze, players, settings=settings, read_region=read_region)
    start = 0
    if saved is not None:
        try:
            tracker.restore(saved)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
            raise TrackError(f"--resume: {state_path} is not a game this tracker saved "
                             f"({type(exc).__name__}: {exc})") from None
        start = tracker.resumed_at

    def keep_state() -> None:
        # a run that read no picture (a wrong folder, a camera unplugged) leaves a saved game as it was
        if saved is not None or tracker.stats["frames"] > tracker.stats["unreadable"]:
            save_state(state_path, tracker.state())

    def print_move(move: dict) -> None:
        if args.follow:
            print(json.dumps(move), file=out, flush=True)

    def print_correction(correction: dict) -> None:
        # A card first read wrongly has since been read right many times: the game was
        # re-judged.  Followers get one line saying so, with the corrected moves.
        if args.follow:
            print(json.dumps({"event": "correction", **correction}), file=out, flush=True)

    def on_status(status: SourceStatus) -> None:
        print(f"{'online' if status.online else 'offline'}: {status.message}", file=sys.stderr)

    try:
        ended = follow_game(args.source, tracker, start=start, evidence=args.evidence,
                            on_move=print_move, on_correction=print_correction,
                            on_events=lambda e: keep_state(),
                            on_status=on_status, max_offline=args.max_offline)
    except (KeyboardInterrupt, SystemExit) as stop:   # Ctrl+C, or SIGTERM (`companion.cli.main`)
        keep_state()
        print(f"stopped at frame {tracker.last_frame}; continue with --resume "
              f"(state in {state_path})", file=sys.stderr)
        if isinstance(stop, SystemExit):
            raise
        ended = False
        if not args.json:
            return 130
    except SourceError as exc:
        keep_state()
        raise TrackError(str(exc)) from None
    if tracker.stats["frames"] and tracker.stats["frames"] == tracker.stats["unreadable"] and saved is None:
        raise TrackError(f"{args.source}: none of its {tracker.stats['frames']} frames is a picture")
    if ended and tracker.referee.undrawn() == 0 and not tracker.referee.finished:
        for event in tracker.finish():
            if event.kind == "move":
                print_move(event.data)
    keep_state()
    account = tracker.account()
    if args.json:
        print(json.dumps(account, indent=2), file=out)
    elif not args.follow:
        from companion.game.judge_cli import format_account
        print(format_account(account, players), file=out)
        frames = account["frames"]
        print(f"frames: {frames['seen']} seen, {frames['analysed']} analysed, "
              f"{frames['unreadable']} unreadable" + (" — DESYNC, waiting for the table"
                                                     if tracker.desync else ""), file=out)
    return 0
