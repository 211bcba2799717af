"""The live loop: a TableFeed's events become stored tables, pictures and the desync flag."""
import threading
import time

import pytest

from companion.web.feed import (FeedEvent, FeedUnavailable, FilmFeed, RecordFeed, TableFeed,
                                 UploadFeed, open_feed)

from .webhelpers import referee_session


class ScriptedFeed:
    """A feed that plays a fixed list of events, as the tracker would."""

    def __init__(self, events):
        self.script = events
        self.start_after = None
        self.closed = threading.Event()

    def events(self, start_after=-1):
        self.start_after = start_after
        for event in self.script:
            if event.index > start_after and not self.closed.is_set():
                yield event

    def close(self):
        self.closed.set()


def wait(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_feed_loop_stores_tables_shows_pictures_and_flags_desync(service):
    script = [FeedEvent(10, table=[["M-red-blue"]], jpeg=b"\xff\xd8a\xff\xd9"),
              FeedEvent(11, jpeg=b"\xff\xd8b\xff\xd9", desync=True),
              FeedEvent(12, table=[["M-red-blue", "M-blue-green"]]),
              FeedEvent(13, table=[["M-red-blue", "M-blue-green", "T-green"]], finished=True)]
    feed = ScriptedFeed(script)
    assert isinstance(feed, TableFeed)
    desync_seen = []
    q = service.bus.subscribe()
    game = service.new_game(["Ann", "Ben"], "test", feed)
    wait(lambda: service.store.game(game.id).finished_at is not None)
    while not q.empty():
        message = q.get()
        desync_seen.append('"desync": true' in message)
    view = service.view(service.store.game(game.id))
    assert [f.source_frame for f in view.frames] == [10, 12, 13]
    assert [m["card"] for m in view.moves if m["card"]] == ["M-blue-green", "T-green"]
    assert view.finished and any(desync_seen)
    # the table settled after a picture-only event keeps that camera picture as its evidence
    evidence = service.evidence_dir / game.id / view.frames[1].picture
    assert evidence.read_bytes() == b"\xff\xd8b\xff\xd9"
    assert service.video.latest()[1].startswith(b"\xff\xd8")


def test_a_resumed_feed_starts_after_the_last_stored_frame(service):
    game = service.new_game(["Ann", "Ben"], "test")
    service.observe(game, [["M-red-blue"]], source_frame=4)
    service.observe(game, [["M-red-blue", "M-blue-green"]], source_frame=9)
    feed = ScriptedFeed([FeedEvent(9, table=[["M-red-blue", "M-blue-green"]]),
                         FeedEvent(10, table=[["M-red-blue", "M-blue-green", "T-green"]])])
    service.start_feed(game, feed)
    wait(lambda: len(service.view(service.store.game(game.id)).frames) == 3)
    assert feed.start_after == 9


def test_a_table_the_deck_cannot_hold_is_a_desync_not_the_end_of_the_feed(service):
    feed = ScriptedFeed([FeedEvent(0, table=[["M-red-blue"]]),
                         FeedEvent(1, table=[["M-red-blue", "M-pink-blue"]]),
                         FeedEvent(2, table=[["M-red-blue", "M-blue-green"]])])
    game = service.new_game(["Ann", "Ben"], "test", feed)
    wait(lambda: len(service.view(service.store.game(game.id)).frames) == 2
         and not service.tracker_desync)
    assert service.feed_error is None


def test_record_feed_replays_at_its_pace_and_stops_when_closed(sample_record):
    feed = RecordFeed(sample_record, pace=0.01, first_delay=0)
    events = list(feed.events())
    assert [e.table for e in events] == [f["table"] for f in sample_record["frames"]]
    assert all(e.jpeg[:2] == b"\xff\xd8" for e in events)
    resumed = list(RecordFeed(sample_record, pace=0.0).events(start_after=10))
    assert resumed[0].table is None and [e.index for e in resumed] == [10, 11, 12]
    slow = RecordFeed(sample_record, pace=30)
    started = time.monotonic()
    threading.Timer(0.1, slow.close).start()
    assert list(slow.events()) == [] and time.monotonic() - started < 2


@pytest.mark.parametrize("record, message", [({}, "frames"), ({"frames": [{"x": 1}]}, "table")])
def test_record_feed_refuses_bad_records(record, message):
    with pytest.raises(FeedUnavailable, match=message):
        RecordFeed(record)


def test_open_feed_by_source(tmp_path, sample_record):
    import json
    assert isinstance(open_feed("upload"), UploadFeed) and list(open_feed("").events()) == []
    path = tmp_path / "g.json"
    path.write_text(json.dumps(sample_record))
    assert isinstance(open_feed(str(path)), RecordFeed)
    with pytest.raises(FeedUnavailable, match="cannot read game record"):
        open_feed(str(tmp_path / "missing.json"))


def test_a_rendered_film_settles_each_record_table_at_its_first_still_frame(tmp_path):
    import json
    from companion.synth.game import render_game
    truth_path = render_game(tmp_path / "film", ["Ann", "Ben"], 3, tier="easy", fps=10,
                             size=(160, 90), max_frames=3, video=False)
    truth = json.loads(truth_path.read_text())
    feed = FilmFeed(truth_path, speed=50)
    events = list(feed.events())
    assert [e.index for e in events] == list(range(len(truth["frames"])))
    assert all(e.jpeg[:2] == b"\xff\xd8" for e in events)
    settled = [(e.index, e.table) for e in events if e.table is not None]
    assert settled == [(r["first_video_frame"], truth["record"]["frames"][r["record_frame"]]["table"])
                       for r in truth["record_frames"]]
    resumed = list(FilmFeed(truth_path, speed=50).events(start_after=settled[1][0]))
    assert resumed[0].index == settled[1][0] + 1
    with pytest.raises(FeedUnavailable):
        FilmFeed(tmp_path / "nothing.json")


def test_after_a_restart_the_video_shows_the_games_last_still(service):
    game = service.new_game(["Ann", "Ben"], "upload")
    service.observe(game, [["M-red-blue"]], jpeg=b"\xff\xd8one\xff\xd9")
    service.observe(game, [["M-red-blue", "M-blue-green"]], jpeg=b"\xff\xd8two\xff\xd9")
    service.video.put(b"")
    service.show_last_picture(game)
    assert service.video.latest()[1] == b"\xff\xd8two\xff\xd9"


def test_cameras_streams_and_videos_go_to_the_tracker_with_the_games_players(monkeypatch):
    import companion.track as track
    calls = []

    def fake_open_table_feed(source, **options):
        calls.append((source, options))
        return UploadFeed()
    monkeypatch.setattr(track, "open_table_feed", fake_open_table_feed)
    for source in ("0", "http://192.168.1.20:8080/video", "/videos/game.mp4"):
        assert isinstance(open_feed(source, players=["Ann", "Ben"], profile="p.json"), UploadFeed)
    assert calls == [(s, {"players": ["Ann", "Ben"], "profile": "p.json"})
                     for s in ("0", "http://192.168.1.20:8080/video", "/videos/game.mp4")]


def test_set_up_page_starts_a_camera_game_through_the_tracker(client, service, monkeypatch):
    import companion.track as track
    script = [FeedEvent(0, table=[["M-red-blue"]], jpeg=b"\xff\xd8cam\xff\xd9")]
    monkeypatch.setattr(track, "open_table_feed", lambda source, **o: ScriptedFeed(script))
    token = referee_session(client)
    response = client.post("/setup/new-game", data={"csrf_token": token, "player": ["Ann", "Ben"],
                                                    "source_kind": "camera", "source_camera": "0"})
    assert response.status_code == 302
    game = service.game()
    assert game.source == "0"
    wait(lambda: service.view(service.store.game(game.id)).frames)
    assert service.video.latest()[1] == b"\xff\xd8cam\xff\xd9"


def test_a_failing_source_is_reported_not_silent(service):
    class Broken:
        def events(self, start_after=-1):
            yield FeedEvent(0, table=[["M-red-blue"]])
            raise RuntimeError("camera driver crashed")

        def close(self):
            pass
    game = service.new_game(["Ann", "Ben"], "test", Broken())
    service.wait_for_feed(timeout=5)
    assert service.feed_error == "RuntimeError: camera driver crashed"
    assert len(service.view(service.store.game(game.id)).frames) == 1   # what came before is kept


def test_the_referee_can_reopen_a_source_that_stopped(client, service, monkeypatch):
    import companion.track as track
    opened = []

    class Dies:
        def events(self, start_after=-1):
            opened.append(start_after)
            if len(opened) == 1:
                yield FeedEvent(0, table=[["M-red-blue"]])
                raise OSError("camera unplugged")
            yield FeedEvent(1, table=[["M-red-blue", "M-blue-green"]])

        def close(self):
            pass
    monkeypatch.setattr(track, "open_table_feed", lambda source, **o: Dies())
    token = referee_session(client)
    client.post("/setup/new-game", data={"csrf_token": token, "player": ["Ann", "Ben"],
                                         "source_kind": "camera", "source_camera": "0"})
    service.wait_for_feed(timeout=5)
    assert service.feed_error == "camera unplugged"
    page = client.get("/setup").data.decode()
    assert "camera unplugged" in page and "/setup/restart-source" in page
    assert client.post("/setup/restart-source", data={"csrf_token": token}).status_code == 302
    service.wait_for_feed(timeout=5)
    assert opened == [-1, 0] and service.feed_error is None
    assert [m["card"] for m in service.view(service.game()).moves] == ["M-blue-green"]


def _corrections(service, game):
    """The stored corrections as (frame index of their target, from, to)."""
    view = service.view(service.store.game(game.id))
    at = {f.seq: f.index for f in view.frames}
    return [(at[e["data"]["target"]], e["data"]["from"], e["data"]["to"])
            for e in view.log if e["kind"] == "correction"]


def test_a_camera_correction_names_the_table_the_tracker_meant_even_after_a_refused_one(
        service, caplog):
    def table(number, index, chains):
        return FeedEvent(index, table=chains, table_number=number)

    def correction(number, since, nth, wrong, right):
        return FeedEvent(12, correction={"table_number": number, "since": since, "nth": nth,
                                         "from": wrong, "to": right})
    # two tables at a frame each (as after a camera drop-out); the deck has no pink cards,
    # so the first of each pair is refused
    feed = ScriptedFeed([table(0, 0, [["M-red-blue"]]),
                         table(1, 5, [["M-red-blue"], ["M-pink-blue"]]),
                         table(2, 5, [["M-red-blue", "M-blue-green"]]),
                         table(3, 9, [["M-red-blue", "M-blue-green", "T-green"], ["M-pink-blue"]]),
                         table(4, 9, [["M-red-blue", "M-blue-green", "T-green"]]),
                         # laid in table 2: the 2nd table sent at frame 5
                         correction(2, 5, 1, "M-blue-green", "M-blue-yellow"),
                         # laid in table 3, which was refused: no stored table may take it
                         correction(3, 9, 0, "T-green", "T-yellow")])
    caplog.set_level("WARNING", logger="companion.web.service")
    game = service.new_game(["Ann", "Ben"], "test", feed)
    service.wait_for_feed(timeout=5)
    view = service.view(service.store.game(game.id))
    assert [f.source_frame for f in view.frames] == [0, 5, 9]
    assert _corrections(service, game) == [(1, "M-blue-green", "M-blue-yellow")]
    assert view.frames[2].table == [["M-red-blue", "M-blue-yellow", "T-green"]]
    warnings = [r.getMessage() for r in caplog.records if "correction not applied" in r.getMessage()]
    assert len(warnings) == 1 and "table 3 " in warnings[0]


def test_after_a_restart_a_correction_only_names_tables_the_new_run_sent(service):
    game = service.new_game(["Ann", "Ben"], "test")

    class Restarted:
        """The tracker's feed run twice: each run numbers its tables from 0."""
        runs = 0

        def events(self, start_after=-1):
            Restarted.runs += 1
            if Restarted.runs == 1:
                yield FeedEvent(0, table=[["M-red-blue"]], table_number=0)
                yield FeedEvent(3, table=[["M-red-blue", "M-blue-green"]], table_number=1)
                raise OSError("camera unplugged")
            assert start_after == 3
            yield FeedEvent(6, table=[["M-red-blue", "M-blue-green", "T-green"]], table_number=0)
            # this run never sent a table 1: the first run's table 1 must not be taken for it
            yield FeedEvent(8, correction={"table_number": 1, "since": 3, "nth": 0,
                                           "from": "M-blue-green", "to": "M-blue-yellow"})
            yield FeedEvent(8, correction={"table_number": 0, "since": 6, "nth": 0,
                                           "from": "T-green", "to": "T-yellow"})

        def close(self):
            pass
    for _ in range(2):
        service.start_feed(game, Restarted())
        service.wait_for_feed(timeout=5)
    assert service.feed_error is None and Restarted.runs == 2
    assert _corrections(service, game) == [(2, "T-green", "T-yellow")]


def test_a_table_the_tracker_judges_again_is_retabled_by_its_number_and_can_be_undone(
        service, caplog):
    seen = [[["H-red"]], [["H-red"], ["T-purple"]], [["H-red", "M-red-purple"], ["T-purple"]],
            [["H-orange"]]]
    joined = ["H-red", "M-red-purple", "T-purple"]

    def retable(number, since):
        return FeedEvent(40, correction={"table_number": number, "since": since, "nth": 0,
                                         "table": [joined], "joined": joined})
    feed = ScriptedFeed([FeedEvent(10 * k, table=t, table_number=k) for k, t in enumerate(seen)]
                        + [retable(2, 20),
                           retable(7, 70)])     # a table this run never sent: not applied
    caplog.set_level("WARNING", logger="companion.web.service")
    game = service.new_game(["Ann", "Ben"], "test", feed)
    service.wait_for_feed(timeout=5)
    view = service.view(service.store.game(game.id))
    (event,) = [e for e in view.log if e["kind"] == "retable"]
    assert event["data"]["target"] == view.frames[2].seq and "H-red M-red-purple T-purple" in \
        event["data"]["reason"]
    assert view.frames[2].table == [joined] and view.frames[2].observed == seen[2]
    # Ben completed the snake and collected it; not Ann taking two snakes
    assert [(m["player"], m["action"], m["legal"], (m["collected"] or {}).get("player"))
            for m in view.moves if m["frame"] >= 2] == [
        ("Ben", "complete", True, None), ("Ben", "collect", True, "Ben"), ("Ann", "new", True, None)]
    assert view.scores["Ben"] == {"cards": 3, "snakes": 1, "longest": 3}
    assert any("correction not applied" in r.getMessage() and "table 7 " in r.getMessage()
               for r in caplog.records)
    # undone like any other change: the camera's tables are judged as they were read
    back = service.undo(service.store.game(game.id), event["seq"], "the camera was right")
    assert back.frames[2].table == seen[2] and back.scores["Ben"]["cards"] == 0
    assert "retable" in [o["kind"] for o in service.moves_json(service.store.game(game.id))["overrides"]]


def test_a_table_the_tracker_put_in_is_stored_before_its_number_and_named_by_its_own_after(
        service):
    # the camera sent H-red still there at table 1, then told that H-red had gone before it
    seen = [[["M-blue-green"], ["H-red"]], [["M-blue-green", "M-green-yellow"], ["H-red"]],
            [["M-blue-green", "M-green-yellow", "M-yellow-red"]]]
    feed = ScriptedFeed([FeedEvent(10 * k, table=t, table_number=k) for k, t in enumerate(seen[:2])] + [
        FeedEvent(25, correction={"table_number": 1, "since": 10, "nth": 0, "gone": ["H-red"],
                                  "table": [["M-blue-green", "M-green-yellow"]],
                                  "before": [["M-blue-green"]], "before_frame": 5,
                                  "before_number": 2}),
        FeedEvent(25, table=seen[2], table_number=3),
        # later the tracker judges the table it put in again: named by its number
        FeedEvent(30, correction={"table_number": 2, "since": 25, "nth": 0, "gone": ["M-blue-green"],
                                  "table": []})])
    game = service.new_game(["Ann", "Ben"], "test", feed)
    service.wait_for_feed(timeout=5)
    view = service.view(service.store.game(game.id))
    retable, again = [e for e in view.log if e["kind"] == "retable"]
    assert "H-red" in retable["data"]["reason"] and "frame 5" in retable["data"]["reason"]
    assert [(f.seq == retable["seq"], f.inserted, f.source_frame) for f in view.frames] == [
        (False, False, 0), (True, True, 5), (False, False, 10), (False, False, 25)]
    assert [f.table for f in view.frames[1:3]] == [[], [["M-blue-green", "M-green-yellow"]]]
    assert again["data"]["target"] == retable["seq"] == view.frames[1].seq
    assert view.frames[1].retable == again["seq"] and view.frames[1].observed == [["M-blue-green"]]
