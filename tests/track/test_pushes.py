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


def test_a_fit_of_points_drawn_apart_shares_the_difference_between_them():
    """Two cards of a snake carried and laid a little further apart: neither is pinned and
    the other pushed the whole difference; each lands half of it from its sighting."""
    from companion.track.pushes import rigid_fit
    then = np.array([[0.0, 0.0], [58.0, 0.0]])
    now = np.array([[300.0, 200.0], [300.0, 200.0 - 66.0]])     # turned a quarter, 8 further apart
    moved = rigid_fit(then, now)(then)
    assert np.allclose(np.linalg.norm(moved - now, axis=1), [4.0, 4.0])
    assert np.allclose(moved.mean(axis=0), now.mean(axis=0))


def test_a_fit_never_lays_a_snake_mirrored():
    from companion.track.pushes import rigid_fit
    then = row(3)[0]
    mirrored = then * [-1.0, 1.0]
    motion = rigid_fit(then, mirrored)
    a, b, c = motion(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    cross = (b - a)[0] * (c - a)[1] - (b - a)[1] * (c - a)[0]
    assert cross > 0   # the turn keeps the plane's handedness
