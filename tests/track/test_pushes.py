"""How far a chain was carried since the table settled (`companion.track.pushes`)."""
import numpy as np

from companion.track.pushes import chain_motion, chain_push

CARD = np.array([[0.0, 0.0], [60.0, 0.0], [60.0, 40.0], [0.0, 40.0]])


def row(n: int) -> dict[int, np.ndarray]:
    """n cards end to end along x."""
    return {t: CARD + [62.0 * t, 0.0] for t in range(n)}


def turned(outlines: dict, degrees: float, shift) -> dict:
    a = np.radians(degrees)
    r = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    return {t: c @ r + shift for t, c in outlines.items()}


def test_a_missed_card_goes_where_the_turn_of_its_seen_snake_takes_it():
    then = row(4)
    now = turned(then, 30.0, [200.0, 50.0])
    seen = {t: now[t] for t in (0, 1, 2)}                 # card 3 is not seen now
    motion = chain_motion(seen, seen, then, 40.0)
    assert np.allclose(motion(then[3]), now[3], atol=1e-6)
    # a plain push of the same cards (the median shift) would leave it far from there
    push = chain_push(seen, seen, then, 40.0)
    assert np.linalg.norm((then[3] + push).mean(axis=0) - now[3].mean(axis=0)) > 40.0


def test_one_seen_card_gives_its_push_or_nothing_if_it_barely_moved():
    then = row(2)
    motion = chain_motion({0}, {0: then[0] + [30.0, 0.0]}, then, 40.0)
    assert np.allclose(motion(then[1]), then[1] + [30.0, 0.0])
    assert chain_motion({0}, {0: then[0] + [2.0, 0.0]}, then, 40.0) is None
