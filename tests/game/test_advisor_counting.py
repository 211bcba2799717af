"""Card counting: the draw pile, and exact give-away chances checked by brute force."""
from collections import Counter
from fractions import Fraction
from itertools import permutations

import pytest
from hypothesis import given, settings, strategies as st

from companion.game.cards import Card
from companion.game.counting import (CountingError, DrawPile, best_collection, give_away,
                                     remaining_cards, snake_outlooks)
from companion.game.chains import as_chain
from companion.game.deck import Deck, load_deck
from companion.game.rules import as_table, legal_placements
from companion.game.simulate import simulate_game

C = Card.parse

# Eleven cards in three colours: small enough to enumerate every order of the draw pile.
SMALL = Deck.from_dict({"colours": ["red", "blue", "green"], "cards": {
    "H-red": 1, "H-blue": 1, "T-red": 1, "T-green": 1, "M-red-blue": 2, "M-blue-green": 2,
    "M-red-green": 1, "RH": 1, "RT": 1}})


def table(*chains):
    return as_table([as_chain(c.split()) for c in chains])


def brute_force_next_draw(tbl, deck: Deck, seen: list[Card]) -> tuple[Fraction, Fraction]:
    """Enumerate every order of the physical cards left; the next player draws the first one
    and collects the largest snake `legal_placements` offers on the whole table."""
    pile = list(deck.cards())
    for card in seen:
        pile.remove(deck.identity(card))
    collect = {}
    for i, card in enumerate(pile):
        collect[i] = max((len(p.chain) for p in legal_placements(tbl, card) if p.completes), default=0)
    orders = hits = cards = 0
    for order in permutations(range(len(pile))):
        orders += 1
        hits += collect[order[0]] > 0
        cards += collect[order[0]]
    return Fraction(hits, orders), Fraction(cards, orders)


def seen_on(tbl, *extra):
    return [c for chain in tbl for c in chain] + [C(x) for x in extra]


def test_remaining_subtracts_table_piles_and_the_card_in_hand():
    tbl = table("H-red M-red-blue", "M-blue-green")
    piles = {"Ann": [as_chain(["H-blue", "M-blue-green", "T-green"])]}
    left = remaining_cards(SMALL, tbl, piles, [C("RT")])
    assert sum(left.values()) == SMALL.size - 7
    assert left[C("M-blue-green")] == 0 and C("M-blue-green") not in left
    assert left[C("M-red-blue")] == 1 and left[C("RH")] == 1 and left[C("RT")] == 0
    # a middle counts the same whichever way round it lies
    assert remaining_cards(SMALL, table("M-blue-red"))[C("M-red-blue")] == 1


def test_remaining_refuses_more_copies_than_the_deck_holds():
    with pytest.raises(CountingError, match="H-red is seen 2 times but the deck has 1"):
        remaining_cards(SMALL, table("H-red M-red-blue"), {"A": [as_chain(["H-red"])]})


def test_draw_pile_counts_per_colour_and_jokers():
    pile = DrawPile.of(SMALL, remaining_cards(SMALL, table("H-red M-red-blue")))
    assert pile.size == 9
    by = pile.by_colour()
    assert by["red"] == {"heads": 0, "tails": 1, "middles": 2}    # M-red-blue x1, M-red-green
    assert by["blue"] == {"heads": 1, "tails": 0, "middles": 3}   # M-red-blue x1, M-blue-green x2
    assert by["green"] == {"heads": 0, "tails": 1, "middles": 3}
    assert pile.jokers() == {"rainbow_head": 1, "rainbow_tail": 1}
    assert pile.chance([C("M-blue-green")]) == Fraction(2, 9)


@pytest.mark.parametrize("chains, also_seen", [
    (("H-red M-red-blue", "M-blue-green T-green"), ()),   # RT completes the first, RH the second
    (("H-red M-red-green", "T-red"), ("H-blue",)),        # T-red cannot follow green: a join could
    (("H-blue", "M-red-green T-green"), ()),              # M-red-blue joins them (4), H-red/RH (3)
    (("M-blue-red",), ("T-red", "H-blue")),               # needs two more cards: nobody collects
    (("H-red M-red-blue M-blue-green",), ()),             # T-green and RT complete it
    (("H-red M-red-blue", "M-blue-green"), ("RT", "T-red", "T-green")),   # no tail left at all
])
def test_give_away_is_exactly_the_brute_force_enumeration(chains, also_seen):
    tbl = table(*chains)
    seen = seen_on(tbl, *also_seen)
    remaining = remaining_cards(SMALL, tbl, extra=[C(x) for x in also_seen])
    assert sum(remaining.values()) <= 8          # at most 8! orders to enumerate
    found = give_away(tbl, remaining)
    chance, expected = brute_force_next_draw(tbl, SMALL, seen)
    assert (found.chance, found.expected_cards) == (chance, expected)
    assert found.cards_left == sum(remaining.values())


def test_give_away_counts_copies_not_card_names():
    # [H-blue] and [M-red-green T-green]: only M-red-blue (two copies left) collects
    tbl = table("H-blue", "M-red-green T-green")
    found = give_away(tbl, remaining_cards(SMALL, tbl, extra=[C("H-red"), C("RH")]))
    assert found.collecting_cards == 2 and found.cards_left == 6
    assert found.chance == Fraction(2, 6) and found.expected_cards == Fraction(2 * 4, 6)


def test_nothing_is_given_away_when_the_pile_is_empty():
    found = give_away(table("H-red M-red-blue"), Counter())
    assert found.chance == 0 and found.expected_cards == 0 and found.cards_left == 0


def test_snake_outlook_counts_the_cards_left_that_complete_each_snake():
    tbl = table("H-red M-red-blue M-blue-green", "M-red-green", "H-blue")
    outlooks = snake_outlooks(tbl, remaining_cards(SMALL, tbl))
    first, middle, lone_head = outlooks
    assert dict(first.completed_by) == {C("T-green"): 1, C("RT"): 1}
    assert first.cards_left == 2
    assert middle.cards_left == 0        # needs a head and a tail: two more cards
    assert lone_head.cards_left == 0     # a head alone needs a middle and a tail


def test_snake_outlook_names_the_join_partner():
    tbl = table("H-blue", "M-red-green T-green", "M-green-blue")
    outlooks = snake_outlooks(tbl, remaining_cards(SMALL, tbl))
    assert dict(outlooks[0].joined_with) == {C("M-red-blue"): (1,)}
    assert dict(outlooks[1].joined_with) == {C("M-red-blue"): (0,)}
    assert outlooks[0].cards_left == 2                 # the two copies of M-red-blue
    assert outlooks[1].cards_left == 4                 # those, H-red and RH
    assert outlooks[2].cards_left == 0


DECK = load_deck()


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), at=st.floats(0.2, 0.9))
def test_decomposed_counting_agrees_with_legal_placements_on_the_whole_table(seed, at):
    """Collections are asked chain by chain and pair by pair; the rules over the whole
    table must give the same best collection for every card left."""
    game = simulate_game(["A", "B", "C"], seed, DECK)
    f = int(at * (len(game.frames) - 1))
    tbl = as_table(game.frames[f])
    remaining = remaining_cards(DECK, tbl, game.piles_after[f])
    best = best_collection(tbl, remaining)
    for card in remaining:
        whole = max((len(p.chain) for p in legal_placements(tbl, card) if p.completes), default=0)
        assert best[card] == whole, card
