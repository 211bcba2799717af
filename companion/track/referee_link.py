"""The tracker's one door to the rules: the same incremental referee as `judge`.

The tracker never decides a verdict.  It gives each settled table to
`companion.game.referee.Referee` and reports what comes back; to weigh a
doubtful reading it asks a throw-away copy whether a table would be legal.
Because the referee is fed nothing but settled tables, its whole state can be
rebuilt by feeding the same tables again, which is how `--resume` restores it.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Sequence

from companion.game.cards import Card
from companion.game.deck import Deck

SNAKE = "_snake"   # the codes of a collected snake; the record turns it into the cards' outlines


def _move_json(move: Any) -> dict:
    """The move as JSON, a collection with the snake it collects (`SNAKE`, for its evidence)."""
    for name in ("to_json", "to_dict", "as_dict"):
        method = getattr(move, name, None)
        if callable(method):
            out = dict(method())
            break
    else:
        return dataclasses.asdict(move) if dataclasses.is_dataclass(move) else dict(move)
    chain = getattr(move, "chain", None)
    if out.get("action") == "collect" and chain:
        out[SNAKE] = [card.code for card in chain]
    return out


class RefereeLink:
    def __init__(self, players: Sequence[str], deck: Deck,
                 factory: Callable[..., Any] | None = None):
        if factory is None:
            from companion.game.referee import Referee
            factory = Referee
        self.players = list(players)
        self.deck = deck
        self._factory = factory
        self.referee = factory(self.players, deck=deck)
        self.tables: list[list[list[str]]] = []

    def observe(self, table: list[list[str]], frame: int) -> list[dict]:
        moves = [_move_json(m) for m in self.referee.observe(table, frame=frame)]
        self.tables.append((frame, table))
        return moves

    def would_be_legal(self, table: list[list[str]]) -> bool:
        trial = copy.deepcopy(self.referee)
        try:
            moves = [_move_json(m) for m in trial.observe(table, frame=trial.frame + 1)]
        except Exception:
            return False
        return all(m.get("legal", True) for m in moves)

    def try_tables(self, tables: list[list[list[str]]]) -> list[list[dict]] | None:
        """The moves each table in turn would give, judged on a copy; None if one is unreadable."""
        trial = copy.deepcopy(self.referee)
        try:
            return [[_move_json(m) for m in trial.observe(table, frame=trial.frame + 1)]
                    for table in tables]
        except Exception:
            return None

    def rejudge(self, tables: list[tuple[int, list[list[str]]]]) -> list[dict]:
        """The moves a fresh referee would give these tables; this one is left as it is."""
        trial = self._factory(self.players, deck=self.deck)
        return [_move_json(m) for frame, table in tables for m in trial.observe(table, frame=frame)]

    def finish(self) -> list[dict]:
        return [_move_json(m) for m in (self.referee.finish() or [])]

    def piles(self) -> dict:
        return _plain(getattr(self.referee, "piles", {}))

    def collected(self) -> list[Card]:
        """Every card of every snake collected so far (a card the camera never read left out)."""
        return [Card.parse(code) for pile in self.piles().values() for snake in pile
                for code in snake if code != "unknown"]

    def undrawn(self) -> int:
        return int(self.referee.undrawn())

    @property
    def finished(self) -> bool:
        return bool(getattr(self.referee, "finished", False))

    def summary(self) -> dict:
        """piles, scores and winners exactly as `judge --json` gives them."""
        out = self.referee.to_json()
        return {"piles": out["piles"], "scores": out["scores"], "winners": out["winners"]}

    def replay(self, tables: list[tuple[int, list[list[str]]]]) -> list[dict]:
        """Rebuild the referee from settled tables (resume); returns the moves again."""
        self.referee = self._factory(self.players, deck=self.deck)
        self.tables = []
        moves = []
        for frame, table in tables:
            moves += self.observe(table, frame)
        return moves


def _plain(value: Any) -> Any:
    """Call a property-like method and turn Cards and tuples into JSON-ready values."""
    if callable(value):
        value = value()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    code = getattr(value, "code", None)
    return code if isinstance(code, str) else value
