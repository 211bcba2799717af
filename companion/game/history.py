"""A game's state, derived by replaying its event log through the referee.

The log is append-only: observed tables, verdict overrides, card corrections,
re-judged tables, undos and the end of the game.  Nothing here is stored;
everything the dashboard shows (table, moves, piles, scores, whose turn) is
recomputed from the log, so an edit to any past move changes everything after
it and nothing can drift out of step.

Events are addressed by their log sequence number (`seq`), not by frame
index: undoing an observed table renumbers the frames after it, while the
events that refer to it keep pointing at the right one.

Event payloads (``kind``: ``data``):

- ``table``: ``{"table": [[code, ...], ...], "frame": int, "desync": bool,
  "picture": str|None, "finished": bool}`` -- a settled table as seen.
- ``correction``: ``{"target": seq, "from": code, "to": code, "reason": str}`` --
  the card read as ``from`` at that table (and after it, while it stays) is
  really ``to``.
- ``retable``: ``{"target": seq, "table": [[code, ...], ...], "reason": str}`` --
  that table event is judged as showing ``table`` instead of what the camera
  read (e.g. two snakes were one: an end the reader missed had been pushed
  over to complete it).  Only that table changes; the camera's reading stays
  in the log.  Card corrections apply on top of it (but it never ends one: it
  may already name a corrected card rightly); of several live retables of one
  table the latest counts.  Optionally ``"before": [[code, ...], ...]`` (and
  ``"before_frame": int``, the camera frame it stands for): a table judged just
  before the target, one the camera never sent on its own (e.g. cards whose
  going it confirmed only later left at that moment, not with the target's
  move).  That table is a frame of its own, addressed by the retable's seq
  (overrides, corrections and retables may name it); it goes with its retable
  (undone with it) and with its target, and it stays when a later retable
  changes the target's table.  Several go in the order of their seqs.
- ``override``: ``{"target": seq, "index": int, "legal": bool|None,
  "stands": bool, "player": str|None, "reason": str}`` -- the referee's
  verdict on one move of that table.  ``legal=False, stands=True`` is
  "illegal, but it stands"; ``stands=False`` voids what the move collected.
- ``undo``: ``{"target": seq, "reason": str}`` -- that event no longer counts
  (undoing an undo brings it back).
- ``finish``: ``{}`` -- the draw pile is empty; the game is over.
"""
from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

from .cards import Card
from .deck import Deck, load_deck
from .scoring import rank_winners, score_piles


class LogEvent(Protocol):
    seq: int
    kind: str
    data: dict


@dataclass(frozen=True)
class Frame:
    """One observed table as the referee saw it (corrections applied)."""
    index: int              # position among the game's tables: 0 is the starter card
    seq: int                # the log event it came from
    table: list             # effective chains of card codes
    observed: list          # chains as the camera read them
    desync: bool
    picture: str | None
    source_frame: int | None
    explained: bool = True  # False when the referee could not make sense of it
    retable: int | None = None  # the seq of the retable event judged in place of `observed`
    inserted: bool = False  # put in by a retable's "before" (`seq`): the camera sent no table


@dataclass
class GameView:
    players: tuple[str, ...]
    frames: list[Frame] = field(default_factory=list)
    moves: list[dict] = field(default_factory=list)
    piles: dict[str, list[list[str]]] = field(default_factory=dict)
    scores: dict[str, dict] = field(default_factory=dict)
    winners: list[str] = field(default_factory=list)
    turn: str | None = None
    cards_left: int = 0
    desync: bool = False
    finished: bool = False
    log: list[dict] = field(default_factory=list)   # every event, with "undone"
    last_seq: int = 0

    @property
    def table(self) -> list:
        return self.frames[-1].table if self.frames else []

    def move_at(self, frame: int, index: int = 0) -> dict:
        found = [m for m in self.moves if m["frame"] == frame]
        if not 0 <= index < len(found):
            raise LookupError(f"no move {index} at frame {frame}")
        return found[index]


def undone_events(events: Sequence[LogEvent]) -> set[int]:
    """The seqs that no longer count.  Latest undo wins: an undone undo revives its target."""
    cancelled: set[int] = set()
    for event in reversed(events):
        if event.kind == "undo" and event.seq not in cancelled:
            cancelled.add(int(event.data["target"]))
    return cancelled


def _same_card(a: Card, b: Card) -> bool:
    return a == b or a == b.flipped()


def _count(table: list, card: Card) -> int:
    return sum(_same_card(Card.parse(code), card) for chain in table for code in chain)


class Correction:
    """A misread card renamed from one table on, while it stays on the table.

    Copies of the misread card that were already on the table before are real
    and keep their name: only the excess over that count is renamed, and the
    correction ends for good once a table no longer holds the excess (the card
    was collected or taken back).
    """

    def __init__(self, wrong: str, right: str, previous_table: list | None):
        self.wrong, self.right = Card.parse(wrong), Card.parse(right)
        self.base = _count(previous_table, self.wrong) if previous_table else 0
        self.active = True

    def apply(self, table: list, can_end: bool = True) -> None:
        """Rename in `table` (in place), or end the correction if the card has gone.

        A table given by a retable cannot end it: it may already name the card rightly
        (the tracker re-judges with its corrected names), which says nothing of the
        tables the camera sent after it.
        """
        if not self.active:
            return
        if _count(table, self.wrong) <= self.base:
            self.active = not can_end
            return
        keep = self.base
        for chain in table:
            for i, code in enumerate(chain):
                card = Card.parse(code)
                if not _same_card(card, self.wrong):
                    continue
                if keep:
                    keep -= 1
                    continue
                chain[i] = (self.right if card == self.wrong else self.right.flipped()).code


def apply_correction(tables: list[list], start: int, wrong: str, right: str) -> None:
    """Apply one correction to tables[start:] in place (see `Correction`)."""
    correction = Correction(wrong, right, tables[start - 1] if start > 0 else None)
    for table in tables[start:]:
        correction.apply(table)


def _pile_codes(piles: dict) -> dict[str, list[list[str]]]:
    return {p: [[c.code if isinstance(c, Card) else str(c) for c in s] for s in snakes]
            for p, snakes in piles.items()}


def _new_snakes(before: dict, after: dict) -> list[tuple[str, list]]:
    """Snakes that appeared in someone's pile between two snapshots."""
    out = []
    for player, pile in after.items():
        old = Counter(tuple(s) for s in before.get(player, []))
        for snake in pile:
            key = tuple(snake)
            if old[key]:
                old[key] -= 1
            else:
                out.append((player, list(snake)))
    return out


class Replay:
    """A game's log replayed through one referee, kept so that new tables cost one step.

    `view(events)` takes the whole log.  When the log only grew by observed
    tables since the last call -- the live game's common case -- only those
    are fed to the referee; any other change (an override, a correction, a
    retable, an undo, the end) replays the whole log from a fresh referee.
    """

    def __init__(self, players: Sequence[str], deck: Deck | None = None,
                 referee_factory: Callable[..., Any] | None = None):
        from .referee import Referee
        self.players = tuple(players)
        self.deck = deck or load_deck()
        self._make_referee = referee_factory or Referee
        self._reset()

    def _reset(self) -> None:
        self.referee = self._make_referee(list(self.players), deck=self.deck)
        self._seen: list[tuple[int, str]] = []       # (seq, kind) of every event taken in
        self._undone: set[int] = set()
        self._frames: list[Frame] = []
        self._moves: list[dict] = []
        self._ledger: list[dict] = []                 # every collected snake with its move
        self._overrides: dict[tuple[int, int], dict] = {}
        self._corrections: dict[int, list[tuple[str, str]]] = {}
        self._retables: dict[int, tuple[int, list]] = {}  # table seq -> (retable seq, chains)
        self._inserts: dict[int, list[_Inserted]] = {}  # table seq -> tables put in before it
        self._active: list[Correction] = []
        self._finished = False

    def view(self, events: Iterable[LogEvent]) -> GameView:
        events = list(events)
        known = len(self._seen)
        new = events[known:]
        grew_by_tables = (known <= len(events) and not self._finished
                          and [(e.seq, e.kind) for e in events[:known]] == self._seen
                          and all(e.kind == "finish" or (e.kind == "table"
                                                         and not e.data.get("finished"))
                                  for e in new))
        if not grew_by_tables:
            self._reset()
            self._prepare(events)
            new = events
        for event in new:
            self._seen.append((event.seq, event.kind))
            if event.kind == "table" and event.seq not in self._undone:
                self._observe(event)
        if not grew_by_tables or any(e.kind == "finish" for e in new):
            self._finish(events)
        return self._snapshot(events)

    def _prepare(self, events: list) -> None:
        """Everything that is not a table: which events count, overrides, corrections, retables."""
        self._undone = undone_events(events)
        live = [e for e in events if e.seq not in self._undone]
        for e in live:
            if e.kind == "override":
                self._overrides[(int(e.data["target"]), int(e.data.get("index", 0)))] = \
                    {**e.data, "seq": e.seq}
            elif e.kind == "correction":
                self._corrections.setdefault(int(e.data["target"]), []).append(
                    (e.data["from"], e.data["to"]))
            elif e.kind == "retable":
                self._retables[int(e.data["target"])] = (e.seq, e.data["table"])
                if e.data.get("before") is not None and e.seq > int(e.data["target"]):
                    self._inserts.setdefault(int(e.data["target"]), []).append(_Inserted(
                        e.seq, {"table": e.data["before"], "frame": e.data.get("before_frame")}))

    def _observe(self, event, inserted: bool = False) -> None:
        for before in self._inserts.get(event.seq, []):   # judged just before it
            self._observe(before, inserted=True)
        observed = event.data.get("table", [])
        retable, judged = self._retables.get(event.seq, (None, observed))
        table = copy.deepcopy(judged)
        previous = self._frames[-1].table if self._frames else None
        for wrong, right in self._corrections.get(event.seq, []):
            self._active.append(Correction(wrong, right, previous))
        for correction in self._active:
            # (a table the tracker judged, not the camera's reading, cannot end one)
            correction.apply(table, can_end=retable is None and not inserted)
        index = len(self._frames)
        before = _pile_codes(self.referee.piles)
        try:
            moves = [m.to_json() for m in self.referee.observe(table, frame=index)]
            explained = True
        except ValueError:
            # The referee cannot read this table (a misread code, a card not in the
            # deck): keep it in the log for the record, and go on without it.
            moves, explained = [], False
        self._frames.append(Frame(index, event.seq, table, observed,
                                  bool(event.data.get("desync")) or not explained,
                                  event.data.get("picture"), event.data.get("frame"), explained,
                                  retable, inserted))
        self._judge(moves, event.seq, index, before)

    def _judge(self, moves: list[dict], event_seq: int, frame: int, before: dict) -> None:
        taken = _new_snakes(before, _pile_codes(self.referee.piles))
        for ordinal, move in enumerate(moves):
            move = dict(move, frame=frame, seq=event_seq, index=ordinal,
                        evidence={"before": frame - 1 if frame else None, "after": frame})
            collector = (move.get("collected") or {}).get("player")
            _apply_override(move, self._overrides.get((event_seq, ordinal)))
            if collector and taken:
                # the snake this move took: the one that landed in the collector's pile
                entry = next((t for t in taken if t[0] == collector), taken[0])
                taken.remove(entry)
                self._ledger.append({"player": move["collected"]["player"], "snake": entry[1],
                                     "move": move})
            self._moves.append(move)
        # snakes the referee handed out outside any collecting move still count
        self._ledger.extend({"player": p, "snake": s, "move": None} for p, s in taken)

    def _finish(self, events: list) -> None:
        live = [e for e in events if e.seq not in self._undone]
        tables = [e for e in live if e.kind == "table"]
        finish = next((e for e in live if e.kind == "finish"), None)
        if finish is None and tables and tables[-1].data.get("finished"):
            finish = tables[-1]
        if finish is not None and self._frames:
            self._finished = True
            before = _pile_codes(self.referee.piles)
            self._judge([m.to_json() for m in self.referee.finish()], finish.seq,
                        len(self._frames) - 1, before)

    def _snapshot(self, events: list) -> GameView:
        view = GameView(players=self.players, frames=list(self._frames), moves=list(self._moves),
                        finished=self._finished)
        view.log = [{"seq": e.seq, "kind": e.kind, "data": e.data, "undone": e.seq in self._undone}
                    for e in events]
        view.last_seq = max((e.seq for e in events), default=0)
        view.piles = {p: [] for p in self.players}
        for entry in self._ledger:
            if entry["move"] is None or not entry["move"].get("void"):
                view.piles.setdefault(entry["player"], []).append(entry["snake"])
        if view.piles == _pile_codes(self.referee.piles):
            view.scores, view.winners = self.referee.scores(), self.referee.winners()
        else:
            view.scores = score_piles(view.piles)
            view.winners = rank_winners(view.scores)
        view.desync = bool(view.frames and view.frames[-1].desync)
        view.turn = None if view.finished else self.referee.next_player
        view.cards_left = 0 if view.finished else self.referee.undrawn()
        return view


@dataclass(frozen=True)
class _Inserted:
    """A retable's "before" table, observed like a table event of the retable's seq."""
    seq: int
    data: dict


def replay(players: Sequence[str], events: Iterable[LogEvent], deck: Deck | None = None,
           referee_factory: Callable[..., Any] | None = None) -> GameView:
    """Replay a game's whole log through a fresh referee and return everything derived from it."""
    return Replay(players, deck, referee_factory).view(events)


def _apply_override(move: dict, override: dict | None) -> None:
    move["override"] = None
    move["stands"] = bool(move.get("legal"))
    if not override:
        return
    move["original"] = {k: move.get(k) for k in ("legal", "code", "reason", "player")}
    if override.get("legal") is not None:
        move["legal"] = bool(override["legal"])
        if move["legal"]:
            move["code"] = None
        elif not move.get("code"):
            move["code"] = "referee_decision"
    move["stands"] = bool(override.get("stands", move["legal"]))
    if override.get("player"):
        move["player"] = override["player"]
        if move.get("collected"):
            move["collected"] = dict(move["collected"], player=override["player"])
    if move.get("collected") and not move["stands"]:
        move["void"] = True
    move["override"] = {"seq": override["seq"], "reason": override.get("reason", ""),
                        "legal": override.get("legal"), "stands": move["stands"],
                        "player": override.get("player")}
