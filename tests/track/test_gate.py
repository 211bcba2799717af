"""The change gate on shrunk pictures: sensor noise is not motion, a moving patch is."""
from __future__ import annotations

import numpy as np

from companion.track.gate import ChangeGate


def _table() -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.normal(0, 8, (180, 320, 3)).astype(np.float32)


def test_a_few_scattered_noisy_pixels_are_not_motion():
    gate = ChangeGate()
    still, noisy = _table(), _table()
    for y, x in [(10, 40), (90, 150), (170, 300), (50, 260)]:   # far apart: sensor noise
        noisy[y, x] += 120
    assert gate.changed_pixels(noisy, still) >= gate.settings.min_changed_pixels
    assert not gate.moving(noisy, still)


def test_a_small_moving_patch_is_motion():
    gate = ChangeGate()
    still, moved = _table(), _table()
    moved[100:102, 200:202] += 120                               # four touching pixels
    assert gate.moving(moved, still)
    assert gate.moving(moved, None)
