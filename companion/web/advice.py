"""The move advisor on the dashboard: the draw pile, the snake badges and the hint panel.

Three costs.  The draw pile per colour is a count: it goes into every state
(the JSON API, the event stream, the Live page) at once.  Each snake's "can be
completed by N cards left" badge asks the rules about every open chain and
pair of chains: under 10 ms for most tables but up to ~80 ms on a crowded one,
so it runs on a worker thread and the event waits for it only briefly (a late
count follows as an "advice" event).  The hint panel ranks the best place of
every card that could come next, 20-300 ms, so it never runs on the event
path: it is worked out once per settled table, on its own worker thread
started after the event went out, and only while someone has the panel on.
Everything cached is language-free (numbers and `Hint`s); the words are chosen
per viewer.
"""
from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Mapping, Sequence

from companion.game import advisor, counting, hints
from companion.game.cards import Card
from companion.game.deck import Deck
from companion.game.chains import as_chain, is_complete
from companion.game.rules import as_table

PANEL_WANTED_SECONDS = 600.0   # work panels out ahead only while one was shown this recently
CACHED_TABLES = 64


class DrawPileCounts:
    """What the dashboard shows of one settled table: the pile left and each snake's badge.

    The badge numbers are worked out on a worker thread (a crowded table with
    many open heads and tails can take tens of milliseconds); `completable_by`
    waits for them at most `timeout` seconds.  They are parallel to the table's
    chains, or None when the table cannot be counted (the referee could not
    read it, or it holds more copies of a card than the deck has)."""

    def __init__(self, remaining: Mapping[Card, int] | None = None, by_colour: dict | None = None,
                 jokers: dict | None = None, badges: Future | None = None):
        self.remaining, self.by_colour, self.jokers = remaining, by_colour, jokers
        self._badges = badges

    @property
    def countable(self) -> bool:
        return self._badges is not None

    def completable_by(self, timeout: float | None = 10.0) -> list[int] | None:
        if self._badges is None:
            return None
        try:
            return self._badges.result(timeout)
        except FutureTimeout:
            return None
        except ValueError:   # a code the rules cannot read: no badges rather than wrong ones
            return None

    def when_counted(self, callback) -> None:
        """Call `callback()` once the badge numbers are known (at once if they are)."""
        if self._badges is not None:
            self._badges.add_done_callback(lambda _: callback())


UNCOUNTED = DrawPileCounts()


def table_key(table: Sequence[Sequence[str]], remaining: Mapping[Card, int]) -> tuple:
    return (tuple(tuple(chain) for chain in table),
            tuple(sorted((card.code, n) for card, n in remaining.items() if n)))


def badge_numbers(table: Sequence[Sequence[str]], remaining: Mapping[Card, int]) -> list[int]:
    """Per chain, the copies left that complete it (alone or by a join): the badge's N."""
    return [s.cards_left for s in counting.snake_outlooks(as_table(table), remaining)]


class DashboardAdvisor:
    """The advisor's work for the dashboard, off the threads that serve viewers.

    Two worker threads, so a slow hint panel never holds up the next table's
    badges.  Both results are cached per settled table (table and draw pile)."""

    def __init__(self, deck: Deck):
        self.deck = deck
        self._badge_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snake-badges")
        self._panel_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hint-panel")
        self._lock = threading.Lock()
        self._badges: OrderedDict[tuple, Future] = OrderedDict()
        self._panels: OrderedDict[tuple, Future] = OrderedDict()
        self.last_wanted = float("-inf")
        self.timings: list[float] = []   # seconds per hint panel worked out, newest last

    def _cached(self, cache: OrderedDict, pool: ThreadPoolExecutor, key, work, *args) -> Future:
        with self._lock:
            future = cache.get(key)
            if future is None:
                future = cache[key] = pool.submit(work, *args)
                while len(cache) > CACHED_TABLES:
                    cache.popitem(last=False)
            else:
                cache.move_to_end(key)
            return future

    def count(self, table: Sequence[Sequence[str]], accounted: Counter | None,
              readable: bool = True, finished: bool = False) -> DrawPileCounts:
        """The draw pile (the deck less every card the referee accounted for: table, piles,
        cards taken off; `Referee.accounted()`) at once, and the badges on their way."""
        if accounted is None:
            return UNCOUNTED
        try:
            remaining = Counter() if finished else counting.remaining_cards(
                self.deck, extra=list(accounted.elements()))
        except counting.CountingError:
            return UNCOUNTED
        pile = counting.DrawPile.of(self.deck, remaining)
        badges = None
        if readable:
            table = [list(chain) for chain in table]
            badges = self._cached(self._badges, self._badge_pool, table_key(table, pile.counts),
                                  badge_numbers, table, pile.counts)
        return DrawPileCounts(pile.counts, pile.by_colour(), pile.jokers(), badges)

    def _outlook(self, table, remaining) -> advisor.Outlook:
        started = time.perf_counter()
        result = advisor.outlook(as_table(table), self.deck, remaining)
        self.timings = (self.timings + [time.perf_counter() - started])[-100:]
        return result

    def _panel_future(self, table, counts: DrawPileCounts) -> Future:
        return self._cached(self._panels, self._panel_pool, table_key(table, counts.remaining),
                            self._outlook, [list(c) for c in table], dict(counts.remaining))

    def prefetch(self, table, counts: DrawPileCounts) -> None:
        """After a change went out: start on its panel if anyone looked at one lately."""
        if counts.countable and time.monotonic() - self.last_wanted < PANEL_WANTED_SECONDS:
            self._panel_future(table, counts)

    def panel(self, table, counts: DrawPileCounts, lang: str, timeout: float = 10.0) -> dict | None:
        """What `advisor.hint_panel` shows for this table (no card in hand), in `lang`;
        None when the table cannot be counted."""
        self.last_wanted = time.monotonic()
        if not counts.countable or counts.completable_by(timeout) is None:
            return None
        found = self._panel_future(table, counts).result(timeout)
        return word_panel(found, counts, lang)

    def drawn_card(self, table, counts: DrawPileCounts, code: str, lang: str) -> dict | None:
        """Hints about the card just drawn ("This card can join two snakes!"): a few
        milliseconds, so asked when shown.  None when the card is not in the draw pile."""
        if not counts.countable or counts.completable_by() is None:
            return None
        try:
            card = self.deck.identity(self.deck.parse(code))
        except ValueError:
            return None
        if counts.remaining.get(card, 0) < 1:
            return None
        after = Counter(counts.remaining)
        after[card] -= 1   # the card is in the player's hand now, not in the pile
        panel = advisor.hint_panel(as_table(table), self.deck, +after, lang, card=card)
        return {"card": card.code, "name": hints.card_name(card.code, lang), "hints": panel["hints"]}

    def close(self) -> None:
        self._badge_pool.shutdown(wait=False, cancel_futures=True)
        self._panel_pool.shutdown(wait=False, cancel_futures=True)


def word_panel(found: advisor.Outlook, counts: DrawPileCounts, lang: str) -> dict:
    """The cached outlook in one language, shaped like `advisor.hint_panel(card=None)`."""
    n = found.pile.size
    return {"cards_left": n, "cards_left_text": hints.cards_left(n, lang),
            "by_colour": counts.by_colour, "jokers": counts.jokers,
            "badges": [{"chain": s.index, "cards_left": s.cards_left,
                        "text": hints.badge(s.cards_left, lang)} for s in found.snakes],
            "hints": [h.text(lang) for h in found.hints], "best": None}


def drawable(counts: DrawPileCounts, lang: str) -> list[tuple[str, str]]:
    """The cards one could draw now, as (code, name in `lang`), by name."""
    return sorted(((card.code, hints.card_name(card.code, lang))
                   for card, n in (counts.remaining or {}).items() if n), key=lambda c: c[1])


def is_complete_snake(codes: Sequence[str]) -> bool:
    """A whole snake lying out to be collected: its badge says so, not "no card completes it"."""
    try:
        return is_complete(as_chain(codes))
    except ValueError:
        return False


def badge_text(n: int | None, lang: str) -> str | None:
    return None if n is None else hints.badge(n, lang)
