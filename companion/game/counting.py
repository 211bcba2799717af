"""Card counting: what is left in the draw pile, and what each card left could collect.

Everything here is exact.  The draw pile is the deck minus every card seen
(table, collected piles, the card in hand); a draw is uniform over the
physical cards left, so a probability is a `Fraction` of copies, never a
guess.  Which card completes what is asked of the rules (`completions`, which
runs `legal_placements`), never worked out again here.

A "collection" is what the player drawing a card can take at once: one chain
completed by a head or tail, or two chains joined by a middle into one
complete snake.  Only those two shapes exist (a middle laid at an end leaves
that end open; only a middle may join), so they are asked chain by chain and
pair by pair and cached: between two turns one chain changes, the rest of the
table answers from the cache.  `tests/game/test_advisor_counting.py` checks
the result against `legal_placements` over the whole table.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from .cards import Card, Kind
from .chains import Chain, canonical, open_ends
from .deck import Deck, DeckError
from .rules import as_table, completions


class CountingError(DeckError):
    """The cards seen do not fit the deck (more copies than it holds)."""


# --- the draw pile --------------------------------------------------------------

def cards_of(chains: Iterable[Iterable[Card]]) -> list[Card]:
    return [card for chain in chains for card in chain]


def remaining_cards(deck: Deck, table: Sequence[Sequence[Card]] = (),
                    piles: Mapping[str, Sequence[Sequence[Card]]] | None = None,
                    extra: Iterable[Card] = ()) -> Counter[Card]:
    """The draw pile by deck identity: the deck minus the table, the piles and `extra`
    (the card in hand).  Raises `CountingError` when more copies were seen than exist."""
    seen = cards_of(table) + [c for snakes in (piles or {}).values() for c in cards_of(snakes)]
    seen += list(extra)
    left = deck.remaining(c for c in seen if c.kind.is_face)
    over = sorted(card for card, n in left.items() if n < 0)
    if over:
        card = over[0]
        raise CountingError(f"{card.code} is seen {deck.count(card) - left[card]} times but the deck "
                            f"has {deck.count(card)}")
    return +left


@dataclass(frozen=True)
class DrawPile:
    """The cards left to draw, by deck identity."""
    counts: Mapping[Card, int]
    colours: tuple[str, ...]

    @classmethod
    def of(cls, deck: Deck, remaining: Mapping[Card, int]) -> "DrawPile":
        return cls(dict(+Counter(remaining)), deck.colours)

    @property
    def size(self) -> int:
        return sum(self.counts.values())

    def chance(self, cards: Iterable[Card]) -> Fraction:
        """The chance that the next draw is one of these identities."""
        if not self.size:
            return Fraction(0)
        return Fraction(sum(self.counts.get(c, 0) for c in set(cards)), self.size)

    def by_colour(self) -> dict[str, dict[str, int]]:
        """Per colour: heads, tails and middle-sections left showing it at an end."""
        out = {c: {"heads": 0, "tails": 0, "middles": 0} for c in self.colours}
        for card, n in self.counts.items():
            field = {Kind.HEAD: "heads", Kind.TAIL: "tails", Kind.MIDDLE: "middles"}.get(card.kind)
            for colour in set(card.colours) if field else ():
                out.setdefault(colour, {"heads": 0, "tails": 0, "middles": 0})[field] += n
        return out

    def jokers(self) -> dict[str, int]:
        return {"rainbow_head": sum(n for c, n in self.counts.items() if c.kind is Kind.RAINBOW_HEAD),
                "rainbow_tail": sum(n for c, n in self.counts.items() if c.kind is Kind.RAINBOW_TAIL)}

    def to_json(self) -> dict:
        return {"cards_left": self.size,
                "by_colour": self.by_colour(),
                "jokers": self.jokers(),
                "cards": {card.code: n for card, n in sorted(self.counts.items())}}


# --- which card collects what ---------------------------------------------------

@lru_cache(maxsize=50_000)   # a game needs a few thousand; a long-running dashboard stays small
def _completes(chains: tuple[Chain, ...], card: Card) -> bool:
    """Whether `card` turns exactly these (canonical) chains into one complete snake."""
    return bool(completions(chains, Counter({card: 1})))


def _has(chain: Chain, test) -> bool:
    return any(test(card.kind) for card in chain)


@dataclass(frozen=True)
class Collection:
    """One way the drawer of `card` collects: `chains` are table indices, `cards` the snake's size."""
    card: Card
    chains: tuple[int, ...]
    cards: int


def _may_touch(card: Card, colours: set) -> bool:
    """A cheap necessary condition for laying `card` at one of these open ends (None: a joker's
    end, any colour); only what passes is put to the rules."""
    if None in colours or card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL):
        return True
    return bool(colours.intersection(card.colours))


def collections(table: Sequence[Sequence[Card]], available: Iterable[Card]) -> list[Collection]:
    """Every (card identity, chain or chain pair) that one draw could collect at once."""
    table = as_table(table)
    available = sorted(set(available))
    ends = [c for c in available if c.kind.is_end_piece]
    middles = [c for c in available if c.kind is Kind.MIDDLE]
    keys = [canonical(chain) for chain in table]
    colours = [{end.colour for end in open_ends(chain)} for chain in table]
    # One card adds one head or tail: a chain (or pair) without either cannot be finished.
    heads = [i for i, k in enumerate(keys) if colours[i] and _has(k, lambda k: k.is_head)]
    tails = [i for i, k in enumerate(keys) if colours[i] and _has(k, lambda k: k.is_tail)]
    found: list[Collection] = []
    for i in sorted(heads + tails):
        for card in ends:
            if _may_touch(card, colours[i]) and _completes((keys[i],), card):
                found.append(Collection(card, (i,), len(keys[i]) + 1))
    for i in heads:
        for j in tails:
            if i == j:
                continue
            for card in middles:
                if (_may_touch(card, colours[i]) and _may_touch(card, colours[j])
                        and _completes((keys[i], keys[j]), card)):
                    found.append(Collection(card, (i, j), len(keys[i]) + len(keys[j]) + 1))
    return found


def best_collection(table: Sequence[Sequence[Card]], available: Iterable[Card]) -> dict[Card, int]:
    """For each available identity, the most cards its drawer could collect at once (0: none)."""
    best = {card: 0 for card in available}
    for c in collections(table, best):
        best[c.card] = max(best[c.card], c.cards)
    return best


@dataclass(frozen=True)
class GiveAway:
    """What the next draw could collect from a table: exact over the draw pile."""
    chance: Fraction            # the next player can collect something
    expected_cards: Fraction    # cards the next player collects on average (collecting the most)
    collecting_cards: int       # copies left that collect
    cards_left: int

    def to_json(self) -> dict:
        return {"chance": str(self.chance), "chance_value": round(float(self.chance), 6),
                "expected_cards": str(self.expected_cards),
                "expected_cards_value": round(float(self.expected_cards), 6),
                "collecting_cards": self.collecting_cards, "cards_left": self.cards_left}


def give_away(table: Sequence[Sequence[Card]], remaining: Mapping[Card, int]) -> GiveAway:
    """The chance that whoever draws next from `remaining` can collect from `table`, and how much."""
    remaining = +Counter(remaining)
    total = sum(remaining.values())
    if not total:
        return GiveAway(Fraction(0), Fraction(0), 0, 0)
    best = best_collection(table, remaining)
    hits = sum(remaining[c] for c, n in best.items() if n)
    cards = sum(remaining[c] * n for c, n in best.items())
    return GiveAway(Fraction(hits, total), Fraction(cards, total), hits, total)


@dataclass(frozen=True)
class SnakeOutlook:
    """A chain on the table and the cards left that would complete it in one draw."""
    index: int
    chain: Chain
    completed_by: Mapping[Card, int]     # identity -> copies left (alone or by a join)
    joined_with: Mapping[Card, tuple[int, ...]]   # identity -> other chains it joins this one to

    @property
    def cards_left(self) -> int:
        """The badge's N: copies left in the draw pile that complete this snake."""
        return sum(self.completed_by.values())

    def to_json(self) -> dict:
        return {"chain": self.index, "cards": [c.code for c in self.chain],
                "completed_by_cards_left": self.cards_left,
                "completed_by": {c.code: n for c, n in sorted(self.completed_by.items())},
                "joins": {c.code: list(js) for c, js in sorted(self.joined_with.items())}}


def snake_outlooks(table: Sequence[Sequence[Card]], remaining: Mapping[Card, int]
                   ) -> list[SnakeOutlook]:
    """Per chain on the table, the cards left that complete it (alone or joined to another)."""
    table = as_table(table)
    remaining = +Counter(remaining)
    by: list[dict[Card, int]] = [{} for _ in table]
    joins: list[dict[Card, set[int]]] = [{} for _ in table]
    for c in collections(table, remaining):
        for i in c.chains:
            by[i][c.card] = remaining[c.card]
            others = [j for j in c.chains if j != i]
            if others:
                joins[i].setdefault(c.card, set()).update(others)
    return [SnakeOutlook(i, chain, by[i], {c: tuple(sorted(js)) for c, js in joins[i].items()})
            for i, chain in enumerate(table)]
