"""The games bench's fallible oracle: known error rates, the same errors whatever is read."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from companion.bench.games import OracleAnalyzer, oracle_noise
from companion.cli import UserError


def _frame(n_cards: int) -> dict:
    cards = [{"id": i, "kind": "middle", "colours": ["red", "blue"], "confidence": 1.0,
              "ends": [[10.0 * i, 0.0], [10.0 * i + 5, 0.0]],
              "corners": [[10.0 * i, 0.0], [10.0 * i + 8, 0.0], [10.0 * i + 8, 5.0], [10.0 * i, 5.0]]}
             for i in range(n_cards)]
    return {"cards": cards, "snakes": [{"cards": list(range(n_cards)), "complete": False}]}


def _read(oracle: OracleAnalyzer, frame: int) -> dict:
    oracle.frame = frame
    return oracle(None)


def _errors(reading: dict) -> tuple:
    return (sorted(c["id"] for c in reading["cards"]),
            sorted((c["id"], tuple(c["colours"])) for c in reading["cards"]))


def test_errors_are_drawn_per_card_and_still_table_whatever_frames_are_read():
    settled = {f: _frame(400) for f in range(6)}
    tables = {0: 0, 1: 0, 2: 0, 3: 1, 4: 1, 5: 1}       # two still tables of three frames
    a = OracleAnalyzer(settled, 0.1, seed=3, miss=0.2, table_of=tables)
    b = OracleAnalyzer(settled, 0.1, seed=3, miss=0.2, table_of=tables)
    forward = [_errors(_read(a, f)) for f in range(6)]
    backward = [_errors(_read(b, f)) for f in reversed(range(6))][::-1]
    assert forward == backward                            # the order of reading changes nothing
    assert forward[0] == forward[1] == forward[2] and forward[3] == forward[4] == forward[5]
    assert forward[0] != forward[3]                       # another still table, other errors
    kept, colours = forward[0]
    assert 0.15 < 1 - len(kept) / 400 < 0.25              # missed: ~20%
    misread = sum(c != ("red", "blue") for _, c in colours) / len(colours)
    assert 0.06 < misread < 0.14                          # misread: ~10%
    # a missed card breaks its chain where it lay: every snake is a run of kept cards
    reading = _read(a, 0)
    ids = {c["id"] for c in reading["cards"]}
    assert sorted(i for s in reading["snakes"] for i in s["cards"]) == sorted(ids)
    assert all(b - a == 1 for s in reading["snakes"] for a, b in zip(s["cards"], s["cards"][1:]))


def test_another_seed_gives_other_errors_and_no_noise_gives_the_truth():
    settled = {0: _frame(200)}
    one = _errors(_read(OracleAnalyzer(settled, 0.1, seed=1), 0))
    two = _errors(_read(OracleAnalyzer(settled, 0.1, seed=2), 0))
    assert one != two
    assert _read(OracleAnalyzer(settled), 0) == settled[0]


@pytest.mark.parametrize("text, want", [("0.1", (0.1, None)), ("0.05,0.2", (0.05, 0.2)),
                                        (None, (0.0, None))])
def test_oracle_noise_is_read_as_misread_and_miss_shares(text, want):
    assert oracle_noise(text) == want


@pytest.mark.parametrize("text", ["x", "0.1,0.2,0.3", "1.5", "-0.1,0.1"])
def test_bad_oracle_noise_is_a_one_line_user_error(text):
    with pytest.raises(UserError, match="--oracle-noise"):
        oracle_noise(text)


def test_each_game_is_calibrated_on_a_photo_of_its_own_deck_in_its_own_room():
    from companion.bench.games import calibrated_for
    from companion.synth.plan import plan_game
    from companion.synth.styles import HELD_OUT_STYLE

    film = dict(tier="hard", style=HELD_OUT_STYLE, fps=10, size=(1280, 720), illegal_rate=0.1, max_frames=3)
    players = ["P1", "P2", "P3"]
    analyzer, refusals = calibrated_for(players, 7_013_002, film)
    assert analyzer is not None, refusals
    world = plan_game(players, 7_013_002, **film).world
    # the profile learnt this game's card shape (decks differ: 1.0 to 1.6), not some other deck's
    assert analyzer.profile.card_aspect == pytest.approx(world.aspect, rel=0.03)


@pytest.mark.parametrize("count", ["0", "-5"])
def test_no_games_is_a_one_line_user_error(count):
    from companion.cli import build_parser
    from companion.bench.games import main
    args = build_parser().parse_args(["bench", "--games", count])
    with pytest.raises(UserError, match="at least one game"):
        main(args)


@pytest.mark.parametrize("argv, message", [
    (["--oracle"], "--oracle goes with --games"),
    (["--oracle-noise", "0.1"], "--oracle-noise goes with --games"),
    (["--regions"], "--regions goes with --games"),
    (["--calibrated", "--tiers", "easy"], "--tiers does not apply"),
])
def test_flags_of_another_bench_are_refused_not_ignored(argv, message, capsys):
    from companion.cli import main
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err


def test_a_bench_stopped_midway_leaves_no_rendered_games_behind(tmp_path):
    bench = subprocess.Popen([sys.executable, "-m", "companion", "bench", "--games", "1", "--oracle"],
                             env={**os.environ, "TMPDIR": str(tmp_path)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith("bench-games-") and any(p.iterdir()) for p in tmp_path.iterdir()):
            assert time.monotonic() < deadline and bench.poll() is None, "the bench never started a game"
            time.sleep(0.05)
    finally:
        bench.send_signal(signal.SIGTERM)
        _, err = bench.communicate(timeout=30)
    assert bench.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


def test_moves_are_aligned_so_that_one_missed_move_does_not_count_every_later_one_wrong():
    from companion.bench.games import align, aligned
    truth = ["a", "b", "c", "d", "e"]
    found = ["a", "c", "x", "e", "f"]           # b missed, d tracked as x, f a phantom move
    assert aligned(truth, found) == [(0, 0), (1, None), (2, 1), (3, 2), (4, 3), (None, 4)]
    assert align(truth, found) == {"right": 3, "wrong": 1, "missed": 1, "phantom": 1}


def test_a_judged_game_lists_each_move_lost_beside_what_was_tracked_in_its_place():
    from companion.bench.games import judge_game
    from companion.game.deck import load_deck

    def move(frame, card, action="new", legal=True, code=None):
        return {"frame": frame, "player": "P1", "card": card, "action": action, "legal": legal,
                "code": code, "reason": "..."}
    truth = {"moves": [move(1, "H-red"), {**move(2, "M-red-blue", "extend"), "video_frame": 19},
                       move(3, "T-blue", "extend")],
             "scores": {"P1": 0}, "winners": ["P1"]}
    account = {"moves": [move(10, "H-red"), move(20, "M-red-blue", "new", False, "could_attach"),
                         move(30, "T-blue", "extend"), move(35, "M-blue-green")],
               "scores": {"P1": 0}, "winners": ["P1"], "frames": {"unreadable": 0, "analysed": 8}}
    result = judge_game(truth, account, load_deck())
    assert (result["right"], result["wrong"], result["phantom"]) == (2, 1, 1)
    assert result["lost"] == [
        {"truth": {"frame": 2, "video_frame": 19, "player": "P1", "card": "M-red-blue", "action": "extend",
                   "legal": True, "code": None},
         "tracked": {"frame": 20, "player": "P1", "card": "M-red-blue", "action": "new", "legal": False,
                     "code": "could_attach"}},
        {"truth": None, "tracked": {"frame": 35, "player": "P1", "card": "M-blue-green", "action": "new",
                                    "legal": True, "code": None}}]


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_analyser_s_time_and_calls_are_counted_even_when_it_fails():
    from companion.bench.games import timed
    clock = [0.0, 0]
    timed(lambda image: _busy(0.05), clock)(None)
    assert 0.05 <= clock[0] < 1.0 and clock[1] == 1

    def fails(image):
        _busy(0.05)
        raise ValueError("the frame does not decode")

    with pytest.raises(ValueError):
        timed(fails, clock)(None)
    assert clock[0] >= 0.1 and clock[1] == 2
