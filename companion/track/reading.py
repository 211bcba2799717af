"""One analysed frame (the `analyze` JSON) as the tracker uses it.

The analyser's output is taken as it is documented in CONTRACT.md; anything
malformed makes the whole reading unusable (the frame is counted as unreadable)
rather than half-trusted.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from companion.game.cards import Card, CardCodeError, Kind

# image BGR -> the analyze dict of that image.  One that also takes `known` (the outlines of
# cards known to lie where they are, `takes_known`) is told the settled cards the pixels say
# did not change (`Tracker._unchanged_cards`).
AnalyzeFn = Callable[[np.ndarray], Mapping[str, Any]]


def takes_known(analyze: AnalyzeFn) -> bool:
    """Can `analyze` be told where cards are known to lie (a `known=` keyword)?"""
    try:
        return "known" in inspect.signature(analyze).parameters
    except (TypeError, ValueError):   # a callable with no signature to read
        return False


class ReadingError(ValueError):
    """An analysis result that does not follow the analyze format."""


@dataclass(frozen=True)
class SeenCard:
    index: int                                  # the analyser's card id
    card: Card                                  # as printed, colours in the order of `ends`
    ends: tuple[tuple[float, float], ...]
    corners: tuple[tuple[float, float], ...]
    confidence: float
    # the analyser's next likeliest readings of it (its "alternatives"), with their confidence
    alternatives: tuple[tuple[Card, float], ...] = ()

    @property
    def centre(self) -> np.ndarray:
        return np.mean(np.asarray(self.corners, float), axis=0)

    @property
    def size(self) -> float:
        """The short side of the outline, in pixels: the unit nudges are measured in."""
        c = np.asarray(self.corners, float)
        sides = np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)
        return float(max(1.0, min(sides[0] + sides[2], sides[1] + sides[3]) / 2))


@dataclass(frozen=True)
class Reading:
    cards: tuple[SeenCard, ...]                 # face-up recognised cards only
    chains: tuple[tuple[int, ...], ...]         # analyser card ids in physical order
    foreign: int = 0                            # backs and unknown things seen

    def by_id(self) -> dict[int, SeenCard]:
        return {c.index: c for c in self.cards}


def _point(value: Any) -> tuple[float, float]:
    x, y = value
    return float(x), float(y)


def parse_reading(data: Mapping[str, Any]) -> Reading:
    """Check and convert one analyze result; raises ReadingError when it is not one."""
    if not isinstance(data, Mapping) or "error" in data:
        raise ReadingError(str(data.get("error")) if isinstance(data, Mapping) else "not an object")
    try:
        cards: list[SeenCard] = []
        foreign = 0
        for raw in data.get("cards", []):
            kind = Kind(raw["kind"])
            if not kind.is_face:
                foreign += 1
                continue
            card = Card(kind, tuple(raw.get("colours", ())))
            ends = tuple(_point(p) for p in raw.get("ends", ()))
            corners = tuple(_point(p) for p in raw["corners"])
            if len(corners) != 4:
                raise ReadingError(f"card {raw.get('id')}: {len(corners)} corners, not 4")
            others = tuple((Card(kind, tuple(alt["colours"])), float(alt["confidence"]))
                           for alt in raw.get("alternatives", ()))
            cards.append(SeenCard(int(raw["id"]), card, ends, corners,
                                  float(raw.get("confidence", 1.0)), others))
        ids = {c.index for c in cards}
        chains = []
        placed: set[int] = set()
        for snake in data.get("snakes", []):
            chain = tuple(int(i) for i in snake["cards"] if int(i) in ids)
            if chain:
                chains.append(chain)
                placed.update(chain)
        # every face-up card is in exactly one chain; a card the analyser left out stands alone
        chains.extend((c.index,) for c in cards if c.index not in placed)
    except (KeyError, TypeError, ValueError, CardCodeError) as exc:
        if isinstance(exc, ReadingError):
            raise
        raise ReadingError(f"malformed analysis: {exc!r}") from None
    return Reading(tuple(cards), tuple(chains), foreign)


def without_cards(reading: Reading, drop: set[int]) -> Reading:
    """The reading with these cards left out, as if not seen: a chain breaks where one lay."""
    if not drop:
        return reading
    chains = []
    for chain in reading.chains:
        run: list[int] = []
        for i in list(chain) + [None]:
            if i is not None and i not in drop:
                run.append(i)
            elif run:
                chains.append(tuple(run))
                run = []
    return Reading(tuple(c for c in reading.cards if c.index not in drop), tuple(chains),
                   reading.foreign + len(drop))
