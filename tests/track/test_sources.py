"""Sources: folders, video files, HTTP MJPEG on loopback, and the watchdog across drop-outs."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.track.frames import EncodedFrame, full_image
from companion.track.sources import FolderSource, FrameRead, SourceError, open_source
from companion.track.tracker import Tracker
from companion.track.watchdog import watch
from .mjpeg_server import MjpegServer
from .scene import StampedAnalyzer, game_frames, unstamp
from .test_tracker import FIXED, GAME, PLAYERS, expected, summary

TABLES = GAME[:4]


@pytest.fixture(scope="module")
def frames():
    return game_frames(TABLES, still=7, hand_frames=3)


def track(source_frames, analyzer=None):
    """Run a tracker over (index, image) pairs; returns it and its moves."""
    analyzer = analyzer or StampedAnalyzer(TABLES)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    moves = []
    for index, image in source_frames:
        moves += [e.data for e in tracker.feed(index, image) if e.kind == "move"]
    return tracker, moves


def test_folder_is_read_in_name_order_and_a_broken_file_is_one_unreadable_frame(tmp_path, frames):
    for i, f in enumerate(frames):   # JPEGs (decoded lazily) and PNGs (decoded at once)
        name = str(tmp_path / f"f{i:04d}.{'jpg' if i % 2 else 'png'}")
        cv2.imwrite(name, f, [cv2.IMWRITE_JPEG_QUALITY, 95] if i % 2 else [])
    (tmp_path / "f0005.jpg").write_bytes(b"not a jpeg")       # damaged, replaces frame 5
    (tmp_path / "notes.txt").write_text("not a frame")
    seen = list(watch(open_source(str(tmp_path))))
    assert [i for i, _ in seen] == list(range(len(frames)))
    assert full_image(seen[5][1]) is None
    assert [unstamp(img) for i, img in seen if i != 5] == \
        [unstamp(f) for i, f in enumerate(frames) if i != 5]
    tracker, moves = track(seen)
    assert tracker.stats["unreadable"] == 1
    assert summary(moves) == summary(expected(TABLES)["moves"])


def test_a_frame_file_cut_short_is_one_unreadable_frame_not_a_move(tmp_path, frames):
    for i, f in enumerate(frames):
        cv2.imwrite(str(tmp_path / f"f{i:04d}.jpg"), f, [cv2.IMWRITE_JPEG_QUALITY, 95])
    cut = tmp_path / f"f{len(frames) // 2:04d}.jpg"       # written while the camera was cut off
    cut.write_bytes(cut.read_bytes()[:cut.stat().st_size // 2])
    tracker, moves = track(watch(open_source(str(tmp_path))))
    assert tracker.stats["unreadable"] == 1
    assert summary(moves) == summary(expected(TABLES)["moves"])


def test_folder_source_starts_where_asked(tmp_path, frames):
    for i, f in enumerate(frames[:6]):
        cv2.imwrite(str(tmp_path / f"{i}.png"), f)
    seen = list(watch(FolderSource(tmp_path, start=4), first_index=4))
    assert [i for i, _ in seen] == [4, 5]


def test_video_file(tmp_path, frames):
    path = tmp_path / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10,
                             (frames[0].shape[1], frames[0].shape[0]))
    for f in frames:
        writer.write(f)
    writer.release()
    seen = list(watch(open_source(str(path))))
    assert len(seen) == len(frames)
    assert all(isinstance(img, EncodedFrame) for _, img in seen)   # Motion-JPEG stays encoded
    tracker, moves = track(seen)
    assert summary(moves) == summary(expected(TABLES)["moves"])
    # resuming from frame 10 skips exactly the first ten
    assert next(watch(open_source(str(path), start=10), first_index=10))[0] == 10


@pytest.mark.parametrize("spec, message", [
    ("nonexistent/game.mp4", "no such file"),
    ("ftp://example.org/x", "unsupported stream scheme"),
    ("", "empty source"),
    ("http://[::1", "not a stream URL"),
    ("http://127.0.0.1:99999/video", "not a stream URL"),
    ("http://", "names no host"),
])
def test_bad_sources_are_clear_errors(spec, message):
    with pytest.raises(SourceError, match=message):
        open_source(spec)


def test_a_recording_that_cannot_be_opened_fails_at_once(tmp_path):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(SourceError):
        list(watch(open_source(str(bad))))


@pytest.mark.parametrize("content_length", [True, False])
def test_http_mjpeg_stream_on_loopback(frames, content_length):
    with MjpegServer(frames, content_length=content_length) as server:
        seen = []
        for index, image in watch(open_source(server.url), max_offline=2):
            seen.append((index, image))
            if len(seen) == len(frames):
                break
    assert [unstamp(img) for _, img in seen] == [unstamp(f) for f in frames]
    tracker, moves = track(seen)
    assert summary(moves) == summary(expected(TABLES)["moves"])


def test_mjpeg_camera_dropping_out_and_coming_back_is_the_same_game(frames):
    statuses = []
    # the connection drops every 9 frames and the app refuses two reconnections
    with MjpegServer(frames, drop_after=9, refuse=2) as server:
        seen = []
        for index, image in watch(open_source(server.url), max_offline=5, backoff=(0.01, 0.05),
                                  on_status=statuses.append):
            seen.append((index, image))
            if len(seen) == len(frames):
                break
        assert server.connections >= len(frames) // 9 + 2
    assert [i for i, _ in seen] == list(range(len(frames)))      # indices never restart
    assert any(not s.online for s in statuses) and any(s.online for s in statuses)
    tracker, moves = track(seen)
    assert summary(moves) == summary(expected(TABLES)["moves"])


def test_snapshot_url_is_polled(frames):
    with MjpegServer(frames[:3]) as server:
        url = server.url.replace("/video", "/shot.jpg")
        got = [unstamp(img) for _, (_, img) in zip(range(3), watch(open_source(url)))]
    assert got == [unstamp(f) for f in frames[:3]]


class FlakyCamera:
    """A live source that fails to read at given frames and to reopen a few times."""
    live = True
    name = "flaky camera"

    def __init__(self, frames, fail_at=(), refuse=0):
        self.frames, self.fail_at, self.refuse = frames, set(fail_at), refuse
        self.pos = 0
        self.opens = 0

    def open(self):
        self.opens += 1
        if self.opens > 1 and self.refuse > 0:
            self.refuse -= 1
            raise SourceError("no such device")

    def read(self):
        if self.pos in self.fail_at:
            self.fail_at.discard(self.pos)
            return FrameRead(False)
        if self.pos >= len(self.frames):
            return FrameRead(False)
        self.pos += 1
        return FrameRead(True, self.frames[self.pos - 1])

    def close(self):
        pass


def test_watchdog_gives_up_after_max_offline_and_says_so():
    clock = iter(np.arange(0, 1000, 0.5)).__next__
    camera = FlakyCamera([np.zeros((8, 8, 3), np.uint8)] * 2, refuse=10 ** 6)
    statuses = []
    with pytest.raises(SourceError, match="offline for more than 5 s"):
        for _ in watch(camera, max_offline=5, sleep=lambda s: None, clock=clock,
                       on_status=statuses.append):
            pass
    assert statuses and not statuses[0].online


def test_camera_drop_mid_move_loses_nothing(frames):
    # the camera vanishes while a hand is over the table and again on a still table
    camera = FlakyCamera(frames, fail_at=(8, 20), refuse=3)
    seen = list(zip(range(len(frames)), watch(camera, sleep=lambda s: None, max_offline=60)))
    assert [i for i, _ in seen] == list(range(len(frames)))
    tracker, moves = track([pair for _, pair in seen])
    assert summary(moves) == summary(expected(TABLES)["moves"])


# Two turns made while the camera was away: GAP[1] is never filmed.
GAP = [[["M-blue-green", "M-green-yellow"]],
       [["M-blue-green", "M-green-yellow", "M-yellow-blue"]],
       [["M-blue-green", "M-green-yellow", "M-yellow-blue", "M-blue-red"]],
       [["M-blue-green", "M-green-yellow", "M-yellow-blue", "M-blue-red"], ["H-orange"]]]
GAP_PLAYERS = ["Ann", "Ben", "Cy"]


def _gap_game(unseen=(1,), still=7, hand=3):
    """The frames of GAP with the tables in `unseen` (and the hands laying them) cut out
    by a camera drop-out; returns the frames and where the cut is."""
    filmed = game_frames(GAP, still=still, hand_frames=hand)
    starts = [0] + [still + k * (hand + still) for k in range(len(GAP) - 1)] + [len(filmed)]
    frames, cut_at = [], None
    for k in range(len(GAP)):
        if k in unseen:
            cut_at = len(frames) if cut_at is None else cut_at
        else:
            frames += filmed[starts[k]:starts[k + 1]]
    return frames, cut_at


def test_two_moves_made_while_the_camera_was_away_are_settled_in_turn_order():
    from companion.game.referee import judge_record
    frames, cut_at = _gap_game()
    # the camera drops just when the second table would be filmed and refuses to come
    # back for a while; meanwhile two cards are laid
    camera = FlakyCamera(frames, fail_at=(cut_at,), refuse=3)
    tracker = Tracker(StampedAnalyzer(GAP), GAP_PLAYERS, settings=FIXED)
    statuses = []

    def on_status(status):    # as `companion track` tells its tracker
        statuses.append(status)
        if not status.online:
            tracker.source_offline()
    events, seen = [], []
    for _, (index, image) in zip(frames, watch(camera, sleep=lambda s: None, max_offline=60,
                                               on_status=on_status)):
        seen.append((index, image))
        events += tracker.feed(index, image)
    assert any(not s.online for s in statuses) and any(s.online for s in statuses)
    moves = [e.data for e in events if e.kind == "move"]
    want = judge_record({"players": GAP_PLAYERS, "frames": [{"table": t} for t in GAP]})
    assert summary(moves) == summary(want["moves"])
    assert not tracker.desync
    assert [e.kind for e in events].count("table") == len(GAP)   # each unseen table, in turn
    before_gap = max(i for i, img in seen if unstamp(img) == 0)
    after_gap = min(i for i, img in seen if unstamp(img) == 2)
    for move in moves[:2]:
        assert move["after_gap"] == {"cards": 2, "order_sure": True}
        assert move["evidence"]["before"] <= before_gap < after_gap <= move["evidence"]["after"]
        assert "gap" in move["reason"]
    assert "after_gap" not in moves[2]


def test_companion_track_reads_an_rtsp_stream_through_opencv(tmp_path):
    """`companion track rtsp://...` on a camera that drops the connection mid-game: the game
    goes on, every move is printed as it settles, and when the camera stays away the
    command says so in one line with the game saved."""
    import io
    import json
    from companion.cli import build_parser
    from companion.track import run as track_run
    from .rtsp_server import RtspServer
    tables = GAME[:4]
    # a live source is tracked at 30 fps: tables stay still for half a second
    frames = game_frames(tables, still=16, hand_frames=3)
    state = tmp_path / "state.json"
    with RtspServer(frames, drop_after=25) as server:
        args = build_parser().parse_args(["track", server.url, "--follow", "--players", ",".join(PLAYERS),
                                          "--state", str(state), "--max-offline", "1"])
        out = io.StringIO()
        with pytest.raises(track_run.TrackError, match="offline for more than 1 s"):
            track_run.main(args, analyze=StampedAnalyzer(tables), out=out)
        assert server.connections >= 2 and server.next == len(frames)
        assert {"DESCRIBE", "SETUP", "PLAY"} <= set(server.requests)
    moves = [json.loads(line) for line in out.getvalue().splitlines()]
    assert summary(moves) == summary(expected(tables)["moves"])
    saved = json.loads(state.read_text())
    assert summary(saved["moves"]) == summary(moves)
    assert saved["stats"]["frames"] == len(frames)


def test_camera_index_goes_through_videocapture_and_survives_a_drop_out(monkeypatch, frames):
    """No camera on the test machine: cv2.VideoCapture is a fake device that stops
    delivering at frame 8 and is busy at the first reopening."""
    from companion.track import sources
    opened, position, drops = [], [0], {8}

    class FakeDevice:
        def __init__(self, target, *args):
            opened.append(target)
            self.ok = len(opened) != 2          # the device is busy once after the drop

        def isOpened(self):
            return self.ok

        def read(self):
            k = position[0]
            if k in drops or k >= len(frames):
                drops.discard(k)
                return False, None
            position[0] += 1
            return True, frames[k]

        def get(self, prop):
            return 0.0

        def set(self, prop, value):
            return False

        def release(self):
            pass

    monkeypatch.setattr(sources.cv2, "VideoCapture", FakeDevice)
    statuses = []
    source = open_source("0")
    assert source.live and source.name == "camera 0"
    seen = [pair for _, pair in zip(frames, watch(source, sleep=lambda s: None, max_offline=60,
                                                  on_status=statuses.append))]
    assert opened == [0, 0, 0]                                   # opened, busy, reopened
    assert [i for i, _ in seen] == list(range(len(frames)))
    assert [unstamp(img) for _, img in seen] == [unstamp(f) for f in frames]
    assert [s.online for s in statuses] == [False, True]
    tracker, moves = track(seen)
    assert summary(moves) == summary(expected(TABLES)["moves"])


def test_a_file_that_is_no_video_is_one_line_on_stderr(tmp_path):
    import subprocess
    import sys
    fake = tmp_path / "fake.avi"
    fake.write_text("hello\n")
    proc = subprocess.run([sys.executable, "-m", "companion", "track", str(fake), "--state", str(tmp_path / "s.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error:") and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_recording_that_ends_on_a_still_table_read_twice_settles_it(tmp_path):
    # the last table is filmed just long enough for two of the three readings a table is
    # given (nothing moves after it to say that two were enough): its turn is not lost
    from companion.track.run import follow_game
    frames = game_frames(TABLES, still=7, hand_frames=3)[:-2]
    for i, f in enumerate(frames):
        cv2.imwrite(str(tmp_path / f"f{i:04d}.png"), f)
    analyzer = StampedAnalyzer(TABLES)
    tracker, moves = Tracker(analyzer, PLAYERS, settings=FIXED), []
    assert follow_game(str(tmp_path), tracker, on_move=moves.append)
    assert analyzer.calls % FIXED.readings == 2
    assert summary(moves) == summary(expected(TABLES)["moves"])
