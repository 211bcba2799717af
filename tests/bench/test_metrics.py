"""Scoring an analysis against truth: what counts as found, right and exact."""
import copy

from companion.bench.metrics import score_table


def _card(i, kind, colours, x):
    corners = [[x, 0.0], [x + 60.0, 0.0], [x + 60.0, 90.0], [x, 90.0]]
    ends = {"middle": [[x + 30.0, 0.0], [x + 30.0, 90.0]], "head": [[x + 30.0, 0.0]]}.get(kind, [])
    return {"id": i, "kind": kind, "colours": colours, "ends": ends, "corners": corners, "confidence": 1.0}


TRUTH = {
    "image": {"path": "t.jpg", "width": 400, "height": 200},
    "cards": [_card(0, "head", ["red"], 0.0), _card(1, "middle", ["red", "blue"], 100.0), _card(2, "back", [], 200.0)],
    "snakes": [{"cards": [0, 1], "complete": False}],
    "problems": [],
}


def test_perfect_analysis_is_exact():
    s = score_table(TRUTH, copy.deepcopy(TRUTH))
    assert s.rates() == {"recall": 1.0, "precision": 1.0, "kind_accuracy": 1.0,
                         "end_colour_accuracy": 1.0, "chain_accuracy": 1.0, "table_exact": 1.0}


def test_ids_may_differ_and_chains_may_be_reversed():
    found = copy.deepcopy(TRUTH)
    found["cards"] = [dict(c, id=2 - c["id"]) for c in found["cards"]]
    found["snakes"] = [{"cards": [1, 2], "complete": False}]  # truth [0, 1] renamed and read backwards
    assert score_table(TRUTH, found).rates()["table_exact"] == 1.0


def test_wrong_colour_missing_card_and_extra_card_count():
    found = copy.deepcopy(TRUTH)
    found["cards"][1]["colours"] = ["red", "green"]
    s = score_table(TRUTH, found)
    assert s.ends == 3 and s.ends_right == 2 and s.tables_exact == 0
    found = copy.deepcopy(TRUTH)
    del found["cards"][2]
    found["cards"].append(_card(7, "unknown", [], 300.0))
    s = score_table(TRUTH, found)
    assert (s.matched, s.truth_cards, s.found_cards) == (2, 3, 3)
    assert s.rates()["recall"] < 1 and s.rates()["precision"] < 1 and s.tables_exact == 0


def test_covered_cards_are_not_required_and_not_false_finds():
    found = copy.deepcopy(TRUTH)
    del found["cards"][2]  # the face-down card, mostly covered, was not found
    s = score_table(TRUTH, found, hidden=frozenset({2}))
    assert s.rates()["recall"] == 1.0 and s.tables_exact == 1
    s = score_table(TRUTH, copy.deepcopy(TRUTH), hidden=frozenset({2}))
    assert (s.truth_cards, s.found_cards, s.matched) == (2, 2, 2)


def test_a_required_card_is_matched_before_a_covered_one_it_overlaps_less():
    # a fan: the covered card lies a little to the left of the top card, and the outline
    # found lies between them, nearer the covered one; it is the top card, found
    truth = copy.deepcopy(TRUTH)
    truth["cards"].append(_card(3, "back", [], 180.0))
    found = copy.deepcopy(TRUTH)
    found["cards"][2] = _card(2, "back", [], 186.0)
    s = score_table(truth, found, hidden=frozenset({3}))
    assert (s.truth_cards, s.found_cards, s.matched) == (3, 3, 3) and s.tables_exact == 1


class _SeesNothing:
    """An analyzer that finds no card: the figures then describe only the scenes rendered."""

    def analyze(self, image, path=None, size=None):
        return {"image": {"path": path}, "cards": [], "snakes": [], "problems": []}


def test_a_tier_measures_the_same_scenes_whichever_tiers_are_asked_for():
    from companion.bench.run import bench_tables

    alone = bench_tables(_SeesNothing(), 1, 1, ("hard",))["hard"]
    after_easy = bench_tables(_SeesNothing(), 1, 1, ("easy", "hard"))
    assert alone == after_easy["hard"]
    assert alone["resolutions"] != after_easy["easy"]["resolutions"] or alone["cards"] != after_easy["easy"]["cards"]
