import sqlite3

import pytest

from companion.store.db import Store, StoreError, UnknownGame


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "games.sqlite3")
    yield s
    s.close()


def test_events_get_increasing_seqs_and_survive_reopening(tmp_path):
    store = Store(tmp_path / "g.sqlite3")
    game = store.create_game(["Ann", "Ben"], "upload")
    first = store.append(game.id, "table", {"table": [["M-red-blue"]]})
    second = store.append(game.id, "override", {"target": 1, "reason": "x"})
    assert (first.seq, second.seq) == (1, 2)
    store.close()

    again = Store(tmp_path / "g.sqlite3")
    assert again.current_game().id == game.id
    assert [(e.seq, e.kind, e.data) for e in again.events(game.id)] == [
        (1, "table", {"table": [["M-red-blue"]]}), (2, "override", {"target": 1, "reason": "x"})]
    assert again.events(game.id, after=1)[0].seq == 2


def test_each_game_has_its_own_log(store):
    a = store.create_game(["Ann", "Ben"])
    b = store.create_game(["Cy", "Dee", "Eve"])
    store.append(a.id, "table", {"table": []})
    assert store.events(b.id) == []
    assert store.last_seq(a.id) == 1 and store.last_seq(b.id) == 0
    assert store.current_game().id == b.id
    assert [g.id for g in store.games()] == [b.id, a.id]


def test_unknown_game_and_bad_events_are_refused(store):
    with pytest.raises(UnknownGame):
        store.game("nope")
    with pytest.raises(UnknownGame):
        store.append("nope", "table", {})
    game = store.create_game(["Ann", "Ben"])
    with pytest.raises(StoreError):
        store.append(game.id, "rewrite_history", {})


@pytest.mark.parametrize("players", [["Ann"], ["A", "B", "C", "D", "E", "F"], ["Ann", "Ann"], ["Ann", " "]])
def test_player_lists_outside_the_rules_are_refused(store, players):
    with pytest.raises(StoreError):
        store.create_game(players)


def test_a_failed_append_leaves_no_trace(store):
    game = store.create_game(["Ann", "Ben"])
    store.append(game.id, "table", {"table": []})
    with pytest.raises(TypeError):
        store.append(game.id, "table", {"bad": object()})   # not JSON: nothing written
    assert store.last_seq(game.id) == 1
    assert store.append(game.id, "finish", {}).seq == 2


def test_settings_are_created_once(store):
    made = []
    value = store.setting_or_create("pin", lambda: made.append(1) or "123456")
    assert value == store.setting_or_create("pin", lambda: "999999") == "123456"
    assert made == [1]


def test_the_database_is_in_wal_mode_with_full_sync(tmp_path):
    Store(tmp_path / "g.sqlite3").close()
    db = sqlite3.connect(tmp_path / "g.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_retable_is_an_event_kind_the_store_keeps(tmp_path):
    store = Store(tmp_path / "g.sqlite3")
    game = store.create_game(["Ann", "Ben"])
    store.append(game.id, "table", {"table": [["H-red"], ["T-purple"]]})
    data = {"target": 1, "table": [["H-red", "T-purple"]], "reason": "one snake"}
    assert store.append(game.id, "retable", data).seq == 2
    store.close()
    again = Store(tmp_path / "g.sqlite3")
    assert [(e.kind, e.data) for e in again.events(game.id, after=1)] == [("retable", data)]
    again.close()


def test_a_file_that_is_not_a_games_database_is_refused_and_kept(tmp_path):
    other = tmp_path / "companion.sqlite3"
    other.write_text("my notes, not a database\n" * 200)
    with pytest.raises(StoreError, match="is not a games database"):
        Store(other)
    assert other.read_text() == "my notes, not a database\n" * 200
