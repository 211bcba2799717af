"""`track` over a tiny rendered game: hands, shadows, shake, drift, a real video file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.bench.games import OracleAnalyzer, _settled_truth, follow_video, judge_game
from companion.game.deck import load_deck

pytestmark = pytest.mark.slow
MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    from companion.synth.game import render_game
    folder = tmp_path_factory.mktemp("rendered")
    path = render_game(folder, 2, 424242, tier="medium", fps=10, size=(640, 360), max_frames=4)
    truth = json.loads(Path(path).read_text(encoding="utf-8"))
    return folder / truth["video"], truth


def test_tracker_logic_on_a_rendered_video_reads_only_still_tables(game):
    import cv2
    from companion.track.gate import ChangeGate
    video, truth = game
    settled = _settled_truth(truth)
    oracle = OracleAnalyzer(settled)
    read: list[int] = []

    def analyze(image):
        read.append(oracle.frame)
        return oracle(image)
    account, _, frames = follow_video(video, truth["players"], analyze, oracle, finished=False)
    result = judge_game(truth, account, load_deck())
    assert frames == len(truth["frames"])
    assert result["moves"] >= 3 and result["right"] == result["moves"]
    assert result["phantom"] == 0 and result["scores_right"]
    # Every frame read shows a still table with no hand: a settled frame, or one the
    # renderer labels otherwise only because the next hand had not come into view yet.
    gate = ChangeGate()
    folder = video.parent
    for index in read:
        if index in settled:
            continue
        last = max(i for i in settled if i < index)
        now, then = (gate.shrink(cv2.imread(str(folder / truth["frames"][i]["file"])))
                     for i in (index, last))
        assert not gate.differs(now, then), f"frame {index} was read while something moved"


@pytest.mark.skipif(not any(MODELS.glob("*.joblib")), reason="no trained models (companion train)")
def test_companion_track_with_the_real_analyzer_on_a_rendered_video(game, tmp_path):
    """The whole command as a user runs it.  How often the vision reads right is the
    bench's business; what the tracker owes is never to invent a move."""
    import io
    from companion.cli import build_parser
    from companion.track.run import main
    video, truth = game
    args = build_parser().parse_args(["track", str(video), "--json", "--players", ",".join(truth["players"]),
                                      "--state", str(tmp_path / "state.json")])
    out = io.StringIO()
    assert main(args, out=out) == 0
    account = json.loads(out.getvalue())
    assert set(account) >= {"moves", "piles", "scores", "winners"}
    result = judge_game(truth, account, load_deck())
    assert result["phantom"] == 0
