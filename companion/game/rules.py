"""What a turn may do: where a drawn card may go, and what laying it there breaks.

A table is a sequence of chains (see `chains`).  On a turn the player lays
the one card just drawn: at an open end of a chain, between the open ends of
two chains (joining them; only the card just drawn may join), or alone, which
is allowed only when it fits nowhere.  Whoever completes a snake collects it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from .cards import Card, Kind
from .chains import (CLOSED_END, TWO_HEADS, TWO_TAILS, Chain, Problem, as_chain, canonical, code_key,
                     check_chain, describe_chain, is_complete, junction_problem, open_ends,
                     reverse_chain, table_multiset)

# Stable codes of verdicts that are about a whole move rather than one chain.
COULD_ATTACH = "could_attach"
TWO_CARDS = "two_cards"
REARRANGED = "rearranged"
COLLECTED_INCOMPLETE = "collected_incomplete"
DECK_EXCEEDED = "deck_exceeded"
CARD_REMOVED = "card_removed"
COMPLETION_UNSEEN = "completion_unseen"

Table = tuple[Chain, ...]

END_TO_END_MAX = 8   # chains vanished at once that `lying_end_to_end` weighs, at most


def as_table(table: Iterable[Iterable[Card | str]]) -> Table:
    return tuple(as_chain(chain) for chain in table if chain)


@dataclass(frozen=True)
class Placement:
    """One way to lay a card.

    `action` is "new" (alone), "extend" or "join"; `used` are the indices of the
    table's chains the card attaches to; `chain` is the chain the card is now in
    (the card oriented as read there, at index `position`); `table` is the whole
    table afterwards
    (the new chain where the first used chain was); `completes` says the
    result is a complete snake, which its player collects.
    """
    card: Card
    action: str
    used: tuple[int, ...]
    chain: Chain
    position: int
    table: Table
    completes: bool

    def describe(self, table: Sequence[Sequence[Card]]) -> str:
        if self.action == "new":
            return f"lay {self.card.code} alone"
        parts = " and ".join(describe_chain(table[i]) for i in self.used)
        verb = "join" if self.action == "join" else "extend"
        return f"{verb} {parts}" + (", completing the snake" if self.completes else "")


def orientations(card: Card) -> list[Card]:
    """The ways a card can be read along a chain (a middle can be turned round)."""
    if card.kind is Kind.MIDDLE and card.colours[0] != card.colours[1]:
        return [card, card.flipped()]
    return [card]


def placement_problems(chain: Sequence[Card], position: int) -> list[Problem]:
    """What laying the card at `position` broke, given the rest was there before.

    Only faults the new card causes count: its own junctions, a head or tail it
    buried inside the chain (its own or a neighbour's), and a second head or
    tail it brought into the chain (or brought together by joining).
    """
    chain = tuple(chain)
    card, last = chain[position], len(chain) - 1
    found: list[Problem] = []
    if position > 0:
        p = junction_problem(chain[position - 1], card, (position - 1, position))
        if p:
            found.append(p)
    if position < last:
        p = junction_problem(card, chain[position + 1], (position, position + 1))
        if p:
            found.append(p)
    buried = [i for i in (position - 1, position, position + 1)
              if 0 < i < last and chain[i].kind.is_end_piece]
    for i in buried:
        found.append(Problem(CLOSED_END, (i,),
                             f"{chain[i].code} closes its end of the snake: {card.code} cannot be laid "
                             f"beyond it." if i != position else
                             f"{card.code} cannot go inside a snake: a head or tail only closes an end."))
    before, after = chain[:position], chain[position + 1:]
    for kind_test, code, word in ((lambda k: k.is_head, TWO_HEADS, "head"),
                                  (lambda k: k.is_tail, TWO_TAILS, "tail")):
        left = [i for i, c in enumerate(before) if kind_test(c.kind)]
        right = [position + 1 + i for i, c in enumerate(after) if kind_test(c.kind)]
        mine = [position] if kind_test(card.kind) else []
        if (mine and (left or right)) or (left and right):
            where = sorted(left + mine + right)
            found.append(Problem(code, tuple(where),
                                 f"That gives the snake two {word}s: "
                                 + ", ".join(chain[i].code for i in where) + "."))
    return found


def _placed(table: Table, used: tuple[int, ...], chain: Chain) -> Table:
    """The table with the used chains replaced by `chain`, which takes the first one's place."""
    rest = [c for i, c in enumerate(table) if i not in used]
    at = sum(1 for i in range(min(used)) if i not in used) if used else len(rest)
    return tuple(rest[:at] + [chain] + rest[at:])


def _readings(chain: Chain) -> list[Chain]:
    """A chain read both ways (once if it reads the same)."""
    back = reverse_chain(chain)
    return [chain] if back == chain else [chain, back]


def legal_placements(table: Sequence[Sequence[Card]], card: Card) -> list[Placement]:
    """Every legal way to lay the card just drawn; alone only when it fits nowhere.

    Placements giving the same table (e.g. onto two identical chains) are listed once.
    """
    table = as_table(table)
    if not card.kind.is_face:
        raise ValueError(f"{card.code} is not a card face")
    found: list[Placement] = []
    seen: set = set()

    def offer(action: str, used: tuple[int, ...], chain: Chain, position: int) -> None:
        if placement_problems(chain, position):
            return
        after = _placed(table, used, chain)
        key = (frozenset(table_multiset(after).items()), action)
        if key in seen:
            return
        seen.add(key)
        found.append(Placement(chain[position], action, used, chain, position, after,
                               is_complete(chain)))

    for i, chain in enumerate(table):
        for turned in orientations(card):
            offer("extend", (i,), (turned,) + chain, 0)
            offer("extend", (i,), chain + (turned,), len(chain))
    if card.kind is Kind.MIDDLE:
        # only chains with an open end the card could meet can be joined (saves n² checks)
        touching = [i for i, chain in enumerate(table)
                    if any(e.colour is None or e.colour in card.colours for e in open_ends(chain))]
        for i in touching:
            first = table[i]
            for j in touching:
                second = table[j]
                if i == j:
                    continue
                # a list, not a set: the order must not hang on string hashing (same seed, same game)
                for left in _readings(first):
                    for right in _readings(second):
                        for turned in orientations(card):
                            offer("join", (i, j), left + (turned,) + right, len(left))
    if not found:
        chain = (card,)
        found.append(Placement(card, "new", (), chain, 0, table + (chain,), False))
    return found


def fits_somewhere(table: Sequence[Sequence[Card]], card: Card) -> list[Placement]:
    """The placements other than laying the card alone ([] when it fits nowhere)."""
    return [p for p in legal_placements(table, card) if p.action != "new"]


@dataclass(frozen=True)
class Completion:
    """How vanished chains could have been completed by one unseen card."""
    card: Card
    used: tuple[Chain, ...]
    snake: Chain
    position: int      # where the card lies in `snake`


def completions(chains: Sequence[Sequence[Card]], available: Counter) -> list[Completion]:
    """Every card still available (by deck identity) that, laid legally, turns exactly
    these chains (one, or two joined) into one complete snake."""
    chains = as_table(chains)
    if not chains or len(chains) > 2:
        return []
    out: list[Completion] = []
    for card, n in sorted(available.items()):
        if n <= 0:
            continue
        for placement in legal_placements(chains, card):
            if placement.completes and len(placement.used) == len(chains):
                out.append(Completion(placement.card, chains, placement.chain, placement.position))
    return out


def explain_vanished(chains: Sequence[Sequence[Card]], available: Counter
                     ) -> list[tuple[tuple[Chain, ...], list[Completion]]]:
    """Group incomplete chains that left the table into unseen completions.

    Two chains one middle could have joined into a complete snake are paired
    first (one card explains both); then chains that lay end to end, which one
    card made a complete snake (`lying_end_to_end`): one turn explains them
    all, where alone each would need a turn of its own or be a snake taken
    incomplete.  Each remaining chain stands alone.  Each group comes with its
    possible completions: exactly one means the missing card is known, none
    means an incomplete snake was taken.
    """
    pending = sorted((canonical(c) for c in as_table(chains)), key=code_key)
    groups: list[tuple[tuple[Chain, ...], list[Completion]]] = []
    i = 0
    while i < len(pending):
        paired = False
        for j in range(i + 1, len(pending)):
            joined = completions((pending[i], pending[j]), available)
            if joined:
                groups.append(((pending[i], pending[j]), joined))
                del pending[j]
                paired = True
                break
        if not paired:
            groups.append(((pending[i],), completions((pending[i],), available)))
        i += 1
    while True:
        alone = [k for k, (group, _) in enumerate(groups) if len(group) == 1]
        found = lying_end_to_end([groups[k][0][0] for k in alone], available)
        if found is None:
            return groups
        used, options = found
        # (the group takes the place of its first chain: the others' turns keep their order)
        groups[alone[used[0]]] = (tuple(groups[alone[k]][0][0] for k in used), options)
        groups = [g for k, g in enumerate(groups) if k not in {alone[u] for u in used[1:]}]


def lying_end_to_end(chains: Sequence[Chain], available: Counter
                     ) -> tuple[tuple[int, ...], list[Completion]] | None:
    """The most of these chains (two at least) that, read end to end in some order and
    either way round, form one chain that one available card completes at an end: their
    indexes in `chains` (in that order) and the completions; None when no two do.  (A
    middle meets a middle of its colour at each place they touch: nothing lies between.)

    The chain so formed starts with the head or tail of its first piece; the others are
    middles only, and the card is the other end.  At most `END_TO_END_MAX` chains are
    weighed: more vanishing at once is no longer a turn the camera missed."""
    if len(chains) > END_TO_END_MAX:
        return None
    best: tuple[tuple[int, ...], list[Completion]] | None = None
    middles = [k for k, c in enumerate(chains) if all(card.kind is Kind.MIDDLE for card in c)]

    def grow(order: tuple[int, ...], chain: Chain) -> None:
        nonlocal best
        if len(order) >= 2 and (best is None or len(order) > len(best[0])):
            found = completions((chain,), available)
            if found:
                used = tuple(chains[k] for k in order)
                best = (order, [Completion(c.card, used, c.snake, c.position) for c in found])
        for k in middles:
            for way in [] if k in order else _readings(chains[k]):
                if chain[-1].kind is Kind.MIDDLE and junction_problem(chain[-1], way[0], (0, 1)) is None:
                    grow(order + (k,), chain + way)

    for k, piece in enumerate(chains):
        for way in _readings(piece):
            if way[0].kind.is_end_piece:
                grow((k,), way)
    return best


def table_problems(table: Sequence[Sequence[Card]], deck=None) -> list[tuple[int, Problem]]:
    """Every problem of every chain on a table, with the chain's index.

    Given the deck, a card lying out more often than the deck holds it is a
    `deck_exceeded` problem at each copy beyond the deck's count.
    """
    table = as_table(table)
    found = [(i, p) for i, chain in enumerate(table) for p in check_chain(chain)]
    if deck is not None:
        copies: Counter = Counter()
        for i, chain in enumerate(table):
            for k, card in enumerate(chain):
                ident = deck.identity(card)
                copies[ident] += 1
                if copies[ident] > deck.count(ident):
                    found.append((i, Problem(DECK_EXCEEDED, (k,),
                                             f"{ident.code} lies out {copies[ident]} times, but the "
                                             f"deck has only {deck.count(ident)}.")))
    return found
