"""The move advisor: every legal placement of the card in hand, ranked.

A placement is worth the cards it collects now, less what it hands the next
player: the expected number of cards the next draw collects from the table it
leaves (see `counting.give_away`, exact over the draw pile).  So a completing
placement beats one that completes nothing, and of two placements that
collect the same, the one that leaves no snake for the next player to finish
wins.  The look-ahead is one draw deep on purpose: it is what can be computed
exactly and explained to a child ("the next player could finish it").

Without a card in hand, `outlook` shows the draw pile, each snake's
"can be completed by N cards left", and for every card that could come next
the best place for it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping, Sequence

from .cards import Card
from .chains import Chain
from .counting import DrawPile, GiveAway, SnakeOutlook, give_away, snake_outlooks
from .deck import Deck
from .hints import DEFAULT_LANGUAGE, Hint, badge, cards_left
from .rules import Placement, Table, as_table, legal_placements


def table_after(placement: Placement) -> Table:
    """The table the next player sees: a completed snake has been collected."""
    if not placement.completes:
        return placement.table
    rest = list(placement.table)
    rest.remove(placement.chain)
    return tuple(rest)


@dataclass(frozen=True)
class RankedPlacement:
    """A legal placement with what it collects now and what it leaves the next player."""
    placement: Placement
    gain: int                   # cards collected now
    given: GiveAway             # what the next draw could collect afterwards
    hints: tuple[Hint, ...] = ()

    @property
    def score(self) -> Fraction:
        """Cards now, less the cards the next player is expected to collect."""
        return self.gain - self.given.expected_cards

    def sort_key(self) -> tuple:
        return (-self.score, -self.gain, self.given.chance)

    def to_json(self, table: Sequence[Chain], lang: str = DEFAULT_LANGUAGE) -> dict:
        p = self.placement
        return {"card": p.card.code, "action": "complete" if p.completes else p.action,
                "chains": list(p.used), "result": [c.code for c in p.chain],
                "description": p.describe(table),
                "collects": self.gain, "gives_away": self.given.to_json(),
                "score": str(self.score), "score_value": round(float(self.score), 6),
                "hints": [h.to_json(lang) for h in self.hints]}


def rank_placements(table: Sequence[Sequence[Card]], card: Card,
                    remaining_after: Mapping[Card, int]) -> list[RankedPlacement]:
    """Every legal placement of `card`, best first.

    `remaining_after` is the draw pile once `card` is drawn (by deck identity):
    the cards the next player draws from.  Ties keep the rules' listing order.
    """
    table = as_table(table)
    ranked = []
    for placement in legal_placements(table, card):
        gain = len(placement.chain) if placement.completes else 0
        given = give_away(table_after(placement), remaining_after)
        ranked.append(RankedPlacement(placement, gain, given, _placement_hints(placement, given, gain)))
    ranked.sort(key=RankedPlacement.sort_key)   # stable: equal keys keep the listing order
    return ranked


def best_placement(table: Sequence[Sequence[Card]], card: Card,
                   remaining_after: Mapping[Card, int]) -> Placement:
    """The advisor's choice (what `companion bench --advisor` plays)."""
    return rank_placements(table, card, remaining_after)[0].placement


def _placement_hints(placement: Placement, given: GiveAway, gain: int) -> tuple[Hint, ...]:
    hints = []
    if placement.completes:
        hints.append(Hint("join_complete" if placement.action == "join" else "complete",
                          {"cards": gain}))
    elif placement.action == "join":
        hints.append(Hint("join_two"))
    elif placement.action == "new":
        hints.append(Hint("fits_nowhere"))
    if given.cards_left:
        hints.append(Hint("gives_away", {"percent": round(100 * given.chance)}) if given.chance
                     else Hint("safe"))
    return tuple(hints)


def card_hints(ranked: Sequence[RankedPlacement], cards_left_after: int) -> list[Hint]:
    """The few things a child should hear about the card in hand, most important first."""
    hints = []
    completing = [r for r in ranked if r.gain]
    if completing:
        top = max(completing, key=lambda r: r.gain)
        hints.append(Hint("join_complete" if top.placement.action == "join" else "complete",
                          {"cards": top.gain}))
    if any(r.placement.action == "join" and not r.gain for r in ranked):
        hints.append(Hint("join_two"))
    if ranked and ranked[0].placement.action == "new":
        hints.append(Hint("fits_nowhere"))
    if cards_left_after == 0:
        hints.append(Hint("last_card"))
    elif ranked and any(r.given.chance for r in ranked) and not ranked[0].given.chance:
        hints.append(Hint("safe"))
    return hints


@dataclass
class Advice:
    """The advice for one card in hand."""
    table: Table
    card: Card
    pile: DrawPile                      # the draw pile after this card was drawn
    ranked: list[RankedPlacement]
    hints: list[Hint] = field(default_factory=list)

    def to_json(self, lang: str = DEFAULT_LANGUAGE) -> dict:
        return {"card": self.card.code, "draw_pile": self.pile.to_json(),
                "placements": [dict(r.to_json(self.table, lang), rank=i + 1)
                               for i, r in enumerate(self.ranked)],
                "hints": [h.to_json(lang) for h in self.hints]}


def advise(table: Sequence[Sequence[Card]], card: Card, deck: Deck,
           remaining: Mapping[Card, int]) -> Advice:
    """Rank the placements of `card`; `remaining` is the draw pile *after* it was drawn."""
    table = as_table(table)
    pile = DrawPile.of(deck, remaining)
    ranked = rank_placements(table, card, pile.counts)
    hints = card_hints(ranked, pile.size)
    if not table:   # the starter card: alone is where it belongs, not a card that "fits nowhere"
        hints = [h for h in hints if h.key != "fits_nowhere"]
    return Advice(table, card, pile, ranked, hints)


@dataclass(frozen=True)
class NextDraw:
    """One card that could be drawn next, how likely, and the best place for it."""
    card: Card
    copies: int
    chance: Fraction
    best: RankedPlacement
    options: int

    def to_json(self, table: Sequence[Chain], lang: str = DEFAULT_LANGUAGE) -> dict:
        return {"card": self.card.code, "copies": self.copies, "chance": str(self.chance),
                "chance_value": round(float(self.chance), 6), "options": self.options,
                "best": self.best.to_json(table, lang)}


@dataclass
class Outlook:
    """What the table and the draw pile promise before the next card is drawn."""
    table: Table
    pile: DrawPile
    snakes: list[SnakeOutlook]
    next_collects: GiveAway             # the next draw, whoever makes it, collects something
    next_draws: list[NextDraw]
    hints: list[Hint] = field(default_factory=list)

    def to_json(self, lang: str = DEFAULT_LANGUAGE) -> dict:
        return {"draw_pile": self.pile.to_json(),
                "snakes": [dict(s.to_json(), badge=badge(s.cards_left, lang)) for s in self.snakes],
                "next_draw_collects": self.next_collects.to_json(),
                "next_draws": [d.to_json(self.table, lang) for d in self.next_draws],
                "hints": [h.to_json(lang) for h in self.hints]}


def outlook_hints(draws: Sequence[NextDraw]) -> list[Hint]:
    """"Whoever draws the blue tail finishes a snake!": one per card left that collects,
    the biggest snakes first (joins are the tip players are told to look for)."""
    collecting = sorted((d for d in draws if d.best.gain), key=lambda d: (-d.best.gain, d.card))
    return [Hint("hope_join" if d.best.placement.action == "join" else "hope_complete",
                 {"card": d.card.code, "cards": d.best.gain}) for d in collecting]


def outlook(table: Sequence[Sequence[Card]], deck: Deck, remaining: Mapping[Card, int]) -> Outlook:
    """The draw pile, each snake's completers, and the best placement of every possible next draw."""
    table = as_table(table)
    pile = DrawPile.of(deck, remaining)
    draws = []
    for card, n in sorted(pile.counts.items()):
        after = Counter(pile.counts)
        after[card] -= 1
        ranked = rank_placements(table, card, after)
        draws.append(NextDraw(card, n, pile.chance([card]), ranked[0], len(ranked)))
    draws.sort(key=lambda d: (-d.best.gain, -d.chance, d.card))
    return Outlook(table, pile, snake_outlooks(table, pile.counts), give_away(table, pile.counts),
                   draws, outlook_hints(draws))


# --- for the dashboard -------------------------------------------------------------

def snake_badges(table: Sequence[Sequence[Card]], remaining: Mapping[Card, int],
                 lang: str = DEFAULT_LANGUAGE) -> list[dict]:
    """Per chain (in the table's order): {"chain", "cards_left", "text"} for the
    "can be completed by N cards left" badge; cheap enough for every table change."""
    return [{"chain": s.index, "cards_left": s.cards_left, "text": badge(s.cards_left, lang)}
            for s in snake_outlooks(table, remaining)]


def hint_panel(table: Sequence[Sequence[Card]], deck: Deck, remaining: Mapping[Card, int],
               lang: str = DEFAULT_LANGUAGE, card: Card | None = None) -> dict:
    """What the optional hint panel shows: cards left, the badges, and the hints, worded.

    `remaining` is the draw pile (see `counting.remaining_cards`); with `card` (the card
    just drawn, already taken out of `remaining`) the hints are about where to lay it.
    """
    pile = DrawPile.of(deck, remaining)
    if card is not None:
        advice = advise(table, card, deck, remaining)
        hints, best = advice.hints, advice.ranked[0].to_json(as_table(table), lang)
    else:
        hints, best = outlook_hints(outlook(table, deck, remaining).next_draws), None
    return {"cards_left": pile.size, "cards_left_text": cards_left(pile.size, lang),
            "by_colour": pile.by_colour(), "jokers": pile.jokers(),
            "badges": snake_badges(table, remaining, lang),
            "hints": [h.text(lang) for h in hints], "best": best}
