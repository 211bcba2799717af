"""The judge's input: a symbolic game record (see CONTRACT.md), read strictly.

Anything malformed raises `RecordError` naming the frame and the problem; an
illegal move is not malformed, it is for the referee to judge.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .cards import Card, CardCodeError
from .chains import Chain
from .deck import Deck, DeckError


PLAYER_COUNTS = range(2, 6)   # Hisss is for two to five players


class RecordError(ValueError):
    """A game record that cannot be read; the message names where and what."""


@dataclass(frozen=True)
class GameRecord:
    players: tuple[str, ...]
    frames: tuple[tuple[Chain, ...], ...]
    finished: bool


def check_players(players: Any) -> tuple[str, ...]:
    if not isinstance(players, list) or not players:
        raise RecordError("'players' must be a non-empty list of names")
    if not all(isinstance(p, str) and p.strip() for p in players):
        raise RecordError("every player must be a non-empty name")
    if len(set(players)) != len(players):
        raise RecordError("player names must be different")
    return tuple(players)


def parse_players(text: str) -> tuple[str, ...]:
    """Player names in turn order from a comma-separated option (`--players Ann,Ben,Cy`)."""
    names = [name.strip() for name in text.split(",")]
    if len(names) not in PLAYER_COUNTS or not all(names):
        raise RecordError("--players takes two to five comma-separated names (Hisss is for 2-5 players), "
                          "e.g. Ann,Ben,Cy")
    return check_players(names)


def read_table(table: Any, deck: Deck, where: str) -> tuple[Chain, ...]:
    """A table of card codes (or cards) checked against the deck; empty chains are dropped."""
    if not isinstance(table, (list, tuple)):
        raise RecordError(f"{where}: 'table' must be a list of chains (lists of card codes)")
    chains = []
    for c, chain in enumerate(table):
        if not isinstance(chain, (list, tuple)):
            raise RecordError(f"{where}: chain {c} must be a list of card codes, got {chain!r}")
        cards = []
        for k, code in enumerate(chain):
            try:
                known = isinstance(code, Card) and code.kind.is_face and deck.count(code)
                cards.append(code if known else deck.parse(code.code if isinstance(code, Card) else code))
            except (CardCodeError, DeckError) as exc:
                raise RecordError(f"{where}: chain {c}, card {k}: {exc}") from None
        if cards:
            chains.append(tuple(cards))
    return tuple(chains)


def parse_record(data: Any, deck: Deck) -> GameRecord:
    if not isinstance(data, dict):
        raise RecordError("a game record must be a JSON object with 'players' and 'frames'")
    for field in ("players", "frames"):
        if field not in data:
            raise RecordError(f"missing field '{field}'")
    players = check_players(data["players"])
    if len(players) not in PLAYER_COUNTS:
        raise RecordError(f"'players' names {len(players)} player(s); Hisss is for 2-5 players")
    frames = data["frames"]
    if not isinstance(frames, list) or not frames:
        raise RecordError("'frames' must be a non-empty list")
    tables = []
    for i, frame in enumerate(frames):
        if not isinstance(frame, dict):
            raise RecordError(f"frame {i}: expected an object with a 'table'")
        if "table" not in frame:
            raise RecordError(f"frame {i}: missing field 'table'")
        tables.append(read_table(frame["table"], deck, f"frame {i}"))
    finished = data.get("finished", False)
    if not isinstance(finished, bool):
        raise RecordError("'finished' must be true or false")
    return GameRecord(players, tuple(tables), finished)


def load_record(text: str, name: str, deck: Deck) -> GameRecord:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{name} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise RecordError(f"{name} is nested too deeply to be a game record") from None
    return parse_record(data, deck)
