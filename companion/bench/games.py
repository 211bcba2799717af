"""`companion bench --games`: follow rendered hard-tier games and compare with their truth.

Each game is rendered from a seed training never used, in the held-out art
style, with hands, nudges, noise and exposure drift (`companion.synth.game`),
then `track` runs over its video exactly as a user would run it: decoding,
gating, analysis, settling, referee.  Reported per game and overall:

- final scores exactly right (scores and winners equal to the truth);
- move-level accuracy: the tracked moves aligned with the true ones (an edit
  alignment, so one missed move does not count every later move wrong); a
  move is right when its card (deck identity), action and verdict (legal and
  code) are;
- phantom moves: tracked moves aligned with no true move;
- with `--json`, each game's `lost` moves: every true move not tracked right beside what
  was tracked in its place, to find where a game went wrong;
- frames per second over the 1280x720 video, decoding included, on one core
  (process CPU time, single-threaded OpenCV), and where the time went: the analyser's
  milliseconds per picture it read afresh, and everything else's (decoding, the change
  gate, the bare table, the tracker) per frame of the video -- measured on replayed
  readings too, where the frame rate is not.

With `--calibrated`, each game is tracked as its family would after
calibrating: one photo of the game's own deck laid out, under the game's own
lamp and camera (`deck_and_light_of`), goes through `calibrate`, and the
game's analyser takes the profile.

With `--regions`, as `track --regions` does, the tracker reads only the part of
a picture around a change when it can (`companion.track.regions`).

`COMPANION_BENCH_READINGS=DIR` keeps every game's readings in DIR and replays them on
later runs while what a reading depends on is unchanged (`companion.bench.kept`): with
`COMPANION_BENCH_KEEP` (the rendered games kept too) a change to the tracker alone is
measured in a minute.

`--oracle` replaces the analyser by the renderer's own truth of each settled
frame: it measures the tracker's logic (gating, settling, identity) apart
from the vision, and counts every read of a frame that had no settled truth
(a read while something moved).
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .kept import KeptReadings, readings_file, readings_fingerprint

DEFAULT_GAMES = 4
SCENE_BENCH_DEFAULT_COUNT = 60   # `--count`'s default belongs to the scene bench
SEED_OFFSET = 7_000_000          # game seeds far from anything training draws


# ------------------------------------------------------------------ comparing

def move_key(move: dict, deck) -> tuple:
    from companion.game.cards import Card
    card = move.get("card")
    ident = deck.identity(Card.parse(card)).code if card and card != "unknown" else None
    return (ident, move.get("action"), bool(move.get("legal")), move.get("code"))


def aligned(truth: list[tuple], found: list[tuple]) -> list[tuple[int | None, int | None]]:
    """Edit alignment of two move lists, in order: (truth index, found index) pairs, None on
    the side a move is missing from (a missed move, a phantom move)."""
    n, m = len(truth), len(found)
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        cost[i][0] = i
    for j in range(m + 1):
        cost[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i][j] = min(cost[i - 1][j - 1] + (truth[i - 1] != found[j - 1]),
                             cost[i - 1][j] + 1, cost[i][j - 1] + 1)
    pairs: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (truth[i - 1] != found[j - 1]):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            pairs.append((i - 1, None))
            i -= 1
        else:
            pairs.append((None, j - 1))
            j -= 1
    return pairs[::-1]


def align(truth: list[tuple], found: list[tuple],
          pairs: list[tuple[int | None, int | None]] | None = None) -> dict[str, int]:
    """The alignment's counts (`pairs`, when made already): right, wrong (substituted),
    missed, phantom."""
    out = {"right": 0, "wrong": 0, "missed": 0, "phantom": 0}
    for i, j in aligned(truth, found) if pairs is None else pairs:
        if i is None:
            out["phantom"] += 1
        elif j is None:
            out["missed"] += 1
        else:
            out["right" if truth[i] == found[j] else "wrong"] += 1
    return out


# ------------------------------------------------------------------ one game

def _truth_moves(truth: dict) -> list[dict]:
    return truth.get("moves", [])


def _settled_truth(truth: dict) -> dict[int, dict]:
    """Video frame index -> the analyze-format truth of that frame, for settled frames."""
    return {int(f["index"]): f["truth"] for f in truth.get("frames", []) if f.get("truth")}


class OracleAnalyzer:
    """The renderer's truth of a settled frame; a frame without one was read while things moved.

    `misread` and `miss` > 0 make it a fallible reader with known error rates, to
    measure what the tracker's voting and settling absorb: each card is misread
    (one end's colour wrong, confidence lowered) with probability `misread`, and
    missed (left out, its chain broken where it lay) with probability `miss`
    (default `misread / 2`); every outline jitters by a few pixels.  A vision
    reading a still picture makes the same mistakes in every frame of it, so a
    card's errors are drawn once per still table (`table_of`: frame index -> the
    game state it shows; by default each frame its own) from the seed, the table
    and the card alone: the same game and seed give the same errors whichever
    frames the tracker chooses to read.
    """

    COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")

    def __init__(self, settled: dict[int, dict], misread: float = 0.0, seed: int = 0,
                 miss: float | None = None, table_of: dict[int, int] | None = None):
        self.settled = settled
        self.frame = -1
        self.unsettled_reads = 0
        self.misread = misread
        self.miss = misread / 2 if miss is None else miss
        self.seed = seed
        self.table_of = table_of or {}

    def __call__(self, image):
        data = self.settled.get(self.frame)
        if data is None:
            self.unsettled_reads += 1
            raise LookupError(f"frame {self.frame} has no settled truth")
        return self._spoil(data) if self.misread or self.miss else data

    def analyze_region(self, image, box) -> dict:
        """The reading of the part of the picture in `box` (x0, y0, x1, y1): the cards whose
        centre lies in it, a chain broken where it leaves it (the tracker's region reader)."""
        import numpy as np
        data = self(image)
        x0, y0, x1, y1 = box
        inside = [c for c in data.get("cards", [])
                  if x0 <= float(np.mean([p[0] for p in c["corners"]])) < x1
                  and y0 <= float(np.mean([p[1] for p in c["corners"]])) < y1]
        return keep_cards(dict(data), inside)

    def _rng(self, *key: int):
        import numpy as np
        return np.random.default_rng([self.seed, *key])

    def _spoil(self, data: dict) -> dict:
        import copy
        data = copy.deepcopy(data)
        table = self.table_of.get(self.frame, self.frame)
        kept = []
        for card in data.get("cards", []):
            errors = self._rng(0, table, int(card["id"]))   # the same in every frame of this table
            missed, misread = errors.random() < self.miss, errors.random() < self.misread
            if missed:
                continue
            shift = self._rng(1, self.frame, int(card["id"])).normal(0, 2.0, 2)
            card["corners"] = [[x + shift[0], y + shift[1]] for x, y in card["corners"]]
            card["ends"] = [[x + shift[0], y + shift[1]] for x, y in card["ends"]]
            if card["colours"] and misread:
                k = int(errors.integers(len(card["colours"])))
                # another colour, still a card of the deck (a middle's two ends differ)
                card["colours"][k] = str(errors.choice([c for c in self.COLOURS if c not in card["colours"]]))
                card["confidence"] = float(errors.uniform(0.4, 0.9))
            kept.append(card)
        return keep_cards(data, kept)


def keep_cards(data: dict, kept: list[dict]) -> dict:
    """`analyze` output (changed in place) as a reader that saw only the cards `kept`:
    a card it missed breaks its chain in two, as the reader cannot link across it."""
    ids = {c["id"] for c in kept}
    data["cards"] = kept
    snakes = []
    for snake in data.get("snakes", []):
        part: list[int] = []
        for i in snake["cards"] + [None]:
            if i in ids:
                part.append(i)
            elif part:
                snakes.append({"cards": part, "complete": False})
                part = []
    data["snakes"] = snakes
    return data


def _still_tables(truth: dict) -> dict[int, int]:
    """Video frame index -> the game state (record frame) it shows."""
    return {int(f["index"]): int(f["record_frame"]) for f in truth.get("frames", [])
            if f.get("record_frame") is not None}


def follow_video(video: Path, players: list[str], analyze, oracle: OracleAnalyzer | None = None,
                 deck=None, finished: bool = True, read_region=None,
                 kept: KeptReadings | None = None) -> tuple[dict, float, int]:
    """Track a whole video; returns the account, the CPU seconds it took and the frames seen.
    `read_region`: the tracker's region reader (`companion.track.regions`), as `track` has;
    `kept`: the readings kept from an earlier run, told each frame's index as the oracle is.

    CPU time of this (single-threaded) process is what "on one core" means on a
    machine shared with other work; wall time would charge us for their load.
    """
    from companion.track.sources import guess_fps, open_source
    from companion.track.tracker import Tracker, TrackerSettings
    from companion.track.watchdog import watch
    source = open_source(str(video))
    tracker = Tracker(analyze, players, deck=deck, settings=TrackerSettings.for_fps(guess_fps(source)),
                      read_region=read_region)
    frames = 0
    start = time.process_time()
    for index, image in watch(source):
        for told in (oracle, kept):
            if told is not None:
                told.frame = index
        tracker.feed(index, image)
        frames += 1
    tracker.end_of_source()
    if finished and tracker.referee.undrawn() == 0:
        tracker.finish()
    seconds = time.process_time() - start
    return tracker.account(), seconds, frames


def timed(analyze, clock: list[float]):
    """`analyze`, adding the process CPU seconds of each call to `clock[0]` and the call to
    `clock[1]` (a frame that does not decode never reaches the analyser)."""
    @functools.wraps(analyze)
    def call(*args, **kwargs):
        start = time.process_time()
        try:
            return analyze(*args, **kwargs)
        finally:
            clock[0] += time.process_time() - start
            clock[1] += 1
    return call


def _brief(move: dict | None) -> dict | None:
    """What a move in the bench's list of lost moves shows: enough to find it in the video
    (a true move's `frame` is the game record's; its `video_frame`, the video's)."""
    if move is None:
        return None
    brief = {k: move.get(k) for k in ("frame", "player", "card", "action", "legal", "code")}
    if "video_frame" in move:
        brief["video_frame"] = move["video_frame"]
    return brief


def judge_game(truth: dict, account: dict, deck) -> dict:
    """The game's figures, and `lost`: each true move not tracked right beside what was
    tracked in its place (None: missed, or a phantom move), in the game's order."""
    want, found = _truth_moves(truth), account["moves"]
    keys_want, keys_found = [move_key(m, deck) for m in want], [move_key(m, deck) for m in found]
    pairs = aligned(keys_want, keys_found)
    counts = align(keys_want, keys_found, pairs)
    lost = [{"truth": _brief(want[i] if i is not None else None),
             "tracked": _brief(found[j] if j is not None else None)}
            for i, j in pairs if i is None or j is None or keys_want[i] != keys_found[j]]
    scores_right = account["scores"] == truth.get("scores") and \
        sorted(account["winners"]) == sorted(truth.get("winners", []))
    return {"moves": len(want), "tracked": len(found), **counts,
            "scores_right": scores_right, "desync": account.get("desync", False),
            "unreadable": account["frames"]["unreadable"], "analysed": account["frames"]["analysed"],
            "lost": lost}


# ------------------------------------------------------------------ the bench

def calibrated_for(players: list[str], game_seed: int, film: dict):
    """The analyser a family would use for this game after `calibrate` on one photo of
    its deck laid out in its room, and why photos were refused (None when every one was)."""
    from companion.calibrate.adapt import calibrated_analyzer
    from companion.calibrate.run import calibrate_images
    from companion.synth.deck_layout import deck_and_light_of, render_deck_photo
    from companion.synth.plan import plan_game
    from companion.vision.profile import profile_from_dict
    from companion.vision.seeds import scene_seed

    from .calibrated import RETAKES

    deck, light = deck_and_light_of(plan_game(players, game_seed, **film).world)
    refusals = []
    for attempt in range(RETAKES + 1):   # a refused photo is taken again, as a user would
        photo = render_deck_photo(scene_seed("bench", game_seed, 7_100_000 + 1000 * attempt), deck, light=light)
        try:
            cal = calibrate_images([photo.image], ["calibration photo"])
        except ValueError as exc:
            refusals.append(str(exc))
            continue
        return calibrated_analyzer(profile_from_dict(cal.profile, f"game {game_seed}")), refusals
    return None, refusals


def run_bench(count: int, seed: int, oracle: bool = False, keep: str | None = None,
              profile: str | None = None, max_frames: int | None = None, noise: float = 0.0,
              miss: float | None = None, regions: bool = False, calibrated: bool = False,
              readings: str | None = None, log=sys.stderr) -> dict:
    import cv2
    from companion.game.deck import load_deck
    from companion.synth.game import render_game
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.track.background import TableReader
    cv2.setNumThreads(1)
    deck = load_deck()
    analyzer = None
    if not oracle:
        from companion.vision.analyze import Analyzer
        analyzer = Analyzer(profile)
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="bench-games-"))
    fingerprint = readings_fingerprint() if readings else None
    games = []
    try:
        for g in range(count):
            game_seed = SEED_OFFSET + seed * 1000 + g
            n_players = 2 + (game_seed % 4)
            players = [f"P{k + 1}" for k in range(n_players)]
            folder = work / f"game-{game_seed}"
            t0 = time.perf_counter()
            film = dict(tier="hard", style=HELD_OUT_STYLE, fps=10, size=(1280, 720), illegal_rate=0.1,
                        max_frames=max_frames)
            cached = folder / "truth.json"
            if keep and cached.exists():   # a kept folder from an earlier run: same seed, same game
                truth_path = cached
            else:
                truth_path = render_game(folder, players, game_seed, **film)
            render_s = time.perf_counter() - t0
            read, refusals = analyzer, []
            if calibrated and not oracle:
                read, refusals = calibrated_for(players, game_seed, film)
                for reason in refusals:
                    print(f"game seed {game_seed}: a calibration photo was refused: {reason}", file=log)
                if read is None:
                    read = analyzer
            truth = json.loads(Path(truth_path).read_text(encoding="utf-8"))
            players = list(truth["players"])
            video = folder / truth["video"]
            o = OracleAnalyzer(_settled_truth(truth), noise, game_seed, miss,
                               _still_tables(truth)) if oracle else None
            finished = truth["record"].get("finished", True)
            kept, clock = None, [0.0, 0]
            analyze = timed(read.analyze, clock) if o is None else None
            if readings and o is None and not regions:
                kept = KeptReadings(analyze, readings_file(readings, game_seed, read is not analyzer, fingerprint))
            reader = o or TableReader(kept or analyze)
            read_region = None if not regions else o.analyze_region if o is not None else reader.region
            account, seconds, frames = follow_video(video, players, reader, o, deck, finished, read_region, kept)
            result = judge_game(truth, account, deck)
            # (replayed readings cost nothing: the frame rate would be the tracker's alone)
            fps = round(frames / seconds, 1) if not (kept and kept.replayed) else None
            result.update(seed=game_seed, players=len(players), frames=frames, fps=fps,
                          render_s=round(render_s, 1), analysis_s=round(clock[0], 2), analyses=clock[1],
                          cpu_s=round(seconds, 2), analysis_ms_per_reading=_per(clock[0], clock[1], 1000),
                          other_ms_per_frame=_per(seconds - clock[0], frames, 1000, 1))
            if kept is not None:
                kept.save()
                result.update(readings_replayed=kept.replayed, readings_made=kept.analysed)
            if o is not None:
                result["reads_while_moving"] = o.unsettled_reads
            if calibrated and not oracle:
                result["calibrated"] = read is not analyzer
                result["calibration_photos_refused"] = refusals
            games.append(result)
            print(f"game {g + 1}/{count} seed {game_seed}: {result['right']}/{result['moves']} moves "
                  f"right, {result['phantom']} phantom, scores {'right' if result['scores_right'] else 'WRONG'}, "
                  + (f"{result['fps']} fps" if result["fps"] else "readings replayed"), file=log, flush=True)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    total_moves = sum(r["moves"] for r in games) or 1
    frames = sum(r["frames"] for r in games if r["fps"])
    seconds = sum(r["frames"] / r["fps"] for r in games if r["fps"])
    return {
        "games": len(games),
        "regions": regions,
        "analyser": (f"oracle (renderer truth, {noise:.0%} misread, "
                     f"{(noise / 2 if miss is None else miss):.0%} missed)" if oracle
                     else "vision, calibrated from one photo of each game's deck" if calibrated else "vision"),
        "scores_exact": round(sum(r["scores_right"] for r in games) / max(1, len(games)), 4),
        "move_accuracy": round(sum(r["right"] for r in games) / total_moves, 4),
        "phantom_moves": sum(r["phantom"] for r in games),
        "missed_moves": sum(r["missed"] for r in games),
        "fps": round(frames / seconds, 1) if seconds else None,
        # (where the time goes, replayed readings or not: see the module's docstring)
        "analysis_ms_per_reading": _per(sum(r["analysis_s"] for r in games), sum(r["analyses"] for r in games), 1000),
        "other_ms_per_frame": _per(sum(r["cpu_s"] - r["analysis_s"] for r in games),
                                   sum(r["frames"] for r in games), 1000, 1),
        "targets": {"scores_exact": 0.95, "move_accuracy": 0.99, "phantom_moves": 0, "fps": 60},
        "per_game": games,
    }


def _per(total: float, count: int, scale: float = 1.0, digits: int = 0) -> float | None:
    """`scale` * total / count, rounded; None when nothing was counted or it took no time."""
    return round(scale * total / count, digits) if count and total else None


def oracle_noise(text: str | None) -> tuple[float, float | None]:
    """`MISREAD[,MISS]` shares (0..1) -> (misread, miss); MISS defaults to half of MISREAD."""
    from companion.cli import UserError
    if not text:
        return 0.0, None
    try:
        values = [float(v) for v in str(text).split(",")]
    except ValueError:
        values = []
    if not 1 <= len(values) <= 2 or not all(0.0 <= v <= 1.0 for v in values):
        raise UserError(f"--oracle-noise wants MISREAD,MISS as shares between 0 and 1, not {text!r}")
    return values[0], (values[1] if len(values) == 2 else None)


def main(args) -> int:
    from companion.cli import UserError
    if args.games is not None and args.games != -1 and args.games < 1:   # (-1: --games without N)
        raise UserError(f"--games wants at least one game, not {args.games}")
    if getattr(args, "games", None) and args.games > 0:
        count = args.games
    else:
        count = args.count if args.count not in (None, SCENE_BENCH_DEFAULT_COUNT) else DEFAULT_GAMES
    if os.environ.get("COMPANION_BENCH_CPU"):
        os.sched_setaffinity(0, {int(os.environ["COMPANION_BENCH_CPU"])})
    noise, miss = oracle_noise(getattr(args, "oracle_noise", None)
                               or os.environ.get("COMPANION_BENCH_ORACLE_NOISE"))
    report = run_bench(count, args.seed, oracle=getattr(args, "oracle", False) or bool(noise or miss),
                       keep=os.environ.get("COMPANION_BENCH_KEEP"), profile=getattr(args, "profile", None),
                       noise=noise, miss=miss, regions=getattr(args, "regions", False),
                       calibrated=getattr(args, "calibrated", False),
                       readings=os.environ.get("COMPANION_BENCH_READINGS"))
    if getattr(args, "json", False):
        print(json.dumps(report, indent=2))
    else:
        print(f"games: {report['games']} (hard tier, held-out style; analyser: {report['analyser']})")
        print(f"final scores exactly right: {report['scores_exact']:.1%}   (target >= 95%)")
        print(f"move-level accuracy:        {report['move_accuracy']:.1%}   (target >= 99%)")
        print(f"phantom moves:              {report['phantom_moves']}   (target 0); "
              f"missed: {report['missed_moves']}")
        print(f"frames per second (1280x720, decoding included, one core): {report['fps']}   "
              f"(target >= 60)" + ("" if report["fps"] else "; readings replayed, so not timed"))
        if report["other_ms_per_frame"]:
            analyser = report["analysis_ms_per_reading"]
            read = f"the analyser {analyser:.0f} ms per picture read afresh" if analyser else \
                "the oracle's readings not told apart" if report["analyser"].startswith("oracle") else \
                "no picture read afresh"
            print(f"where the time went (CPU): {read}; everything else {report['other_ms_per_frame']:.1f} ms per frame")
    return 0
