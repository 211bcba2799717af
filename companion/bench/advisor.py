"""`companion bench --advisor`: does following the advisor win more games?

Many games from seeded shuffles; one seat follows the advisor, the others lay
each card at a uniformly random legal place (the rules' `legal_placements`).
The advisor's seat moves round the table from game to game, so no seat's
first-move advantage is counted for it.  A win shared by k players counts 1/k
for each, so over N-player games a player without any skill averages 1/N:
that is the baseline.  The same games are also played with the advisor's seat
playing randomly too (the control): it should land on the baseline, and the
difference between the two is what the advisor is worth.

Opponents `greedy` always take the largest snake they can complete and are
otherwise random: the advisor's edge over them is what the look-ahead (not
just taking snakes) is worth.
"""
from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from companion.game.advisor import best_placement
from companion.game.cards import Card
from companion.game.chains import Chain
from companion.game.deck import Deck, load_deck
from companion.game.rules import Placement, legal_placements
from companion.game.scoring import rank_winners, score_piles

Policy = Callable[[list[Chain], Card, Counter, random.Random], Placement]


def random_policy(table, card, remaining, rng) -> Placement:
    return rng.choice(legal_placements(table, card))


def greedy_policy(table, card, remaining, rng) -> Placement:
    options = legal_placements(table, card)
    best = max((len(p.chain) for p in options if p.completes), default=0)
    if best:
        return next(p for p in options if p.completes and len(p.chain) == best)
    return rng.choice(options)


def advisor_policy(table, card, remaining, rng) -> Placement:
    return best_placement(table, card, remaining)


OPPONENTS = {"random": random_policy, "greedy": greedy_policy}


def play_game(deck: Deck, seats: Sequence[Policy], seed: int) -> tuple[dict, list[str]]:
    """One game: seat i plays with `seats[i]`; returns (scores, winners) keyed by seat name.

    The shuffle depends only on `seed`, each seat's random choices on a stream
    of its own, so the control game sees the very same deck and its opponents
    the same random numbers (until the games part ways).
    """
    names = [f"P{i}" for i in range(len(seats))]
    pile = deck.cards()
    random.Random(seed).shuffle(pile)
    choices = [random.Random(f"{seed}-seat-{i}") for i in range(len(seats))]
    seen: Counter = Counter()
    starter = pile.pop()
    seen[deck.identity(starter)] += 1
    table: list[Chain] = [(starter,)]
    piles: dict[str, list[Chain]] = {n: [] for n in names}
    turn = 0
    while pile:
        card = pile.pop()
        seen[deck.identity(card)] += 1
        seat = turn % len(seats)
        turn += 1
        remaining = +Counter({c: n - seen[c] for c, n in deck.counts.items()})
        placement = seats[seat](table, card, remaining, choices[seat])
        table = list(placement.table)
        if placement.completes:
            table.remove(placement.chain)
            piles[names[seat]].append(placement.chain)
    scores = score_piles(piles)
    return scores, rank_winners(scores)


@dataclass
class Tally:
    games: int = 0
    wins: Fraction = Fraction(0)        # shared wins counted 1/k
    outright: int = 0
    cards: int = 0
    squares: Fraction = Fraction(0)     # sum of squared win shares, for the standard error

    def add(self, share: Fraction, outright: bool, cards: int) -> None:
        self.games += 1
        self.wins += share
        self.squares += share * share
        self.outright += outright
        self.cards += cards

    @property
    def rate(self) -> float:
        return float(self.wins / self.games) if self.games else 0.0

    @property
    def stderr(self) -> float:
        if self.games < 2:
            return float("nan")
        mean = self.wins / self.games
        var = (self.squares / self.games - mean * mean) * self.games / (self.games - 1)
        return math.sqrt(float(var) / self.games)

    def to_json(self) -> dict:
        return {"games": self.games, "win_rate": round(self.rate, 4),
                "win_rate_stderr": round(self.stderr, 4),
                "outright_wins": self.outright,
                "mean_cards": round(self.cards / self.games, 3) if self.games else 0.0}


def bench_advisor(games: int, players: int, seed: int, opponents: str = "random",
                  deck: Deck | None = None, control: bool = True) -> dict:
    """Advisor against `opponents`; the figures `companion bench --advisor` prints."""
    if players < 2:
        raise ValueError("--players must be at least 2")
    if games < 1:
        raise ValueError("--games must be at least 1")
    if opponents not in OPPONENTS:
        raise ValueError(f"--opponents must be one of {', '.join(OPPONENTS)}")
    deck = deck or load_deck()
    other = OPPONENTS[opponents]
    advised, baseline = Tally(), Tally()
    edges: list[Fraction] = []     # per game: advisor's win share less the control's, same deck
    started = time.perf_counter()
    for g in range(games):
        seat, game_seed = g % players, seed * 1_000_003 + g
        for policy, tally in ((advisor_policy, advised), (other, baseline)):
            if tally is baseline and not control:
                continue
            seats = [other] * players
            seats[seat] = policy
            scores, winners = play_game(deck, seats, game_seed)
            me = f"P{seat}"
            share = Fraction(1, len(winners)) if me in winners else Fraction(0)
            tally.add(share, winners == [me], scores[me]["cards"])
            edges.append(share if tally is advised else -share)
    report = {"games": games, "players": players, "seed": seed, "opponents": opponents,
              "baseline": round(1 / players, 4),
              "shared_wins": "a win shared by k players counts 1/k",
              "advisor": advised.to_json(),
              "seconds": round(time.perf_counter() - started, 1)}
    if control:
        report["control"] = dict(baseline.to_json(), policy=f"{opponents} in the advisor's seat")
        paired = [edges[i] + edges[i + 1] for i in range(0, len(edges), 2)]
        mean = sum(paired) / len(paired)
        spread = (math.sqrt(float(sum((d - mean) ** 2 for d in paired)) / (len(paired) - 1) / len(paired))
                  if len(paired) > 1 else float("nan"))
        report["edge_over_control"] = {"win_rate": round(float(mean), 4),
                                       "stderr_paired": round(spread, 4)}
    return report


def format_report(r: dict) -> str:
    a = r["advisor"]
    lines = [f"advisor vs {r['players'] - 1} {r['opponents']} player(s), {r['games']} games "
             f"(seed {r['seed']}, advisor's seat rotating; shared wins count 1/k)",
             f"  advisor win rate  {a['win_rate']:.3f} ± {a['win_rate_stderr']:.3f}  "
             f"(baseline 1/{r['players']} = {r['baseline']:.3f}); outright wins {a['outright_wins']}, "
             f"mean cards {a['mean_cards']}"]
    if "control" in r:
        c = r["control"]
        lines.append(f"  control win rate  {c['win_rate']:.3f} ± {c['win_rate_stderr']:.3f}  "
                     f"({c['policy']}, same decks); mean cards {c['mean_cards']}")
        e = r["edge_over_control"]
        lines.append(f"  advisor - control {e['win_rate']:+.3f} ± {e['stderr_paired']:.3f} (paired by deck)")
    lines.append(f"  {r['seconds']} s")
    return "\n".join(lines)


def main(args) -> int:
    report = bench_advisor(args.games, args.players, args.seed, args.opponents)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0
