"""The move advisor on the dashboard: the draw pile, the snake badges and the hint panel.

Two costs, two paths.  The draw pile and each snake's "can be completed by N
cards left" badge take a few milliseconds, so they go into every state (the
JSON API, the event stream, the Live page).  The hint panel ranks the best
place of every card that could come next, 20-200 ms on a crowded table, so it
never runs on the event path: it is worked out once per settled table (table
and draw pile), off a worker thread started after the event went out, and only
while someone has the panel switched on.  Everything cached is language-free
(numbers and `Hint`s); the words are chosen per viewer.
"""
from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Mapping, Sequence

from companion.game import advisor, counting, hints
from companion.game.cards import Card
from companion.game.deck import Deck
from companion.game.rules import as_table

PANEL_WANTED_SECONDS = 600.0   # work panels out ahead only while one was shown this recently
CACHED_TABLES = 64


@dataclass(frozen=True)
class DrawPileCounts:
    """What the dashboard shows of one settled table: the pile left and each snake's badge.

    `completable_by` is parallel to the table's chains; None when the table
    cannot be counted (the referee could not read it, or it holds more copies
    of a card than the deck has)."""
    remaining: Mapping[Card, int] | None
    completable_by: list[int] | None
    by_colour: dict | None
    jokers: dict | None

    @property
    def cards_left(self) -> int | None:
        return None if self.remaining is None else sum(self.remaining.values())


UNCOUNTED = DrawPileCounts(None, None, None, None)


def count_table(table: Sequence[Sequence[str]], deck: Deck, accounted: Counter | None,
                readable: bool = True, finished: bool = False) -> DrawPileCounts:
    """The draw pile (the deck less every card the referee accounted for) and the badges.

    `accounted` is `Referee.accounted()`: the table, the piles and the cards taken off."""
    if accounted is None:
        return UNCOUNTED
    try:
        remaining = Counter() if finished else counting.remaining_cards(
            deck, extra=list(accounted.elements()))
    except counting.CountingError:
        return UNCOUNTED
    pile = counting.DrawPile.of(deck, remaining)
    completable = None
    if readable:
        try:
            completable = [s.cards_left for s in counting.snake_outlooks(as_table(table), remaining)]
        except ValueError:   # a code the rules cannot read: no badges rather than wrong ones
            completable = None
    return DrawPileCounts(pile.counts, completable, pile.by_colour(), pile.jokers())


def table_key(table: Sequence[Sequence[str]], remaining: Mapping[Card, int]) -> tuple:
    return (tuple(tuple(chain) for chain in table),
            tuple(sorted((card.code, n) for card, n in remaining.items() if n)))


class HintPanels:
    """The advisor's outlook per settled table, worked out once on one worker thread."""

    def __init__(self, deck: Deck):
        self.deck = deck
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hint-panel")
        self._lock = threading.Lock()
        self._done: OrderedDict[tuple, Future] = OrderedDict()
        self.last_wanted = float("-inf")
        self.timings: list[float] = []   # seconds per outlook worked out, newest last

    def _future(self, table, remaining) -> Future:
        key = table_key(table, remaining)
        with self._lock:
            future = self._done.get(key)
            if future is None:
                future = self._done[key] = self._pool.submit(self._work, table, dict(remaining))
                while len(self._done) > CACHED_TABLES:
                    self._done.popitem(last=False)
            else:
                self._done.move_to_end(key)
            return future

    def _work(self, table, remaining) -> advisor.Outlook:
        started = time.perf_counter()
        result = advisor.outlook(as_table(table), self.deck, remaining)
        self.timings = (self.timings + [time.perf_counter() - started])[-100:]
        return result

    def prefetch(self, table, counts: DrawPileCounts) -> None:
        """After a change went out: start on its panel if anyone looked at one lately."""
        if (counts.remaining is not None and counts.completable_by is not None
                and time.monotonic() - self.last_wanted < PANEL_WANTED_SECONDS):
            self._future(table, counts.remaining)

    def panel(self, table, counts: DrawPileCounts, lang: str, timeout: float = 10.0) -> dict | None:
        """What `advisor.hint_panel` shows for this table (no card in hand), in `lang`;
        None when the table cannot be counted."""
        self.last_wanted = time.monotonic()
        if counts.remaining is None or counts.completable_by is None:
            return None
        found = self._future(table, counts.remaining).result(timeout)
        return word_panel(found, counts, lang)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def word_panel(found: advisor.Outlook, counts: DrawPileCounts, lang: str) -> dict:
    """The cached outlook in one language, shaped like `advisor.hint_panel(card=None)`."""
    n = found.pile.size
    return {"cards_left": n, "cards_left_text": hints.cards_left(n, lang),
            "by_colour": counts.by_colour, "jokers": counts.jokers,
            "badges": [{"chain": s.index, "cards_left": s.cards_left,
                        "text": hints.badge(s.cards_left, lang)} for s in found.snakes],
            "hints": [h.text(lang) for h in found.hints], "best": None}


def badge_text(n: int | None, lang: str) -> str | None:
    return None if n is None else hints.badge(n, lang)
