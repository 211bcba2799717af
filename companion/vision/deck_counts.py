"""No more copies of a card on the table than the deck holds.

Each colour is on one head and one tail only (`CARDS.md`), and a print that
moves orange towards red makes two red tails of a red and an orange one: the
model is unsure of one of them, and the deck says which.  The readings
are taken surest first; a reading of a card whose copies the surer readings
have all taken is given its likeliest other colouring that the deck still holds.
A reading with no such colouring keeps what it was read as: the camera may
really see a card from another deck, and the tracker flags such a copy.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

from companion.game.deck import Deck

from .extend import card_of
from .recognise import ALTERNATIVE_SHARE, CardReading, alternatives, end_odds


def within_the_deck(readings: list[CardReading], deck: Deck, colours: list[str]) -> list[CardReading]:
    """`readings`, in their order, with the less sure of too many copies of a card recoloured."""
    held: Counter = Counter()
    out = list(readings)
    for i in sorted(range(len(readings)), key=lambda i: -readings[i].confidence):
        r = readings[i]
        card = card_of(r)
        if card is None or not r.colours:
            continue
        if _copy_left(r, tuple(r.colours), deck, held):
            held[deck.identity(card)] += 1
            continue
        odds = end_odds(r.colour_probs, colours)
        other = _likeliest_held(r, odds, deck, held)
        if other is None:
            continue
        read = max(odds.get(tuple(r.colours), 0.0), odds[other])
        confidence = round(r.confidence * odds[other] / read, 4)
        # (the colourings whose copies are all taken are no longer the likelier)
        left = tuple((c, p) for c, p in alternatives(list(other), odds, confidence)
                     if _copy_left(r, c, deck, held))
        out[i] = replace(r, colours=list(other), confidence=confidence, alternatives=left)
        held[deck.identity(card_of(out[i]))] += 1
    return out


def _copy_left(reading: CardReading, colouring: tuple[str, ...], deck: Deck, held: Counter) -> bool:
    card = deck.identity(card_of(replace(reading, colours=list(colouring))))
    return held[card] < deck.count(card)


def _likeliest_held(reading: CardReading, odds: dict[tuple[str, ...], float], deck: Deck,
                    held: Counter) -> tuple[str, ...] | None:
    """The likeliest colouring of the reading, other than its own, of which the deck holds a
    copy not yet taken; None when none is likely enough to be worth reporting."""
    least = ALTERNATIVE_SHARE * max(odds.values(), default=0.0)
    for colouring, p in sorted(odds.items(), key=lambda kv: -kv[1]):
        if p < least:
            break
        if colouring == tuple(reading.colours) or len(set(colouring)) < len(colouring):
            continue
        if _copy_left(reading, colouring, deck, held):
            return colouring
    return None
