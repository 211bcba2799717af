"""Chains: cards laid end to end, in physical order.

A chain is a tuple of `Card` in the order they lie, each middle-section oriented
as read along the chain (its first colour faces the previous card).  Read from
the other end it is the same chain: `canonical` picks one of the two readings
so that chains can be compared and counted as multisets.

This module knows what a chain *is* (its ends, whether it is complete, what is
wrong with it); what may be done to it on a turn lives in `rules`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from .cards import Card, Kind

Chain = tuple[Card, ...]

# Stable problem codes, shared with the referee's move verdicts.
COLOUR_MISMATCH = "colour_mismatch"
CLOSED_END = "closed_end"
HEAD_TAIL_ADJACENT = "head_tail_adjacent"
TWO_HEADS = "two_heads"
TWO_TAILS = "two_tails"


def as_card(card: Card | str) -> Card:
    return card if isinstance(card, Card) else Card.parse(card)


def as_chain(cards: Iterable[Card | str]) -> Chain:
    """A chain from cards or card codes, in the order given."""
    return tuple(as_card(c) for c in cards)


def reverse_chain(chain: Sequence[Card]) -> Chain:
    """The same chain read from its other end."""
    return tuple(card.flipped() for card in reversed(chain))


def canonical(chain: Sequence[Card]) -> Chain:
    """One fixed reading of a chain, the same for both directions."""
    chain = tuple(chain)
    return min(chain, reverse_chain(chain), key=_sort_key)


def _sort_key(chain: Chain) -> tuple:
    return tuple((card.kind.value, card.colours) for card in chain)


def same_chain(a: Sequence[Card], b: Sequence[Card]) -> bool:
    return canonical(a) == canonical(b)


def table_multiset(table: Iterable[Sequence[Card]]) -> Counter[Chain]:
    """A table as a multiset of canonical chains: listing order and direction vanish."""
    return Counter(canonical(chain) for chain in table if len(chain))


def chain_codes(chain: Sequence[Card]) -> list[str]:
    return [card.code for card in chain]


def code_key(chain: Sequence[Card]) -> tuple[str, ...]:
    """A chain's codes as a tuple: a stable sort key, so verdicts never depend on set order."""
    return tuple(card.code for card in chain)


def describe_chain(chain: Sequence[Card]) -> str:
    return "[" + " ".join(chain_codes(chain)) + "]"


def _is_joker(card: Card) -> bool:
    return card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL)


def facing_colour(card: Card, towards_next: bool) -> str | None:
    """The colour a card shows at the edge facing its neighbour; None = a joker (any middle colour)."""
    if card.kind is Kind.MIDDLE:
        return card.colours[1] if towards_next else card.colours[0]
    if _is_joker(card):
        return None
    return card.colours[0]


@dataclass(frozen=True)
class End:
    """An open end of a chain: where a card may still be laid.

    `side` 0 is before the chain's first card, 1 after its last.  `colour` is
    what a middle laid there must show (None: any colour, a joker's end).
    `piece` is the card forming the end, so a rule can see that a lone head
    takes only a middle.
    """
    side: int
    colour: str | None
    piece: Card


def open_ends(chain: Sequence[Card]) -> list[End]:
    """The ends of a chain where a card may still be laid.

    A middle-section at either end leaves that end open.  A head or tail closes
    its end; alone on the table it still has its one connecting edge open (by
    convention a lone head opens after itself, a lone tail before itself, so a
    chain reads head first).
    """
    chain = tuple(chain)
    if not chain:
        return []
    if len(chain) == 1:
        card = chain[0]
        if card.kind is Kind.MIDDLE:
            return [End(0, card.colours[0], card), End(1, card.colours[1], card)]
        if card.kind.is_head:
            return [End(1, facing_colour(card, True), card)]
        if card.kind.is_tail:
            return [End(0, facing_colour(card, False), card)]
        return []
    ends = []
    if chain[0].kind is Kind.MIDDLE:
        ends.append(End(0, chain[0].colours[0], chain[0]))
    if chain[-1].kind is Kind.MIDDLE:
        ends.append(End(1, chain[-1].colours[1], chain[-1]))
    return ends


@dataclass(frozen=True)
class Problem:
    """Something wrong with a chain as it lies.

    `code` is stable (see the module constants), `cards` are positions in the
    chain, `message` is a sentence a referee can read aloud.
    """
    code: str
    cards: tuple[int, ...]
    message: str

    def to_json(self) -> dict:
        return {"code": self.code, "cards": list(self.cards), "message": self.message}


def junction_problem(left: Card, right: Card, positions: tuple[int, int]) -> Problem | None:
    """What is wrong where `left` meets `right` (in reading order), if anything.

    Two heads or two tails side by side are reported by `check_chain` as a
    chain-wide count, not here, so each fault is named once.
    """
    for card in (left, right):
        if not card.kind.is_face:
            raise ValueError(f"{card.code} is not a card face and cannot be in a chain")
    if left.kind.is_end_piece and right.kind.is_end_piece:
        if left.kind.is_head != right.kind.is_head:
            return Problem(HEAD_TAIL_ADJACENT, positions,
                           f"{left.code} touches {right.code}: a head and a tail need at least "
                           f"one middle-section between them.")
        return None
    a, b = facing_colour(left, True), facing_colour(right, False)
    if a is None or b is None or a == b:
        return None
    return Problem(COLOUR_MISMATCH, positions,
                   f"{left.code} meets {right.code}: {a} does not match {b}.")


def check_chain(chain: Sequence[Card]) -> list[Problem]:
    """Every rule a chain seen on the table breaks, in reading order; [] for a sound chain."""
    chain = tuple(chain)
    problems: list[Problem] = []
    for i in range(len(chain) - 1):
        found = junction_problem(chain[i], chain[i + 1], (i, i + 1))
        if found:
            problems.append(found)
    for i in range(1, len(chain) - 1):
        if chain[i].kind.is_end_piece:
            problems.append(Problem(CLOSED_END, (i - 1, i, i + 1),
                                    f"{chain[i].code} is inside a snake: nothing may be laid "
                                    f"beyond a head or a tail."))
    heads = [i for i, card in enumerate(chain) if card.kind.is_head]
    tails = [i for i, card in enumerate(chain) if card.kind.is_tail]
    if len(heads) > 1:
        problems.append(Problem(TWO_HEADS, tuple(heads),
                                "A snake has two heads: " + ", ".join(chain[i].code for i in heads) + "."))
    if len(tails) > 1:
        problems.append(Problem(TWO_TAILS, tuple(tails),
                                "A snake has two tails: " + ", ".join(chain[i].code for i in tails) + "."))
    return problems


def is_complete(chain: Sequence[Card]) -> bool:
    """Head, at least one middle-section, tail, every colour matching (jokers match any middle)."""
    chain = tuple(chain)
    if len(chain) < 3:
        return False
    ends = {chain[0].kind.is_head, chain[-1].kind.is_head}
    closed = all(card.kind.is_end_piece for card in (chain[0], chain[-1]))
    middles = all(card.kind is Kind.MIDDLE for card in chain[1:-1])
    return closed and ends == {True, False} and middles and not check_chain(chain)


def is_closed(chain: Sequence[Card]) -> bool:
    """No card can be laid on it any more."""
    return bool(chain) and not open_ends(chain)
