"""Rebuild the snakes on the table from where the recognised cards' ends lie.

Two connecting ends belong together when they nearly touch (a gap up to a
tenth of a card width, neighbours turned up to about 30 degrees, slipped a
little sideways) and each faces the other card.  Pairs are taken greedily,
closest first, every end at most once.  The chains are then walked in
physical order and judged by the same rules code as `judge`.

A head or tail has one connecting end, but a card laid against its far edge
(beyond the head, where nothing may be laid) lies in its snake all the same:
that edge (`back`) touches a connecting end as an end would, and the rules
code then reports the card laid beyond a closed end.  Two far edges touching
join nothing: neither card was laid at the other.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.game.cards import Card, Kind
from companion.game.chains import check_chain, is_complete

# How far apart two ends may lie and still touch, in card short sides: a gap of
# 0.1, plus what a 30-degree turn and a small sideways slip move the midpoints.
MAX_END_GAP = 0.5
# Largest angle between an end's outward direction and the way to its partner.
MAX_FACING_DEG = 55.0


@dataclass(frozen=True)
class TableCard:
    """What assembly needs of a recognised card."""
    id: int
    card: Card                       # colours in the order of `ends`
    ends: tuple[tuple[float, float], ...]
    centre: tuple[float, float]
    short_side: float


@dataclass(frozen=True)
class Snake:
    cards: tuple[int, ...]           # card ids in physical order
    chain: tuple[Card, ...]          # the cards as read in that order
    complete: bool


def back(card: TableCard) -> tuple[float, float] | None:
    """The middle of a head's or tail's far edge (across the card from its connecting end),
    indexed after its ends; None for other cards."""
    if not card.card.kind.is_end_piece or len(card.ends) != 1:
        return None
    (x, y), (cx, cy) = card.ends[0], card.centre
    return 2.0 * cx - x, 2.0 * cy - y


def sides(card: TableCard) -> range:
    """The indices of a card's ends, its `back` included."""
    return range(len(card.ends) + (back(card) is not None))


def link_ends(cards: list[TableCard]) -> dict[tuple[int, int], tuple[int, int]]:
    """(card id, end index) -> its partner, for every pair of ends that touch
    (a head's or tail's `back` has the index after its end)."""
    ends = []
    for c in cards:
        far = back(c)
        for k, e in enumerate(c.ends + ((far,) if far else ())):
            out = np.array(e) - np.array(c.centre)
            n = np.linalg.norm(out)
            ends.append((c, k, np.array(e, float), out / n if n > 0 else out))
    candidates = []
    cos_max = np.cos(np.radians(MAX_FACING_DEG))
    for i in range(len(ends)):
        ci, ki, pi, di = ends[i]
        for j in range(i + 1, len(ends)):
            cj, kj, pj, dj = ends[j]
            if ci.id == cj.id or (ki == len(ci.ends) and kj == len(cj.ends)):
                continue
            d = float(np.linalg.norm(pi - pj))
            scale = min(ci.short_side, cj.short_side)
            if d > MAX_END_GAP * scale:
                continue
            # each end must face the other card: its outward direction points at it
            to_j = np.array(cj.centre) - pi
            to_i = np.array(ci.centre) - pj
            if di @ to_j < cos_max * np.linalg.norm(to_j) or dj @ to_i < cos_max * np.linalg.norm(to_i):
                continue
            candidates.append((d / scale, (ci.id, ki), (cj.id, kj)))
    candidates.sort(key=lambda t: t[0])
    partner: dict[tuple[int, int], tuple[int, int]] = {}
    linked_cards: set[tuple[int, int]] = set()
    for _, a, b in candidates:
        if a in partner or b in partner or (a[0], b[0]) in linked_cards:
            continue
        partner[a] = b
        partner[b] = a
        linked_cards |= {(a[0], b[0]), (b[0], a[0])}
    return partner


def _read(card: TableCard, entry: int | None) -> Card:
    """The card as read when the chain enters it through end `entry`."""
    c = card.card
    if c.kind is Kind.MIDDLE and entry == 1:
        return c.flipped()
    return c


def assemble(cards: list[TableCard]) -> tuple[list[Snake], list[dict]]:
    """Chains (every card in exactly one) and the problems the rules find in them."""
    by_id = {c.id: c for c in cards}
    partner = link_ends(cards)
    seen: set[int] = set()
    snakes: list[Snake] = []

    def walk(start: TableCard, free_end: int | None) -> list[tuple[int, int | None]]:
        """[(card id, end through which it is entered)], starting at a free end."""
        path = [(start.id, free_end)]
        seen.add(start.id)
        cur, entry = start, free_end
        while True:
            exits = [k for k in sides(cur) if k != entry]
            nxt = None
            for k in exits:
                p = partner.get((cur.id, k))
                if p and p[0] not in seen:
                    nxt = p
                    break
            if nxt is None:
                return path
            cur, entry = by_id[nxt[0]], nxt[1]
            seen.add(cur.id)
            path.append((cur.id, entry))

    def free_ends(c: TableCard) -> list[int]:
        return [k for k in sides(c) if (c.id, k) not in partner]

    # open chains first, from an end that nothing touches; heads first so snakes read head to tail
    starts = sorted(cards, key=lambda c: (not c.card.kind.is_head, not c.card.kind.is_end_piece, c.id))
    for c in starts:
        if c.id in seen:
            continue
        free = free_ends(c)
        if free:
            # a head or tail is entered through its far edge when nothing lies beyond it, so
            # that its snake runs on from its connecting end; a lone middle from its first end
            path = walk(c, free[-1] if back(c) is not None else free[0])
        elif not c.ends:
            path = walk(c, None)
        else:
            continue  # inside a chain; reached from its end
        snakes.append(_snake(path, by_id))
    for c in sorted(cards, key=lambda c: c.id):  # what is left lies in rings
        if c.id not in seen:
            snakes.append(_snake(walk(c, 0), by_id))

    problems = []
    for s in snakes:
        for p in check_chain(s.chain):
            problems.append({"code": p.code, "cards": [s.cards[i] for i in p.cards], "message": p.message})
    return snakes, problems


def _snake(path: list[tuple[int, int | None]], by_id: dict[int, TableCard]) -> Snake:
    chain = tuple(_read(by_id[cid], entry) for cid, entry in path)
    ids = tuple(cid for cid, _ in path)
    if chain and chain[-1].kind.is_head and not chain[0].kind.is_head:
        chain = tuple(c.flipped() for c in reversed(chain))
        ids = tuple(reversed(ids))
    return Snake(ids, chain, is_complete(chain))
