"""Game states to draw, from the referee's simulator (the rules live in `companion.game`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from companion.game.cards import Card
from companion.game.deck import Deck

Table = list[list[Card]]
PLAYER_NAMES = ("Ann", "Ben", "Cy", "Dee", "Eli")
POOL_SIZE = 48


@dataclass
class Game:
    frames: list[Table]                       # the table after each change, starter first
    piles_after: list[dict[str, list[list[Card]]]] = field(default_factory=list)
    record: dict | None = None                # the judge FILE
    truth: dict | None = None                 # the judge output for that record
    players: list[str] = field(default_factory=list)


def simulate(players: int | list[str], seed: int, deck: Deck | None = None, illegal_rate: float = 0.0) -> Game:
    from companion.game.simulate import simulate_game
    names = [PLAYER_NAMES[i % len(PLAYER_NAMES)] for i in range(players)] if isinstance(players, int) else list(players)
    sim = simulate_game(names, seed, deck=deck, illegal_rate=illegal_rate)
    frames = [[list(chain) for chain in table] for table in sim.frames]
    piles = [{p: [list(s) for s in snakes] for p, snakes in pl.items()} for pl in sim.piles_after]
    return Game(frames, piles, sim.record, sim.truth, names)


@lru_cache(maxsize=None)
def pooled_game(players: int, k: int) -> Game:
    """Game k of a fixed pool per player count: stills draw their states from here,
    so a scene does not pay for simulating a whole game."""
    return simulate(players, 1_000_003 * players + k)
