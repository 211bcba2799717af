"""Cards guessed beyond a snake's open ends (`companion.vision.extend`)."""
import numpy as np
import pytest

from companion.vision.extend import beyond, extend_snakes, open_ends, table_beyond
from companion.vision.find import find_cards
from companion.vision.outline import CardOutline, polygon_iou
from companion.vision.recognise import CardReading

CARD = CardOutline(np.array([[100.0, 100.0], [190.0, 100.0], [190.0, 160.0], [100.0, 160.0]]))


@pytest.mark.parametrize("turn", [0.0, -30.0, 15.0])
def test_a_guess_beyond_an_edge_is_the_card_turned_about_that_end(turn):
    edge = 1   # the right-hand end, from (190, 100) to (190, 160)
    guess = beyond(CARD, edge, turn)
    assert guess.area == pytest.approx(CARD.area)
    assert guess.long_side == pytest.approx(CARD.long_side)
    mids = guess.edge_midpoints
    assert np.min(np.hypot(*(mids - [190.0, 130.0]).T)) < 1e-6   # the shared end stays where it was
    assert guess.centre[0] > 190.0                                 # and the card lies beyond it
    assert polygon_iou(guess.corners, CARD.corners) < 0.05


def _reading(outline, ends, edges):
    return CardReading(outline, "middle", ["red", "blue"][:len(ends)], ends, 0.9, {}, tuple(edges))


def test_an_end_met_by_another_cards_end_is_not_open():
    right = CardOutline(CARD.corners + [90.0, 0.0])
    left = _reading(CARD, [[100.0, 130.0], [190.0, 130.0]], (3, 1))
    neighbour = _reading(right, [[190.0, 130.0], [280.0, 130.0]], (3, 1))
    assert open_ends([left, neighbour]) == [(0, 3), (1, 1)]


@pytest.fixture(scope="module")
def row_scene():
    from companion.synth.scene import render_scene
    table = [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow", "T-yellow"], ["M-purple-orange"]]
    return render_scene(5, tier="easy", style="cartoon", size=(1280, 720), table=table)


def _truth(scene, code_colours):
    return next(c for c in scene.truth["cards"] if c["kind"] == "middle" and c["colours"] == code_colours)


def test_a_card_missing_from_a_row_is_read_from_its_neighbours(analyzer, row_scene):
    readings = analyzer.recogniser.recognise(row_scene.image, find_cards(row_scene.image))
    lost = np.array(_truth(row_scene, ["blue", "green"])["corners"], float)
    kept = [r for r in readings if polygon_iou(r.outline.corners, lost) < 0.5]
    assert len(kept) == len(readings) - 1, "the renders' row should be found whole before one card is hidden"
    added = [r for r in extend_snakes(row_scene.image, kept, analyzer.recogniser.recognise, analyzer.deck)
             if not any(r is k for k in kept)]
    assert len(added) == 1
    assert polygon_iou(added[0].outline.corners, lost) > 0.8
    assert added[0].kind == "middle" and sorted(added[0].colours) == ["blue", "green"]


def test_a_guess_read_without_conviction_is_no_card(analyzer, row_scene):
    """A calibrated deck's reader gives a guess whose two ends show no pair the deck holds (one
    lying across two cards of a snake) a confidence of about nothing: such a guess is no card."""
    readings = analyzer.recogniser.recognise(row_scene.image, find_cards(row_scene.image))
    lost = np.array(_truth(row_scene, ["blue", "green"])["corners"], float)
    kept = [r for r in readings if polygon_iou(r.outline.corners, lost) < 0.5]

    def unsure(image, outlines):
        out = analyzer.recogniser.recognise(image, outlines)
        for r in out:
            r.confidence = 0.05
        return out
    assert extend_snakes(row_scene.image, kept, unsure, analyzer.deck) == kept


def test_nothing_is_guessed_onto_the_table_beyond_a_lone_card(analyzer, row_scene):
    readings = analyzer.recogniser.recognise(row_scene.image, find_cards(row_scene.image))
    assert open_ends(readings), "the lone middle's ends are open"
    assert extend_snakes(row_scene.image, readings, analyzer.recogniser.recognise, analyzer.deck) == readings


def test_a_guess_is_only_a_card_the_deck_still_holds(analyzer, row_scene):
    # the hidden card's every copy already on the table: its place stays empty
    import json

    from companion.game.deck import DEFAULT_DECK_PATH, Deck
    data = json.loads(DEFAULT_DECK_PATH.read_text(encoding="utf-8"))
    data["cards"]["M-green-blue"] = 0
    readings = analyzer.recogniser.recognise(row_scene.image, find_cards(row_scene.image))
    lost = np.array(_truth(row_scene, ["blue", "green"])["corners"], float)
    kept = [r for r in readings if polygon_iou(r.outline.corners, lost) < 0.5]
    assert extend_snakes(row_scene.image, kept, analyzer.recogniser.recognise, Deck.from_dict(data)) == kept


def test_beyond_a_snakes_last_card_lies_table_and_beyond_a_gap_in_a_row_lies_ink(analyzer, row_scene):
    readings = analyzer.recogniser.recognise(row_scene.image, find_cards(row_scene.image))
    lone = np.array(_truth(row_scene, ["purple", "orange"])["corners"], float)
    lost = np.array(_truth(row_scene, ["blue", "green"])["corners"], float)
    kept = [r for r in readings if polygon_iou(r.outline.corners, lost) < 0.5]
    ends = open_ends(kept)
    at_lone = [(i, e) for i, e in ends if polygon_iou(kept[i].outline.corners, lone) > 0.5]
    at_gap = [(i, e) for i, e in ends if polygon_iou(kept[i].outline.corners, lone) <= 0.5]
    assert len(at_lone) == 2 and len(at_gap) == 2   # the lone middle's ends; the hidden card's neighbours'
    assert all(table_beyond(row_scene.image, kept[i].outline, e) for i, e in at_lone)
    assert not any(table_beyond(row_scene.image, kept[i].outline, e) for i, e in at_gap)


def _pale_row(table_bgr, turn=22.0, slip=8.0):
    """CARD and its neighbour beyond its right end (turned `turn` degrees about that end and
    slipped `slip` px along it), cream paper, one body wavering through both; the picture and
    the neighbour's true outline."""
    import cv2
    img = np.full((300, 420, 3), table_bgr, np.uint8)
    t = np.radians(turn)
    along, across = np.array([np.cos(t), np.sin(t)]), np.array([-np.sin(t), np.cos(t)])
    entry = np.array([190.0, 130.0 + slip])
    neighbour = np.array([entry - 30 * across, entry + 30 * across,
                          entry + 90 * along + 30 * across, entry + 90 * along - 30 * across])
    for quad in (CARD.corners, neighbour):
        cv2.fillConvexPoly(img, np.int32(np.round(quad)), (222, 236, 242), cv2.LINE_AA)
    s = np.linspace(0, 1, 40)[:, None]
    own = np.array([100.0, 130.0 + slip]) + s * [90.0, 0.0] + np.sin(2 * np.pi * s) * [0.0, 8.0]
    beyond_ = entry + s * 90 * along + np.sin(2 * np.pi * s) * 8 * across
    for body in (own, beyond_):
        cv2.polylines(img, [np.int32(np.round(body))], False, (60, 60, 210), 16, cv2.LINE_AA)
    return img, neighbour


@pytest.mark.parametrize("turn, slip", [(22.0, 8.0), (-22.0, -8.0), (0.0, 12.0)])
def test_a_neighbour_on_paper_of_the_table_s_colour_is_placed_along_its_body(turn, slip):
    from companion.vision.extend import TURNS, along_body
    img, truth = _pale_row((225, 238, 244), turn, slip)   # the table as pale as the paper
    aimed = along_body(img, CARD, 1)
    assert aimed is not None
    fit = polygon_iou(aimed.corners, truth)
    assert fit > 0.9   # where the fixed turns about the end miss the slip (0.79-0.84)
    assert fit > max(polygon_iou(beyond(CARD, 1, t).corners, truth) for t in TURNS) + 0.05


def test_no_body_is_followed_where_the_table_is_as_unlike_the_paper_as_ink():
    from companion.vision.extend import along_body
    img, _ = _pale_row((40, 70, 40))          # a dark green cloth: everything beyond the end is "ink"
    img[:, 190:] = (40, 70, 40)               # and no neighbour's paper
    assert along_body(img, CARD, 1) is None


def test_on_a_rendered_table_a_guess_read_as_no_face_is_read_again_moved_a_little(
        analyzer, monkeypatch, development_table):
    """A hard development table whose every card is read only when a guess beyond a
    neighbour that the recogniser turned down is moved a few pixels and read again."""
    import companion.vision.extend as extend
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(11, "hard", 67)
    found = score_table(scene.truth, analyzer.analyze(image), covered)
    assert found.matched == found.truth_cards == found.found_cards
    monkeypatch.setattr(extend, "nudged", lambda outline: [])
    assert score_table(scene.truth, analyzer.analyze(image), covered).matched < found.matched
