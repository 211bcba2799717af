"""Which rendered scenes are for what: training, validation and the bench never share a seed."""
from __future__ import annotations

_PURPOSE = {"train": 0, "validate": 2, "bench": 1, "tune": 3}


def scene_seed(purpose: str, base: int, index: int) -> int:
    """The render seed of scene `index` of a run seeded `base`.

    Seeds are spread four apart by purpose (train, bench, validate, tune), so a training run with any base
    seed can never render a scene that a bench run with any base seed renders.
    """
    return ((base * 1_000_000 + index) * 4 + _PURPOSE[purpose]) % (2**63)
