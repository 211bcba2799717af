"""The tracker as the dashboard's feed, seen through the web app's test client."""
from __future__ import annotations

import cv2

from companion.track import open_table_feed
from companion.web.app import create_app
from ..web import conftest as web
from .scene import StampedAnalyzer, game_frames, unstamp
from .test_sources import GAP, GAP_PLAYERS, _gap_game
from .test_tracker import (FROM_START, GAME, PLAYERS, TAKEN_ALONE, TAKEN_WITH_A_CARD, _identity,
                           summary)

service = web.service     # the dashboard's service fixture, as its own tests use it


def write_frames(folder, frames):
    folder.mkdir()
    for i, f in enumerate(frames):
        cv2.imwrite(str(folder / f"frame{i:04d}.png"), f)
    return folder


class MisreadWhenLaid(StampedAnalyzer):
    """Every reading of the second table sees the new card's yellow end as orange."""

    def __call__(self, image):
        data = super().__call__(image)
        if unstamp(image) == 1:
            for card in data["cards"]:
                if card["colours"] == ["green", "yellow"]:
                    card["colours"] = ["green", "orange"]
        return data


def follow(service, folder, players, analyzer):
    feed = open_table_feed(str(folder), players=players, analyze=analyzer, realtime=False,
                           picture_fps=0)
    game = service.new_game(players, str(folder), feed)
    service.wait_for_feed(timeout=60)
    assert service.feed_error is None
    return create_app(service, testing=True).test_client(), game


def test_a_card_the_tracker_corrects_is_corrected_in_the_dashboards_history(service, tmp_path):
    folder = write_frames(tmp_path / "game", game_frames(GAME, still=7, hand_frames=3))
    client, game = follow(service, folder, PLAYERS, MisreadWhenLaid(GAME))
    moves = client.get("/api/moves").get_json()
    laid = [m for m in moves["moves"] if m["card"]]
    # the first move was announced as the misread card; the history now shows the right one
    assert _identity(laid[0]["card"]) == "M-yellow-green" and laid[0]["legal"]
    corrections = [o for o in moves["overrides"] if o["kind"] == "correction"]
    assert len(corrections) == 1
    data = corrections[0]["data"]
    assert (_identity(data["from"]), _identity(data["to"])) == ("M-orange-green", "M-yellow-green")
    assert "camera" in data["reason"]
    # the correction names the table the card was laid in, and everything after it follows
    view = service.view(service.store.game(game.id))
    target = next(f for f in view.frames if f.seq == data["target"])
    assert target.index == 1 and any("M-green-orange" in chain or "M-orange-green" in chain
                                      for chain in target.observed)
    scores = client.get("/api/scores").get_json()
    from companion.game.referee import judge_record
    want = judge_record({"players": PLAYERS, "frames": [{"table": t} for t in GAME]})
    assert scores["scores"] == want["scores"] and scores["winners"] == want["winners"]


def test_moves_made_during_a_drop_out_reach_the_dashboard_one_table_each(service):
    from .rtsp_server import RtspServer
    frames, cut_at = _gap_game(still=16)     # a live source is tracked at 30 fps
    with RtspServer(frames, drop_after=cut_at) as server:   # the camera drops at the cut
        feed = open_table_feed(server.url, players=GAP_PLAYERS, analyze=StampedAnalyzer(GAP),
                               picture_fps=0, max_offline=1)
        service.new_game(GAP_PLAYERS, server.url, feed)
        service.wait_for_feed(timeout=60)
    assert "offline" in service.feed_error      # the camera went away for good at the end
    client = create_app(service, testing=True).test_client()
    moves = client.get("/api/moves").get_json()["moves"]
    laid = [(m["player"], _identity(m["card"]), m["action"], m["legal"]) for m in moves if m["card"]]
    assert laid == [("Ann", _identity("M-yellow-blue"), "extend", True),
                    ("Ben", _identity("M-blue-red"), "extend", True), ("Cy", "H-orange", "new", True)]
    state = client.get("/api/state").get_json()
    assert not state["desync"] and state["turn"] == "Ann"


def test_the_feed_numbers_its_tables_and_a_correction_names_the_number_the_card_was_laid_in(tmp_path):
    folder = write_frames(tmp_path / "game", game_frames(GAME, still=7, hand_frames=3))
    feed = open_table_feed(str(folder), players=PLAYERS, analyze=MisreadWhenLaid(GAME),
                           realtime=False, picture_fps=0)
    events = list(feed.events())
    tables = [e for e in events if e.table is not None]
    assert [e.table_number for e in tables] == list(range(len(tables)))
    (correction,) = [e.correction for e in events if e.correction is not None]
    # the number is that of the first table sent with the misread card (as first read) in it
    laid = next(e.table_number for e in tables
                if any(_identity(code) == "M-orange-green" for chain in e.table for code in chain))
    assert correction["table_number"] == laid == 1
    assert (_identity(correction["from"]), _identity(correction["to"])) == \
        ("M-orange-green", "M-yellow-green")


def test_a_correction_of_a_card_laid_in_a_refused_table_is_not_applied_anywhere(
        service, tmp_path, monkeypatch, caplog):
    from companion.web.service import ActionError
    store_table = service._observe

    def refuse_the_second_table(game, table, *args):
        if any(_identity(code) == "M-orange-green" for chain in table for code in chain) and \
                not any(_identity(code) == "H-purple" for chain in table for code in chain):
            raise ActionError("refused for this test")
        return store_table(game, table, *args)
    monkeypatch.setattr(service, "_observe", refuse_the_second_table)
    folder = write_frames(tmp_path / "game", game_frames(GAME, still=7, hand_frames=3))
    caplog.set_level("WARNING", logger="companion.web.service")
    client, game = follow(service, folder, PLAYERS, MisreadWhenLaid(GAME))
    view = service.view(service.store.game(game.id))
    assert len(view.frames) == len(GAME) - 1          # every table but the refused one
    # the card was laid in the refused table: no stored table may be renamed in its place
    assert [e for e in view.log if e["kind"] == "correction"] == []
    assert any("camera correction not applied" in r.getMessage() and "refused" in r.getMessage()
               for r in caplog.records)


# H-red ... T-purple completed by M-red-purple (the tail pushed over to meet it), but every
# reading of that table misses the tail; in the next turn the whole snake is collected
REJOIN = [[["H-red"]], [["H-red"], ["T-purple"]], [["H-red", "M-red-purple", "T-purple"]],
          [[], [], ["H-orange"]]]


class MissesIn(StampedAnalyzer):
    """Every reading of one table (`table`) misses the card of these `colours` (and so its
    links)."""

    def __init__(self, tables, table: int, colours: list[str]):
        super().__init__(tables)
        self.table, self.colours = table, colours

    def __call__(self, image):
        from companion.bench.games import keep_cards
        data = super().__call__(image)
        if unstamp(image) == self.table:
            data = keep_cards(data, [c for c in data["cards"] if c["colours"] != self.colours])
        return data


def _served(service, feed):
    """The dashboard's game once the feed has been followed to its end."""
    game = service.new_game(PLAYERS, feed.source, feed)
    service.wait_for_feed(timeout=60)
    assert service.feed_error is None
    return game


def tracker_feed(tmp_path, tables, analyzer, **options):
    """The tracker's feed over a scripted game's pictures, as fast as it can read them."""
    folder = write_frames(tmp_path / "game", game_frames(tables, still=7, hand_frames=3))
    return open_table_feed(str(folder), players=PLAYERS, analyze=analyzer, realtime=False,
                           picture_fps=0, **options)


def test_a_table_the_tracker_judges_again_is_sent_naming_that_table(tmp_path):
    feed = tracker_feed(tmp_path, REJOIN, MissesIn(REJOIN, 2, ["purple"]))
    events = list(feed.events())
    tables = [e for e in events if e.table is not None]
    (correction,) = [e.correction for e in events if e.correction is not None]
    laid = next(e for e in tables if any("M-red-purple" in chain for chain in e.table))
    assert correction["table_number"] == laid.table_number == 2
    assert ["T-purple"] in laid.table          # sent as two snakes, the tail apart
    assert correction["table"] == feed.tracker.history[2]["table"] == [REJOIN[2][0]]
    assert correction["joined"] == REJOIN[2][0] and "from" not in correction


def test_a_table_the_tracker_judges_again_is_judged_again_in_the_dashboards_history(
        service, tmp_path):
    from companion.game.referee import judge_record
    feed = tracker_feed(tmp_path, REJOIN, MissesIn(REJOIN, 2, ["purple"]))
    game = _served(service, feed)
    client = create_app(service, testing=True).test_client()
    account = feed.tracker.account()
    want = judge_record({"players": PLAYERS, "frames": [{"table": t} for t in REJOIN]})
    assert account["scores"] == want["scores"]
    scores = client.get("/api/scores").get_json()
    assert scores["scores"] == account["scores"] and scores["winners"] == account["winners"]
    assert scores["piles"] == account["piles"]
    moves = client.get("/api/moves").get_json()
    assert summary(moves["moves"]) == summary(account["moves"])
    (retable,) = [o for o in moves["overrides"] if o["kind"] == "retable"]
    assert "camera" in retable["data"]["reason"]
    view = service.view(service.store.game(game.id))
    target = next(f for f in view.frames if f.seq == retable["data"]["target"])
    # the camera's reading stays in the log; the referee judged the table the tracker meant
    assert target.index == 2 and ["T-purple"] in target.observed
    assert target.table == [REJOIN[2][0]] and target.retable == retable["seq"]
    page = client.get("/parts/history").data.decode()
    assert "table judged again" in page and "move 2: <code>H-red M-red-purple T-purple</code>" in page


def test_cards_whose_going_was_confirmed_late_are_sent_as_the_tables_they_changed(tmp_path):
    feed = tracker_feed(tmp_path, TAKEN_ALONE, StampedAnalyzer(TAKEN_ALONE),
                        settings={"confirm_take": 3})    # a tracker slow to believe a card gone
    events = list(feed.events())
    tables = [e for e in events if e.table is not None]
    (correction,) = [e.correction for e in events if e.correction is not None]
    # the table sent with H-red still there, as now judged; the table when it went before it
    held = next(e for e in tables if ["H-red"] in e.table and len(e.table[0]) == 2)
    assert correction["table_number"] == held.table_number == 1
    assert correction["table"] == [TAKEN_ALONE[2][0]] and correction["gone"] == ["H-red"]
    assert correction["before"] == feed.tracker.history[1]["table"] == [["M-green-blue"]]
    assert correction["before_frame"] == feed.tracker.history[1]["frame"] < held.index
    # from now on that table is one the feed sent: its number is no other table's
    assert correction["before_number"] not in [e.table_number for e in tables]
    assert "from" not in correction and "joined" not in correction


def _dashboard_equals_the_trackers_account(service, feed):
    game = _served(service, feed)
    client = create_app(service, testing=True).test_client()
    account = feed.tracker.account()
    scores = client.get("/api/scores").get_json()
    assert scores["scores"] == account["scores"] and scores["winners"] == account["winners"]
    assert scores["piles"] == account["piles"]
    moves = client.get("/api/moves").get_json()
    assert summary(moves["moves"]) == summary(account["moves"])
    return client, service.store.game(game.id), moves


def test_a_taking_confirmed_late_is_judged_in_its_own_turn_on_the_dashboard(service, tmp_path):
    feed = tracker_feed(tmp_path, TAKEN_WITH_A_CARD, StampedAnalyzer(TAKEN_WITH_A_CARD))
    client, game, moves = _dashboard_equals_the_trackers_account(service, feed)
    # Ann took H-red in the turn she laid M-green-yellow: not Ben in his
    assert [(m["player"], m["action"]) for m in moves["moves"]] == [
        ("Ann", "collect"), ("Ann", "extend"), ("Ben", "extend")]
    (retable,) = [o for o in moves["overrides"] if o["kind"] == "retable"]
    assert "H-red" in retable["data"]["reason"] and "before" not in retable["data"]
    view = service.view(game)
    assert [f.index for f in view.frames if f.retable] == [1] and not any(f.inserted for f in view.frames)


def test_a_table_the_tracker_put_in_is_judged_on_the_dashboard_and_undone_with_its_retable(
        service, tmp_path):
    feed = tracker_feed(tmp_path, TAKEN_ALONE, StampedAnalyzer(TAKEN_ALONE),
                        settings={"confirm_take": 3})
    client, game, moves = _dashboard_equals_the_trackers_account(service, feed)
    assert [m["action"] for m in moves["moves"]] == ["collect", "extend", "extend"]
    view = service.view(game)
    assert [f.table for f in view.frames] == [f["table"] for f in feed.tracker.history]
    (retable,) = [o for o in moves["overrides"] if o["kind"] == "retable"]
    inserted = view.frames[1]
    assert inserted.inserted and inserted.seq == retable["seq"] and inserted.table == [["M-green-blue"]]
    assert view.frames[2].retable == retable["seq"] and ["H-red"] in view.frames[2].observed
    # readable: the history's referee changes and the move's dispute page say what happened
    page = client.get("/parts/history").data.decode()
    assert "and just before it: <code>M-green-blue</code>" in page
    assert "never sent on its own" in client.get("/moves/1").data.decode()
    # undone like any other change: the tables as the camera sent them
    back = service.undo(game, retable["seq"], "the camera was right")
    assert len(back.frames) == 3 and not any(f.inserted or f.retable for f in back.frames)
    assert [m["action"] for m in back.moves] == ["extend", "collect", "extend"]


def test_a_removal_names_only_tables_the_feed_sent_and_puts_a_table_in_only_before_one(tmp_path):
    from companion.track.feed import SentTables, _corrections
    from companion.track.tracker import Tracker
    from .scene import FakeAnalyzer, Player, analysis
    from .test_tracker import SLOW_TO_TAKE
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=SLOW_TO_TAKE)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in TAKEN_ALONE])
    (told,) = [e.data for e in p.events if e.kind == "correction"]
    assert (told["inserted"], told["cut"]) == (1, [2])

    def sent(*places):
        record = SentTables()
        for k in places:
            record.add(10 * k, tracker.history[k])
        return record
    record = sent(0, 2, 3)
    (correction,) = _corrections(tracker, told, record, 99)
    assert correction["table_number"] == 1 and correction["before_number"] == 3
    assert record.entries[3] is tracker.history[1] and record.indexes[3] == 99
    assert _corrections(tracker, told, sent(0, 3), 99) == []   # the table cut was never sent


def test_a_card_found_to_have_lain_there_from_the_start_is_sent_as_the_tables_it_changed(
        service, tmp_path):
    # every reading of the first table misses H-red, which lies there from the start
    feed = tracker_feed(tmp_path, FROM_START, MissesIn(FROM_START, 0, ["red"]))
    game = _served(service, feed)
    view = service.view(service.store.game(game.id))
    retables = [e for e in view.log if e["kind"] == "retable"]
    # the two tables sent without it, each judged again with it; the camera's readings stay
    assert len(retables) == 2 and all("from the start" in e["data"]["reason"] for e in retables)
    assert [any("H-red" in chain for chain in f.table) for f in view.frames] == [True] * 4
    assert ["H-red"] not in view.frames[0].observed
    account = feed.tracker.account()
    assert summary(view.moves) == summary(account["moves"])
    assert [m["action"] for m in view.moves] == ["extend", "new", "extend"]


def test_a_recording_that_ends_on_a_still_table_read_twice_sends_that_table(tmp_path):
    # filmed just long enough for two of the readings a table is given: the dashboard still
    # gets the last table (and its move), as `companion track` does
    folder = write_frames(tmp_path / "game", game_frames(GAME[:3], still=7, hand_frames=3)[:-2])
    analyzer = StampedAnalyzer(GAME[:3])
    feed = open_table_feed(str(folder), players=PLAYERS, analyze=analyzer, realtime=False,
                           picture_fps=0, settings={"agree_readings": 0, "readings": 3})
    tables = [e.table for e in feed.events() if e.table is not None]
    assert analyzer.calls % 3 == 2
    assert [sorted(map(_identity, c)) for c in tables[-1]] == \
        [sorted(map(_identity, c)) for c in GAME[2]]
