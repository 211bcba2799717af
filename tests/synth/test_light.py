"""A filmed game's light: the room's exposure creeps from frame to frame, as the tier allows."""
import numpy as np
import pytest

from companion.synth.light import sample_look
from companion.synth.tiers import TIERS


@pytest.mark.parametrize("tier", list(TIERS))
def test_a_room_s_exposure_creeps_but_stays_within_its_tier_s_range(tier):
    low, high = TIERS[tier].exposure
    rng = np.random.default_rng(5)
    look = sample_look(TIERS[tier], rng)
    seen = []
    for _ in range(20_000):   # twenty games' worth of frames: unbounded, the walk would leave the range
        look = look.drifted(rng, within=TIERS[tier].exposure)
        seen.append(look.exposure)
    assert low <= min(seen) and max(seen) <= high
    # still a creep, frame to frame, that reaches far across the range
    steps = np.abs(np.diff(np.log(seen)))
    assert 0 < np.median(steps) < 0.02
    assert np.log(max(seen) / min(seen)) > 0.8 * np.log(high / low)


def test_an_exposure_range_narrower_than_a_step_holds_the_exposure_inside_it():
    rng = np.random.default_rng(2)
    look = sample_look(TIERS["easy"], rng)
    for within in ((1.0, 1.0), (0.99, 1.01)):
        for _ in range(2000):
            look = look.drifted(rng, within=within, exposure_sd=0.05)
            assert within[0] <= look.exposure <= within[1]
