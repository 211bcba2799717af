"""The game history in SQLite: games and their append-only event logs.

Nothing derived is stored.  A game's table, piles and scores are always
recomputed by replaying its events (`companion.game.history`), so the log is
the single source of truth and an edit to the past is just one more event.

Every write is one transaction; the database runs in WAL mode with
``synchronous=FULL`` so that a server killed at any instant restarts with every
event it acknowledged and none half-written.
"""
from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from companion.game.record import PLAYER_COUNTS

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id          TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    players     TEXT NOT NULL,             -- JSON list, in turn order
    source      TEXT NOT NULL DEFAULT '',  -- what feeds the game: a record, a camera, uploads
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS events (
    game_id    TEXT NOT NULL REFERENCES games(id),
    seq        INTEGER NOT NULL,           -- 1, 2, 3... per game, never reused
    kind       TEXT NOT NULL,              -- table | override | correction | retable | undo | finish
    payload    TEXT NOT NULL,              -- JSON object
    created_at REAL NOT NULL,
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

EVENT_KINDS = frozenset({"table", "override", "correction", "retable", "undo", "finish"})


class StoreError(ValueError):
    """A request the store cannot satisfy (unknown game, bad event)."""


class UnknownGame(StoreError):
    pass


@dataclass(frozen=True)
class Event:
    seq: int
    kind: str
    data: dict
    created_at: float

    def to_json(self) -> dict:
        return {"seq": self.seq, "kind": self.kind, "data": self.data, "at": self.created_at}


@dataclass(frozen=True)
class Game:
    id: str
    created_at: float
    players: tuple[str, ...]
    source: str
    finished_at: float | None


class Store:
    """One SQLite file; safe to share between the server's threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection guarded by a lock: writes are tiny and rare, and a single
        # connection keeps SQLite's locking out of the picture entirely.
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:   # another file of that name: it is left as it is
            self._db.close()
            raise StoreError(f"{self.path} is not a games database ({exc})") from None
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _write(self, sql_and_args: Iterable[tuple[str, tuple]]) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in sql_and_args:
                    self._db.execute(sql, args)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- settings: small values that must survive restarts (PIN, secret key, spectator token)

    def setting(self, key: str, default: str | None = None) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str) -> None:
        self._write([("INSERT INTO settings(key, value) VALUES(?, ?) "
                      "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value))])

    def setting_or_create(self, key: str, make) -> str:
        """The stored value, or a new one from `make()` stored once and for all."""
        with self._lock:
            value = self.setting(key)
            if value is None:
                value = make()
                self.set_setting(key, value)
            return value

    # -- games

    def create_game(self, players: list[str], source: str = "") -> Game:
        players = [str(p) for p in players]
        if len(players) not in PLAYER_COUNTS:
            raise StoreError("a game of Hisss has 2 to 5 players")
        if len(set(players)) != len(players) or not all(p.strip() for p in players):
            raise StoreError("player names must be different and not empty")
        game = Game(secrets.token_hex(4), time.time(), tuple(players), source, None)
        self._write([("INSERT INTO games(id, created_at, players, source) VALUES(?, ?, ?, ?)",
                      (game.id, game.created_at, json.dumps(players), source)),
                     ("INSERT INTO settings(key, value) VALUES('current_game', ?) "
                      "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (game.id,))])
        return game

    def game(self, game_id: str) -> Game:
        with self._lock:
            row = self._db.execute(
                "SELECT id, created_at, players, source, finished_at FROM games WHERE id=?",
                (game_id,)).fetchone()
        if row is None:
            raise UnknownGame(f"no game {game_id!r}")
        return Game(row[0], row[1], tuple(json.loads(row[2])), row[3], row[4])

    def games(self) -> list[Game]:
        with self._lock:
            ids = [r[0] for r in self._db.execute(
                "SELECT id FROM games ORDER BY created_at DESC, rowid DESC")]
        return [self.game(i) for i in ids]

    def current_game(self) -> Game | None:
        game_id = self.setting("current_game")
        return self.game(game_id) if game_id else None

    def mark_finished(self, game_id: str, finished: bool = True) -> None:
        """Keep the games list's `finished_at` in step with the log (which decides)."""
        self.game(game_id)
        if finished:
            self._write([("UPDATE games SET finished_at=? WHERE id=? AND finished_at IS NULL",
                          (time.time(), game_id))])
        else:
            self._write([("UPDATE games SET finished_at=NULL WHERE id=?", (game_id,))])

    # -- events

    def append(self, game_id: str, kind: str, data: dict[str, Any]) -> Event:
        """Add one event at the end of a game's log, atomically; return it."""
        if kind not in EVENT_KINDS:
            raise StoreError(f"unknown event kind {kind!r}")
        payload = json.dumps(data, sort_keys=True)
        with self._lock:
            self.game(game_id)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                (last,) = self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id=?", (game_id,)).fetchone()
                event = Event(last + 1, kind, json.loads(payload), time.time())
                self._db.execute(
                    "INSERT INTO events(game_id, seq, kind, payload, created_at) VALUES(?, ?, ?, ?, ?)",
                    (game_id, event.seq, kind, payload, event.created_at))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return event

    def events(self, game_id: str, after: int = 0) -> list[Event]:
        self.game(game_id)
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, kind, payload, created_at FROM events "
                "WHERE game_id=? AND seq>? ORDER BY seq", (game_id, after)).fetchall()
        return [Event(seq, kind, json.loads(payload), at) for seq, kind, payload, at in rows]

    def last_seq(self, game_id: str) -> int:
        with self._lock:
            (last,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id=?", (game_id,)).fetchone()
        return last
