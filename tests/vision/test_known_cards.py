"""A watched table's unchanged cards, told to the analyser, are not cut again (`with_known_cards`)."""
from __future__ import annotations

import numpy as np
import pytest

from companion.vision.analyze import KNOWN_SCORE, faces_where_known, with_known_cards
from companion.vision.outline import CardOutline, order_corners
from companion.vision.recognise import CardReading


def card(x0: float, y0: float, w: float = 60.0, h: float = 40.0) -> np.ndarray:
    return np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], float)


def found(x0: float, y0: float, score: float = 0.8) -> CardOutline:
    return CardOutline(order_corners(card(x0, y0)), score)


def test_an_outline_cut_across_two_known_cards_gives_way_to_them():
    # a row of two cards end to end, cut at the wrong seam: half of each
    left, right = card(100, 100), card(162, 100)
    across = found(131, 100)
    out = with_known_cards([across], [left, right])
    assert all(o is not across for o in out)
    assert sorted(tuple(np.round(o.corners.mean(axis=0))) for o in out) == [(130.0, 120.0), (192.0, 120.0)]
    assert all(o.score == KNOWN_SCORE for o in out)


def test_an_outline_of_the_known_card_itself_is_kept_as_found():
    known = card(100, 100)
    refitted = found(102, 101)
    out = with_known_cards([refitted], [known])
    assert len(out) == 1 and out[0] is refitted


def test_cards_found_elsewhere_and_without_known_cards_are_untouched():
    beside, far = found(163, 100), found(400, 300)   # laid against the known card's end; away
    outlines = [beside, far]
    told = with_known_cards(outlines, [card(100, 100)])
    assert told[0] is beside and told[1] is far and len(told) == 3   # and the known card
    untold = with_known_cards(outlines, [])
    assert len(untold) == 2 and untold[0] is beside and untold[1] is far


def _reading(outline: CardOutline, kind: str) -> CardReading:
    return CardReading(outline, kind, [], [], 0.9 if kind == "middle" else 0.0)


def test_a_known_card_whose_fresh_outline_reads_as_no_face_is_read_on_its_known_outline():
    known = card(100, 100)
    off = found(104, 103)        # the card found afresh a few pixels off: its art's ends cut
    beside = found(300, 100)     # another game's card, known to nobody
    asked = []

    def recognise(image, outlines):
        asked.extend(outlines)
        return [_reading(o, "middle") for o in outlines]

    readings = [_reading(off, "unknown"), _reading(beside, "unknown")]
    out = faces_where_known(readings, [known], np.zeros((400, 400, 3), np.uint8), recognise)
    assert [len(asked), out[0].kind, out[1] is readings[1]] == [1, "middle", True]
    assert np.allclose(out[0].outline.corners, order_corners(known)) and out[0].outline.score == KNOWN_SCORE


def test_a_known_card_read_as_a_face_or_no_face_on_its_known_outline_either_keeps_its_reading():
    known = card(100, 100)
    face = [_reading(found(102, 101), "middle")]
    untouched = faces_where_known(face, [known], np.zeros((400, 400, 3), np.uint8),
                                  lambda image, outlines: pytest.fail("a face is not read again"))
    assert untouched == face
    doubted = [_reading(found(104, 103), "unknown")]
    kept = faces_where_known(doubted, [known], np.zeros((400, 400, 3), np.uint8),
                             lambda image, outlines: [_reading(o, "unknown") for o in outlines])
    assert kept[0] is doubted[0]


@pytest.fixture(scope="module")
def snake_and_lone_cards():
    """A rendered table whose snake of five cards the finder cuts apart (its cards touch), and
    three cards alone: the picture and the snake's true outlines, head first."""
    from companion.synth.scene import render_scene
    table = [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow", "T-yellow"],
             ["M-purple-orange"], ["H-blue"], ["T-green"]]
    scene = render_scene(22, tier="medium", style="cartoon", size=(1280, 720), table=table)
    cards = {c["id"]: np.array(c["corners"], float) for c in scene.truth["cards"]}
    return scene.image, [cards[i] for i in scene.truth["snakes"][0]["cards"]]


def _find_counting_cuts(monkeypatch, image, known):
    """What the finder found, told of `known` cards, and the regions it cut into cards."""
    import companion.vision.cut as cut
    from companion.vision.find import find_cards
    regions, cut_blob = [], cut.cut_blob
    monkeypatch.setattr(cut, "cut_blob", lambda blob, *a: regions.append(blob) or cut_blob(blob, *a))
    return find_cards(image, known=known), regions


def test_a_row_of_known_cards_is_not_cut_again_but_given_as_its_cards(monkeypatch, snake_and_lone_cards):
    from companion.vision.outline import polygon_iou
    image, snake = snake_and_lone_cards
    assert _find_counting_cuts(monkeypatch, image, None)[1]
    found, regions = _find_counting_cuts(monkeypatch, image, snake)
    assert not regions
    # (a piece the cut would have found is the known card: a loose outline found alone in the
    # row must not take its place)
    assert all(sum(polygon_iou(f.corners, card) > 0.9 for f in found) == 1 for card in snake)


def test_a_card_laid_at_the_end_of_a_row_of_known_cards_is_still_cut_from_it(monkeypatch, snake_and_lone_cards):
    from companion.vision.outline import polygon_iou
    image, snake = snake_and_lone_cards
    found, regions = _find_counting_cuts(monkeypatch, image, snake[1:])
    assert regions
    assert max(polygon_iou(f.corners, snake[0]) for f in found) > 0.8
