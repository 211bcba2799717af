"""Reading only the part of a picture around a change (`companion.track.regions`)."""
from __future__ import annotations

import numpy as np

from companion.bench.games import keep_cards
from companion.track.regions import crop_reader, grown
from companion.track.tracker import Tracker, TrackerSettings
from .scene import SIZE, FakeAnalyzer, Player, analysis
from .test_tracker import GAME, PLAYERS, expected, summary


def test_crop_reader_analyses_the_part_in_the_box_and_moves_its_points_back():
    image = np.zeros((480, 640, 3), np.uint8)
    image[100:140, 200:260] = 255
    seen = []

    def analyze(part):
        seen.append(part.shape)
        ys, xs = np.nonzero(part[..., 0])
        corners = [[xs.min(), ys.min()], [xs.max(), ys.min()], [xs.max(), ys.max()], [xs.min(), ys.max()]]
        return {"cards": [{"id": 0, "kind": "head", "colours": ["red"], "ends": [[xs.min(), ys.min()]],
                           "corners": corners, "confidence": 1.0}], "snakes": [{"cards": [0]}]}
    data = crop_reader(analyze)(image, (150, 80, 300, 200))
    assert seen == [(120, 150, 3)]
    assert data["cards"][0]["corners"] == [[200, 100], [259, 100], [259, 139], [200, 139]]
    assert data["cards"][0]["ends"] == [[200, 100]]
    assert grown((150, 80, 300, 200), 100, image.shape) == (50, 0, 400, 300)


class RegionReader:
    """The whole table's reading cut to the cards whose centre lies in the box (as a crop's
    reading keeps them), with the boxes asked for."""

    def __init__(self, analyzer: FakeAnalyzer):
        self.analyzer = analyzer
        self.boxes: list[tuple[int, int, int, int]] = []

    def __call__(self, image, box):
        self.boxes.append(box)
        data = self.analyzer(image)
        x0, y0, x1, y1 = box
        inside = [c for c in data["cards"]
                  if x0 <= np.mean([p[0] for p in c["corners"]]) < x1
                  and y0 <= np.mean([p[1] for p in c["corners"]]) < y1]
        return keep_cards(data, inside)


def _play(tables, offsets=None, regions=True):
    analyzer = FakeAnalyzer()
    reader = RegionReader(analyzer) if regions else None
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings(), read_region=reader)
    p = Player(tracker, analyzer)
    p.play([analysis(t, offsets) for t in tables])
    return tracker, p, reader


def test_after_the_first_table_only_the_part_around_each_change_is_read_once():
    tracker, p, reader = _play(GAME)
    assert summary(p.moves()) == summary(expected(GAME)["moves"])
    # one reading of the part around each change; the whole picture, twice, only for the
    # first table (nothing known yet)
    whole = tracker.stats["analysed"] - tracker.stats["region_reads"]
    assert tracker.stats["region_reads"] == len(reader.boxes) == len(GAME) - 1
    assert whole == 2
    area = SIZE[0] * SIZE[1]
    assert all((x1 - x0) * (y1 - y0) < 0.6 * area for x0, y0, x1, y1 in reader.boxes)


def test_the_one_reading_of_a_part_is_made_as_late_as_the_last_of_two_whole_ones():
    # as long a stillness before a table counts as settled: a hand pausing is never read
    _, whole, _ = _play(GAME, regions=False)
    _, part, _ = _play(GAME)
    assert [m["evidence"]["after"] for m in part.moves()] == \
        [m["evidence"]["after"] for m in whole.moves()]
    assert all(m["frame"] == m["evidence"]["after"] for m in part.moves()[1:-1])


def test_a_copy_of_a_card_outside_the_part_read_is_a_new_card_not_that_card_carried():
    # the copy is laid far from the card it copies, whose place did not change: it is not
    # read there, and no card read may be taken for it
    tables = [[["H-purple", "M-purple-blue"], ["M-red-orange"]],
              [["H-purple", "M-purple-blue"], ["M-red-orange"], ["M-red-orange"]]]
    offsets = {1: (420.0, 250.0)}
    want = summary(_play(tables, offsets, regions=False)[1].moves())
    tracker, p, reader = _play(tables, offsets)
    assert tracker.stats["region_reads"] >= 1
    assert summary(p.moves()) == want and [m[2] for m in want] == ["new"]


def test_the_bench_oracle_reads_a_region_as_its_cards_whose_centre_lies_in_the_box():
    from companion.bench.games import OracleAnalyzer
    table = analysis([["H-purple", "M-purple-blue", "M-blue-green"]])
    oracle = OracleAnalyzer({7: table})
    oracle.frame = 7
    x0, y0, x1, y1 = 0, 0, 40 + 56 + 2 + 56, 480    # up to the middle card's right edge
    data = oracle.analyze_region(None, (x0, y0, x1, y1))
    assert [c["colours"] for c in data["cards"]] == [["purple"], ["purple", "blue"]]
    assert [s["cards"] for s in data["snakes"]] == [[0, 1]]
    assert len(oracle(None)["cards"]) == 3    # the truth itself is not cut


def test_a_still_frame_left_for_its_one_reading_is_read_when_the_recording_ends():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings(), read_region=RegionReader(analyzer))
    p = Player(tracker, analyzer)
    first, second = (analysis(t) for t in GAME[:2])
    p.show(first)
    p.show(second, 4, hand=True)
    p.show(second, 1 + tracker.settings.still_frames)   # ends before its reading is due
    assert tracker.stats["region_reads"] == 0
    events = tracker.finish()
    assert tracker.stats["region_reads"] == 1
    assert summary([e.data for e in p.events + events if e.kind == "move"])[:2] == \
        summary(expected(GAME[:2])["moves"])


def test_a_real_source_reads_a_whole_picture_at_most_twice():
    # two readings that disagree are settled by what else is known, not by a third one
    def misread(data, call):
        if call == 2:
            data["cards"][0]["colours"] = ["green", "orange"]
        return data
    analyzer = FakeAnalyzer(fault=misread)
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings.for_fps(10.0))
    Player(tracker, analyzer).play([analysis(t) for t in GAME[:1]])
    assert analyzer.calls == 2 and tracker.stats["settles"] == 1
    assert TrackerSettings.for_fps(30.0).readings == 2 and TrackerSettings().readings == 3
