"""The tracker as the dashboard's feed, seen through the web app's test client."""
from __future__ import annotations

import cv2

from companion.track import open_table_feed
from companion.web.app import create_app
from ..web import conftest as web
from .scene import StampedAnalyzer, game_frames, unstamp
from .test_sources import GAP, GAP_PLAYERS, _gap_game
from .test_tracker import GAME, PLAYERS, _identity, summary

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


class MissesTheTail(StampedAnalyzer):
    """Every reading of the third table misses T-purple (and so the link to it)."""

    def __call__(self, image):
        from companion.bench.games import keep_cards
        data = super().__call__(image)
        if unstamp(image) == 2:
            data = keep_cards(data, [c for c in data["cards"] if c["colours"] != ["purple"]])
        return data


def tracker_feed(tmp_path, tables, analyzer):
    """The tracker's feed over a scripted game's pictures, as fast as it can read them."""
    folder = write_frames(tmp_path / "game", game_frames(tables, still=7, hand_frames=3))
    return open_table_feed(str(folder), players=PLAYERS, analyze=analyzer, realtime=False,
                           picture_fps=0)


def test_a_table_the_tracker_judges_again_is_sent_naming_that_table(tmp_path):
    feed = tracker_feed(tmp_path, REJOIN, MissesTheTail(REJOIN))
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
    feed = tracker_feed(tmp_path, REJOIN, MissesTheTail(REJOIN))
    game = service.new_game(PLAYERS, feed.source, feed)
    service.wait_for_feed(timeout=60)
    assert service.feed_error is None
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
