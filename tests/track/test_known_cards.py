"""The tracker tells an analyser that can hear it where the settled cards lie unchanged."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from companion.track.reading import takes_known
from companion.track.tracker import Tracker, TrackerSettings
from .scene import FakeAnalyzer, Player, analysis

PLAYERS = ["Ann", "Ben"]


@dataclass
class ToldAnalyzer(FakeAnalyzer):
    """A FakeAnalyzer that keeps, per call, the outlines it was told are known."""
    told: list = field(default_factory=list)

    def __call__(self, image, known=None):
        self.told.append([np.asarray(k, float) for k in known or []])
        return super().__call__(image)


def centres(outlines) -> list[tuple[float, float]]:
    return sorted(tuple(np.round(np.mean(o, axis=0), 1)) for o in outlines)


def play(tables, offsets=None):
    analyzer = ToldAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings(agree_readings=0))
    player = Player(tracker, analyzer)
    calls = []
    for k, table in enumerate(tables):
        before = analyzer.calls
        data = analysis(table, (offsets or {}).get(k))
        if k:
            player.show(data, player.hand_frames, hand=True)
        player.show(data)
        calls.append(analyzer.told[before:])
    return calls, player


def test_the_settled_cards_are_told_and_the_new_one_is_not():
    calls, player = play([[["M-blue-green"]], [["M-blue-green"], ["H-purple"]]])
    first, second = calls
    assert first and all(told == [] for told in first)        # nothing settled yet
    settled = analysis([["M-blue-green"]])["cards"][0]["corners"]
    assert second and all(centres(told) == centres([settled]) for told in second)
    assert [(m["card"], m["action"]) for m in player.moves()] == [("H-purple", "new")]


def test_a_card_pushed_aside_is_not_told_where_it_lay():
    # the row pushed 60 px down while a card joins it: its pixels changed
    calls, _ = play([[["M-blue-green"]], [["M-blue-green", "M-green-yellow"]]],
                    offsets={1: {0: (0.0, 60.0)}})
    assert calls[1] and all(told == [] for told in calls[1])


def test_only_an_analyser_that_takes_known_cards_is_told():
    assert takes_known(ToldAnalyzer()) and not takes_known(FakeAnalyzer())
    assert not takes_known(len)    # a builtin without a readable signature
