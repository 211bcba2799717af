"""Game states to draw: the referee's simulator when present, else a small stand-in.

The rules live in `companion.game`; this module only asks them for games.
`_stand_in_game` exists for development before `companion.game.simulate`
lands and is not a second rule book: it is used only when that import fails.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from companion.game.cards import Card, Kind
from companion.game.deck import Deck, load_deck

Table = list[list[Card]]
PLAYER_NAMES = ("Ann", "Ben", "Cy", "Dee", "Eli")


@dataclass
class Game:
    frames: list[Table]                       # the table after each change, starter first
    piles_after: list[dict[str, list[list[Card]]]] = field(default_factory=list)
    record: dict | None = None                # judge FILE when it came from the simulator
    truth: dict | None = None                 # judge output for that record
    players: list[str] = field(default_factory=list)


def simulate(players: int | list[str], seed: int, deck: Deck | None = None, illegal_rate: float = 0.0) -> Game:
    names = [PLAYER_NAMES[i % len(PLAYER_NAMES)] for i in range(players)] if isinstance(players, int) else list(players)
    try:
        from companion.game.simulate import simulate_game
    except ImportError:
        return _stand_in_game(names, seed, deck or load_deck())
    sim = simulate_game(names, seed, deck=deck, illegal_rate=illegal_rate)
    frames = [[[c if isinstance(c, Card) else Card.parse(c) for c in chain] for chain in t] for t in sim.frames]
    piles = [{p: [[c if isinstance(c, Card) else Card.parse(c) for c in s] for s in snakes]
              for p, snakes in pl.items()} for pl in getattr(sim, "piles_after", [])]
    names = list(sim.record.get("players", [])) if getattr(sim, "record", None) else []
    return Game(frames, piles, getattr(sim, "record", None), getattr(sim, "truth", None), names)


@lru_cache(maxsize=None)
def pooled_game(players: int, k: int) -> Game:
    """Game k of a fixed pool per player count: stills draw their states from here,
    so a scene does not pay for simulating a whole game."""
    return simulate(players, 1_000_003 * players + k)


POOL_SIZE = 48


def is_complete(chain: list[Card]) -> bool:
    """Head and tail at the two ends with at least one middle between (CARDS.md)."""
    if len(chain) < 3:
        return False
    a, b = chain[0].kind, chain[-1].kind
    return ((a.is_head and b.is_tail) or (a.is_tail and b.is_head)) and any(c.kind is Kind.MIDDLE for c in chain)


def _open_colour(chain: list[Card], at_end: bool) -> str | None:
    card = chain[-1] if at_end else chain[0]
    if card.kind is not Kind.MIDDLE:
        return None
    return card.colours[-1] if at_end else card.colours[0]


def _stand_in_game(players, seed: int, deck: Deck) -> Game:
    names = list(players)
    rng = np.random.default_rng(seed)
    cards = deck.cards()
    order = rng.permutation(len(cards))
    pile = [cards[i] for i in order]
    starter = next(i for i, c in enumerate(pile) if c.kind is Kind.MIDDLE)
    table: Table = [[pile.pop(starter)]]
    frames = [[list(c) for c in table]]
    piles: dict[str, list[list[Card]]] = {n: [] for n in names}
    piles_after = [{n: [] for n in names}]
    turn = 0
    while pile:
        card = pile.pop()
        player = names[turn % len(names)]
        turn += 1
        placed = False
        if card.kind is Kind.MIDDLE:
            a, b = card.colours
            for i, ch in enumerate(table):
                for j, other in enumerate(table):
                    if i != j and _open_colour(ch, True) in (a, b) and _open_colour(other, False) is not None:
                        first = a if _open_colour(ch, True) == a else b
                        second = b if first == a else a
                        if _open_colour(other, False) == second:
                            joined = ch + [Card(Kind.MIDDLE, (first, second))] + other
                            table = [c for k, c in enumerate(table) if k not in (i, j)] + [joined]
                            placed = True
                            break
                if placed:
                    break
            if not placed:
                for ch in table:
                    if _open_colour(ch, True) in (a, b):
                        ch.append(card if ch[-1].colours[-1] == a else card.flipped())
                        placed = True
                        break
                    if _open_colour(ch, False) in (a, b):
                        ch.insert(0, card if ch[0].colours[0] == b else card.flipped())
                        placed = True
                        break
        else:
            for ch in table:
                ok_end = _open_colour(ch, True)
                if ok_end and (card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL) or card.colours[0] == ok_end):
                    ch.append(card)
                    placed = True
                    break
                ok_start = _open_colour(ch, False)
                if ok_start and (card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL) or card.colours[0] == ok_start):
                    ch.insert(0, card)
                    placed = True
                    break
        if not placed:
            table.append([card])
        done = [ch for ch in table if is_complete(ch)]
        if done:
            piles[player].extend(done)
            table = [ch for ch in table if not is_complete(ch)]
        frames.append([list(c) for c in table])
        piles_after.append({n: [list(s) for s in v] for n, v in piles.items()})
    return Game(frames, piles_after, None, None, names)
