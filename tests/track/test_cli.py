"""`companion track` end to end on a folder of frames: output, evidence, stop and resume."""
from __future__ import annotations

import io
import json

import cv2
import pytest

from companion.cli import build_parser, main as cli_main
from companion.track import run as track_run
from .scene import StampedAnalyzer, game_frames
from .test_tracker import GAME, PLAYERS, expected, summary


@pytest.fixture(scope="module")
def game_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("game")
    for i, f in enumerate(game_frames(GAME, still=7, hand_frames=3)):
        cv2.imwrite(str(folder / f"frame{i:04d}.png"), f)
    return folder


def track(argv, analyzer=None):
    args = build_parser().parse_args(["track", *argv])
    out = io.StringIO()
    code = track_run.main(args, analyze=analyzer or StampedAnalyzer(GAME), out=out)
    return code, out.getvalue()


def test_json_account_is_the_referees(game_dir, tmp_path):
    code, out = track([str(game_dir), "--players", ",".join(PLAYERS), "--json",
                       "--state", str(tmp_path / "s.json")])
    account = json.loads(out)
    want = expected(GAME)
    assert code == 0
    assert summary(account["moves"]) == summary(want["moves"])
    assert account["piles"] == want["piles"] and account["scores"] == want["scores"]
    assert account["winners"] == want["winners"]
    for move in account["moves"]:
        assert isinstance(move["frame"], int) and move["cards"]
        assert move["evidence"]["before"] < move["evidence"]["after"]


def test_follow_prints_each_move_as_a_json_line_with_evidence(game_dir, tmp_path):
    code, out = track([str(game_dir), "--players", ",".join(PLAYERS), "--follow",
                       "--evidence", str(tmp_path / "ev")])
    lines = [json.loads(line) for line in out.splitlines()]
    assert summary(lines) == summary(expected(GAME)["moves"])
    for move in lines:
        for path in move["stills"]:
            assert cv2.imread(path) is not None
    assert (tmp_path / "ev" / "track-state.json").exists()
    assert len(list((tmp_path / "ev").glob("move-*-after-*.jpg"))) == len(lines)


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), SystemExit(143)], ids=["ctrl-c", "sigterm"])
def test_stopped_game_resumes_with_nothing_lost(game_dir, tmp_path, stop):
    state = str(tmp_path / "state.json")
    straight = json.loads(track([str(game_dir), "--json", "--state", state])[1])

    class StopsOnce(StampedAnalyzer):
        def __call__(self, image):
            if self.calls == 7:           # stopped in the middle of reading the third table
                self.calls += 1
                raise stop               # (SIGTERM arrives as SystemExit, see companion.cli.main)
            return super().__call__(image)
    if isinstance(stop, SystemExit):
        with pytest.raises(SystemExit) as exited:
            track([str(game_dir), "--state", state], StopsOnce(GAME))
        assert exited.value.code == 143
    else:
        code, _ = track([str(game_dir), "--state", state], StopsOnce(GAME))
        assert code == 130
    saved = json.loads(open(state).read())
    assert 0 < len(saved["moves"]) < len(straight["moves"])
    code, out = track([str(game_dir), "--json", "--state", state, "--resume"])
    resumed = json.loads(out)
    assert resumed["moves"] == straight["moves"]
    assert resumed["scores"] == straight["scores"]
    assert resumed["frames"]["seen"] == straight["frames"]["seen"]


def test_usage_errors_are_one_line(game_dir, tmp_path, capsys):
    assert cli_main(["track", str(game_dir), "--players", "Ann"]) == 2
    assert cli_main(["track", str(tmp_path / "none.mp4")]) == 2
    assert cli_main(["track", str(game_dir), "--resume", "--state", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("error: ") for line in err)
    assert "no saved game" in err[2]


def test_dashboard_feed_gives_settled_tables_and_annotated_pictures(game_dir):
    from companion.track import open_table_feed
    feed = open_table_feed(str(game_dir), analyze=StampedAnalyzer(GAME), realtime=False,
                           picture_fps=1000)
    events = list(feed.events())
    from companion.game.chains import table_multiset
    from companion.game.rules import as_table
    tables = [table_multiset(as_table(e.table)) for e in events if e.table is not None]
    assert tables == [table_multiset(as_table(t)) for t in GAME]
    pictures = [e.jpeg for e in events if e.jpeg]
    assert len(pictures) > len(GAME) and cv2.imdecode(
        __import__("numpy").frombuffer(pictures[-1], "uint8"), cv2.IMREAD_COLOR) is not None
    indices = [e.index for e in events]
    assert indices == sorted(indices)


class _Sizes:
    """The stamped analyser, noting the size of every picture it is given."""

    def __init__(self):
        self.inner = StampedAnalyzer(GAME)
        self.shapes = []

    def __call__(self, image):
        self.shapes.append(image.shape[:2])
        return self.inner(image)


@pytest.mark.parametrize("regions", [False, True])
def test_only_regions_reads_parts_of_pictures(game_dir, tmp_path, regions):
    seen = _Sizes()
    argv = [str(game_dir), "--players", ",".join(PLAYERS), "--json", "--state", str(tmp_path / "s.json")]
    code, out = track(argv + (["--regions"] if regions else []), analyzer=seen)
    full = cv2.imread(str(next(game_dir.iterdir()))).shape[:2]
    assert code == 0 and summary(json.loads(out)["moves"]) == summary(expected(GAME)["moves"])
    assert any(shape != full for shape in seen.shapes) == regions


def test_a_run_that_reads_no_picture_leaves_the_saved_game_as_it_was(game_dir, tmp_path):
    state = tmp_path / "state.json"
    track([str(game_dir), "--json", "--state", str(state)])
    before = state.read_bytes()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(track_run.TrackError):
        track([str(empty), "--state", str(state)])            # a wrong folder: nothing to read
    unreadable = tmp_path / "unreadable"
    unreadable.mkdir()
    (unreadable / "frame0001.jpg").write_bytes(b"not a picture")
    with pytest.raises(track_run.TrackError, match="none of its 1 frames is a picture"):
        track([str(unreadable), "--state", str(state)])
    assert state.read_bytes() == before


@pytest.mark.parametrize("damage", [
    lambda s: [s],
    lambda s: {**s, "moves": "x"},
    lambda s: {**s, "tracks": [1, 2, 3]},
    lambda s: {k: v for k, v in s.items() if k != "history"},
])
def test_a_damaged_saved_game_is_refused_in_one_line_and_kept(game_dir, tmp_path, damage):
    state = tmp_path / "state.json"
    track([str(game_dir), "--json", "--state", str(state)])
    state.write_text(json.dumps(damage(json.loads(state.read_text()))))
    before = state.read_bytes()
    with pytest.raises(track_run.TrackError, match="is not a game this tracker saved"):
        track([str(game_dir), "--state", str(state), "--resume"])
    assert state.read_bytes() == before
