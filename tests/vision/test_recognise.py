"""Recognition on renders: kinds, end colours and where the ends are; foreign cards are unknown."""
import cv2
import numpy as np

from companion.vision.outline import match_quads


def _pairs(result, truth):
    found = [np.array(c["corners"], float) for c in result["cards"]]
    real = [np.array(c["corners"], float) for c in truth["cards"]]
    return [(result["cards"][i], truth["cards"][j]) for i, j in match_quads(found, real).items()]


def test_kinds_colours_and_ends_of_a_rendered_table(analyzer, small_scene):
    result = analyzer.analyze(small_scene.image)
    pairs = _pairs(result, small_scene.truth)
    assert len(pairs) == len(small_scene.truth["cards"])
    for got, want in pairs:
        assert got["kind"] == want["kind"]
        short = min(np.linalg.norm(np.subtract(want["corners"][1], want["corners"][0])),
                    np.linalg.norm(np.subtract(want["corners"][2], want["corners"][1])))
        for colour, end in zip(want["colours"], want["ends"]):
            d = [np.hypot(e[0] - end[0], e[1] - end[1]) for e in got["ends"]]
            k = int(np.argmin(d))
            assert d[k] < 0.25 * short, "an end is not where the body meets the edge"
            assert got["colours"][k] == colour
        assert 0.5 < got["confidence"] <= 1.0


def test_turning_the_picture_changes_nothing_but_positions(analyzer, small_scene):
    turned = cv2.rotate(small_scene.image, cv2.ROTATE_90_CLOCKWISE)
    a = analyzer.analyze(small_scene.image)
    b = analyzer.analyze(turned)
    def names(r):
        return sorted((c["kind"], tuple(sorted(c["colours"]))) for c in r["cards"])
    assert names(a) == names(b)
    assert sorted(len(s["cards"]) for s in a["snakes"]) == sorted(len(s["cards"]) for s in b["snakes"])


def _foreign_cards_table() -> np.ndarray:
    """Four cards of other games on a green cloth."""
    from companion.synth.props import foreign_card
    rng = np.random.default_rng(5)
    table = np.zeros((600, 1000, 3), np.uint8)
    table[:] = (40, 90, 40)
    table = np.clip(table + rng.normal(0, 4, table.shape), 0, 255).astype(np.uint8)
    for k in range(4):
        _, sprite = foreign_card(np.random.default_rng(100 + k), 3.0)
        h, w = sprite.bgr.shape[:2]
        x, y = 20 + 245 * k, 150
        a = sprite.alpha[..., None]
        region = table[y:y + h, x:x + w].astype(np.float32)
        table[y:y + h, x:x + w] = (region * (1 - a) + sprite.bgr * a).astype(np.uint8)
    return table


def test_another_games_card_is_unknown(analyzer):
    table = _foreign_cards_table()
    result = analyzer.analyze(table)
    kinds = [c["kind"] for c in result["cards"]]
    assert len(kinds) == 4 and set(kinds) == {"unknown"}, kinds
    assert result["snakes"] == []


def test_the_models_thresholds_decide_what_is_believed(analyzer, small_scene):
    from companion.vision.recognise import Recogniser

    outlines = [r.outline for r in analyzer.read(small_scene.image)]
    models = {"edge": analyzer.recogniser.edge, "kind": analyzer.recogniser.kind,
              "colour": analyzer.recogniser.colour}
    # a face must be surer than sure: every face is reported unknown
    doubting = Recogniser({**models, "thresholds": {"min_face_probability": 1.01}})
    assert {r.kind for r in doubting.recognise(small_scene.image, outlines)} == {"unknown"}
    # an unknown must be surer than sure: the foreign cards are not believed to be cards
    table = _foreign_cards_table()
    foreign = [r.outline for r in analyzer.read(table)]
    assert len(foreign) == 4
    sceptic = Recogniser({**models, "thresholds": {"min_unknown_probability": 1.01}})
    assert sceptic.recognise(table, foreign) == []
