"""The games bench's readings kept between runs: replayed while the vision is unchanged."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from companion.bench.kept import KeptReadings, readings_file, readings_fingerprint


def _reading(value: int) -> dict:
    return {"cards": [{"id": 0, "kind": "head", "colours": ["red"], "confidence": 0.5 + value / 100}],
            "snakes": [{"cards": [0], "complete": False}]}


def _counting(calls: list):
    def analyze(image, **kwargs):
        calls.append(int(image[0, 0]))
        return _reading(int(image[0, 0]))
    return analyze


def _never(image, **kwargs):
    raise AssertionError("a kept frame was analysed again")


def test_a_frame_read_before_is_replayed_and_a_new_one_analysed(tmp_path):
    path = tmp_path / "v" / "game-1.json.gz"
    calls: list[int] = []
    first = KeptReadings(_counting(calls), path)
    made = {}
    for frame in (3, 4, 9):
        first.frame = frame
        made[frame] = first(np.full((2, 2), frame, np.uint8), unlike_table=None)
    first.save()
    assert calls == [3, 4, 9] and first.analysed == 3 and first.replayed == 0

    again = KeptReadings(_never, path)
    for frame in (9, 3, 4):
        again.frame = frame
        assert again(np.zeros((2, 2), np.uint8)) == made[frame]   # the kept reading, not this picture's
    assert again.replayed == 3 and again.analysed == 0

    calls.clear()
    more = KeptReadings(_counting(calls), path)
    more.frame = 10
    assert more(np.full((2, 2), 10, np.uint8)) == _reading(10)
    assert calls == [10]


def test_a_replayed_reading_is_a_copy_the_tracker_may_change(tmp_path):
    kept = KeptReadings(_counting([]), tmp_path / "game-1.json.gz")
    kept.frame = 0
    kept(np.zeros((2, 2), np.uint8))["cards"].clear()
    assert kept(np.zeros((2, 2), np.uint8))["cards"] != []


def test_a_damaged_file_is_read_afresh(tmp_path):
    path = tmp_path / "game-1.json.gz"
    path.write_bytes(b"not gzip at all")
    calls: list[int] = []
    kept = KeptReadings(_counting(calls), path)
    kept.frame = 2
    assert kept(np.full((2, 2), 2, np.uint8)) == _reading(2) and calls == [2]
    kept.save()
    again = KeptReadings(_never, path)
    again.frame = 2
    assert again(np.zeros((2, 2), np.uint8)) == _reading(2)


def test_nothing_read_writes_nothing(tmp_path):
    path = tmp_path / "game-1.json.gz"
    KeptReadings(_never, path).save()
    assert not path.exists()


def test_another_vision_keeps_its_readings_apart(tmp_path):
    code = tmp_path / "vision"
    code.mkdir()
    (code / "find.py").write_text("THRESHOLD = 1\n")
    before = readings_fingerprint([code])
    assert readings_fingerprint([code]) == before
    (code / "find.py").write_text("THRESHOLD = 2\n")
    after = readings_fingerprint([code])
    assert after != before
    (tmp_path / "background.py").write_text("MARGIN = 1\n")   # a single file counts too
    assert readings_fingerprint([code, tmp_path / "background.py"]) != after
    assert readings_file(tmp_path, 7, False, before) != readings_file(tmp_path, 7, False, after)
    # a calibrated game's readings are another analyser's
    assert readings_file(tmp_path, 7, True, after) != readings_file(tmp_path, 7, False, after)


@pytest.mark.slow
def test_a_replayed_game_is_followed_as_it_was_without_analysing(tmp_path):
    from companion.bench.games import OracleAnalyzer, _settled_truth, follow_video
    from companion.synth.game import render_game
    from companion.track.background import TableReader

    truth = json.loads(Path(render_game(tmp_path / "game", 2, 515151, tier="medium", fps=10,
                                        size=(640, 360), max_frames=3)).read_text(encoding="utf-8"))
    video = tmp_path / "game" / truth["video"]
    oracle = OracleAnalyzer(_settled_truth(truth), 0.2, seed=5)   # fallible: readings differ by table
    path = tmp_path / "kept" / "game.json.gz"

    first = KeptReadings(lambda image, **kwargs: oracle(image), path)
    account, _, _ = follow_video(video, truth["players"], TableReader(first), oracle, finished=False, kept=first)
    first.save()
    assert first.analysed > 0 and account["moves"]

    again = KeptReadings(_never, path)
    replayed, _, _ = follow_video(video, truth["players"], TableReader(again), None, finished=False, kept=again)
    assert again.analysed == 0 and again.replayed == first.analysed
    assert replayed["moves"] == account["moves"]


def test_a_frame_told_other_known_cards_is_read_afresh(tmp_path):
    # a changed tracker may tell the reader other settled cards for a frame read before:
    # the reading kept for that frame answered another question
    path = tmp_path / "game-1.json.gz"
    calls: list[int] = []
    square = [np.array([[0, 0], [10, 0], [10, 20], [0, 20]], float)]
    first = KeptReadings(_counting(calls), path)
    first.frame = 5
    first(np.full((2, 2), 5, np.uint8), known=square)
    first.save()
    again = KeptReadings(_counting(calls), path)
    again.frame = 5
    again(np.full((2, 2), 5, np.uint8), known=square)
    assert again.replayed == 1 and calls == [5]
    again(np.full((2, 2), 6, np.uint8), known=[square[0] + 40])
    again(np.full((2, 2), 7, np.uint8))
    assert again.analysed == 2 and calls == [5, 6, 7]
