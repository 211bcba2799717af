"""How far a chain was pushed since the table last settled.

Players shove snakes aside to make room.  The pixel tests that date a card
the reader missed ("a card found where nothing changed was laid earlier")
compare a picture with an older one at the card's place; after a push every
card of the chain differs there, though nothing happened to it but the push.
Knowing the push, the question can be asked where the card lay before it.
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

MIN_PUSH = 0.15   # card sizes: a smaller push is within the pixel test's own tolerance

Motion = Callable[[np.ndarray], np.ndarray]   # points (n, 2) then -> the same points now


def shifted(push: np.ndarray) -> Motion:
    """The motion that shifts every point by `push`."""
    push = np.asarray(push, float)
    return lambda points: np.asarray(points, float) + push


def rigid_fit(src: np.ndarray, dst: np.ndarray) -> Motion:
    """The turn and shift that best lay the points `src` on `dst` (least squares: their centres
    coincide).  A reflection is no way to move a card on a table: the best proper turn is
    taken instead."""
    src, dst = np.asarray(src, float), np.asarray(dst, float)
    src_mean, dst_mean = src.mean(axis=0), dst.mean(axis=0)
    u, _, vt = np.linalg.svd((src - src_mean).T @ (dst - dst_mean))
    if np.linalg.det(u @ vt) < 0:
        u[:, -1] *= -1
    turn = u @ vt
    return lambda points: (np.asarray(points, float) - src_mean) @ turn + dst_mean


def chain_push(cards: Iterable[int], now: dict, then: dict, size: float) -> np.ndarray | None:
    """The push most of these cards agree on (the median of their moves: one card matched
    wrongly cannot drag it); None when none of them has both outlines or they barely moved.

    `now` and `then` map a card to its corners now and at the last settle."""
    moves = [np.mean(np.asarray(now[t], float), axis=0) - np.mean(np.asarray(then[t], float), axis=0)
             for t in cards if t in now and t in then]
    if not moves:
        return None
    push = np.median(np.array(moves), axis=0)
    return push if np.linalg.norm(push) >= MIN_PUSH * size else None


def chain_motion(cards: Iterable[int], now: dict, then: dict, size: float) -> Motion | None:
    """The turn and shift that best carry these cards' outlines at the last settle onto their
    outlines now (least squares over their corners), as a function of corners.  A snake is
    carried and turned as a whole, so a card of it that was not seen went where this takes
    it.  With one card, its push (`chain_push`); None when no card has both outlines or the
    one card barely moved."""
    both = [t for t in cards if t in now and t in then]
    if len(both) < 2:
        push = chain_push(both, now, then, size)
        return None if push is None else shifted(push)
    return rigid_fit(np.concatenate([np.asarray(then[t], float) for t in both]),
                     np.concatenate([np.asarray(now[t], float) for t in both]))


def components(nodes: set, edges: set) -> dict[int, set]:
    """Each node -> the set of nodes linked to it (its chain, whatever its shape)."""
    group = {t: {t} for t in nodes}
    for edge in edges:
        a, b = tuple(edge)
        if a in group and b in group and group[a] is not group[b]:
            merged = group[a] | group[b]
            for t in merged:
                group[t] = merged
    return group
