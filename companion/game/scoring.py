"""Scores: total collected cards first, then the longest single snake, else a shared win."""
from __future__ import annotations

from typing import Mapping, Sequence


def score_piles(piles: Mapping[str, Sequence[Sequence]]) -> dict[str, dict]:
    """Each player's collected cards, snakes and longest snake (cards or codes alike)."""
    return {player: {"cards": sum(len(s) for s in snakes),
                     "snakes": len(snakes),
                     "longest": max((len(s) for s in snakes), default=0)}
            for player, snakes in piles.items()}


def rank_winners(scores: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Everyone with the most cards; among them, everyone with the longest snake.

    The rules give no further tie-break, so what remains is a shared win (in
    the players' order).
    """
    if not scores:
        return []
    best = max((s["cards"], s["longest"]) for s in scores.values())
    return [player for player, s in scores.items() if (s["cards"], s["longest"]) == best]
