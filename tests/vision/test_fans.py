"""The top card of a fan of face-down cards (`companion.vision.fans`)."""
import cv2
import numpy as np
import pytest

import companion.vision.analyze as analyze
import companion.vision.cut as cut
from companion.vision.fans import top_cards_of_fans
from companion.vision.outline import CardOutline, polygon_iou
from companion.vision.recognise import CardReading

SHORT, LONG = 60.0, 84.0


def _card(centre, degrees) -> np.ndarray:
    a = np.deg2rad(degrees)
    u, n = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    return np.array([centre - u * LONG / 2 - n * SHORT / 2, centre + u * LONG / 2 - n * SHORT / 2,
                     centre + u * LONG / 2 + n * SHORT / 2, centre - u * LONG / 2 + n * SHORT / 2])


def _reading(corners, kind="middle") -> CardReading:
    return CardReading(CardOutline(np.asarray(corners, float)), kind, [] if kind == "back" else ["red", "blue"],
                       [], 0.9)


def _fan_card(k) -> np.ndarray:
    """The k-th card of the fan: turned about a point near its end, 12 degrees past the last."""
    turn = -70.0 + 12.0 * k
    a = np.deg2rad(turn)
    return _card(np.array([250.0, 250.0]) - np.array([np.cos(a), np.sin(a)]) * LONG * 0.35, turn)


@pytest.fixture
def fan_picture():
    """Six backs turned about a point near their ends, the last on top; two face cards beside."""
    image = np.full((400, 500, 3), (120, 125, 130), np.uint8)
    image += np.random.default_rng(3).integers(0, 6, image.shape, dtype=np.uint8)
    cards = [_fan_card(k) for k in range(6)]
    for corners in cards:   # a dark back whose paper shows as a pale rim along its edge
        c = np.round(corners).astype(np.int32)
        cv2.fillConvexPoly(image, c, (40, 90, 30))
        cv2.polylines(image, [c], True, (170, 200, 190), 2)
    faces = [_card(np.array([80.0, 80.0]), 0.0), _card(np.array([420.0, 320.0]), 90.0)]
    for corners in faces:
        cv2.fillConvexPoly(image, np.round(corners).astype(np.int32), (215, 230, 235))
    whole = cv2.boxPoints(cv2.minAreaRect(np.concatenate(cards).astype(np.float32)))
    return image, cards[-1], whole, [_reading(f) for f in faces]


def test_a_fan_outlined_whole_is_given_its_top_cards_outline(fan_picture):
    image, top, whole, faces = fan_picture
    assert polygon_iou(whole, top) < 0.5                  # the finder's fit is nobody's outline
    got = top_cards_of_fans(image, faces + [_reading(whole, "back")])
    assert polygon_iou(got[-1].outline.corners, top) > 0.8
    assert got[-1].kind == "back" and got[:-1] == faces   # the face cards are left as they were


def test_a_back_outlined_right_or_with_no_face_card_to_size_it_is_left_alone(fan_picture):
    image, top, whole, faces = fan_picture
    right = _reading(top, "back")
    assert top_cards_of_fans(image, faces + [right])[-1] is right
    alone = _reading(whole, "back")
    assert top_cards_of_fans(image, [alone])[0] is alone


def test_a_back_outlined_on_a_card_beneath_is_given_the_top_cards_outline_at_its_own_size(fan_picture):
    image, top, whole, faces = fan_picture
    # the face cards lie nearer the camera than the fan and look larger: their size fits no
    # card of it, while the outline on a card beneath the top one has the fan's own size
    centres = [f.outline.centre for f in faces]
    nearer = [_reading(c + (f.outline.corners - c) * 1.4) for f, c in zip(faces, centres)]
    beneath = _reading(_fan_card(0), "back")
    assert polygon_iou(beneath.outline.corners, top) < 0.5
    got = top_cards_of_fans(image, nearer + [beneath])
    assert polygon_iou(got[-1].outline.corners, top) > 0.8


def _recogniser(kind, asked):
    """A stand-in for the analyser's recogniser, reading every outline as `kind`."""
    def read(image, outlines):
        asked.extend(outlines)
        return [_reading(o.corners, kind) for o in outlines]
    return read


def test_a_fan_read_as_no_card_has_its_top_card_read_and_kept_if_a_back(fan_picture):
    image, top, whole, faces = fan_picture
    asked = []
    got = top_cards_of_fans(image, faces, [CardOutline(whole)], _recogniser("back", asked))
    assert len(asked) == 1 and polygon_iou(asked[0].corners, top) > 0.8
    assert got[:2] == faces and len(got) == 3 and got[-1].kind == "back"
    assert top_cards_of_fans(image, faces, [CardOutline(whole)], _recogniser("middle", [])) == faces
    # an outline smaller than a card is no fan: it is not searched
    asked.clear()
    half = top.mean(axis=0) + (top - top.mean(axis=0)) * 0.5
    assert top_cards_of_fans(image, faces, [CardOutline(half)], _recogniser("back", asked)) == faces
    assert asked == []
    # ... but one most of a card large, lying across the fan (the finder's misfit), is
    asked.clear()
    across = _fan_card(3)
    across = across.mean(axis=0) + (across - across.mean(axis=0)) * 0.85
    got = top_cards_of_fans(image, faces, [CardOutline(across)], _recogniser("back", asked))
    assert polygon_iou(got[-1].outline.corners, top) > 0.8


def test_a_back_outlined_by_the_frame_printed_inside_its_edge_is_given_the_cards_outline(fan_picture):
    image, top, whole, faces = fan_picture
    centre = top.mean(axis=0)
    frame = centre + (top - centre) * 0.8
    cv2.polylines(image, [np.round(frame).astype(np.int32)], True, (60, 190, 230), 2)
    got = top_cards_of_fans(image, faces + [_reading(frame, "back")])
    assert polygon_iou(frame, top) < 0.7
    assert polygon_iou(got[-1].outline.corners, top) > 0.85


def _top_found(development_table, tier, index, seed=7):
    """On a rendered development table with a fan: whether the analyser finds the fan's top card."""
    from companion.bench.metrics import match_cards
    scene, image, covered = development_table(seed, tier, index)
    top = [c for c in scene.truth["cards"] if c["kind"] == "back" and c["id"] not in covered]
    assert len(top) == 1
    return top[0]["id"] in match_cards(scene.truth["cards"], analyze.Analyzer().analyze(image)["cards"])


def test_on_a_rendered_table_the_fans_top_card_is_found(monkeypatch, development_table):
    assert _top_found(development_table, "medium", 0)
    monkeypatch.setattr(analyze, "top_cards_of_fans", lambda image, readings, *unread: readings)
    assert not _top_found(development_table, "medium", 0)


def test_on_a_rendered_table_a_fan_read_as_no_card_still_gives_its_top_card(monkeypatch, development_table):
    # (a fit across this fan reads as no card at all: its top card is found only in it)
    assert _top_found(development_table, "hard", 37)
    monkeypatch.setattr(analyze, "top_cards_of_fans",
                        lambda image, readings, *unread: top_cards_of_fans(image, readings))
    assert not _top_found(development_table, "hard", 37)


def test_on_a_rendered_table_a_fan_no_cut_parts_is_searched_for_its_top_card(monkeypatch, development_table):
    # (the fan is one region of the maps, of no card's shape and cut into nothing: before the
    # finder handed such regions on, nothing was found there)
    assert _top_found(development_table, "medium", 39, seed=11)
    monkeypatch.setattr(cut, "FAN_MOST_CARDS", 0.0)
    assert not _top_found(development_table, "medium", 39, seed=11)


def test_on_a_rendered_table_a_fan_hardly_larger_than_a_card_is_searched_for_its_top_card(
        monkeypatch, development_table):
    # (spread little, the fan is one region too small to hold two cards, which nothing cuts:
    # before such regions were handed on too, nothing was found there)
    assert _top_found(development_table, "hard", 43, seed=11)
    monkeypatch.setattr(cut, "FAN_LEAST_CARDS", 99.0)
    assert not _top_found(development_table, "hard", 43, seed=11)


def _with_region(monkeypatch, analyzer, scene, cards):
    """The analyser with the outlines the finder gives the `cards` ((kind, colours)) of `scene`
    replaced by one region's (`cut.REGION_SCORE`) about them all; that region's corners."""
    image = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
    truth = [np.array(c["corners"], float) for c in scene.truth["cards"] if (c["kind"], c["colours"]) in cards]
    assert len(truth) == len(cards)
    seen, outlines = analyzer.find(image)
    kept = [o for o in outlines if not any(polygon_iou(o.corners, t) > 0.5 for t in truth)]
    assert len(kept) == len(outlines) - len(cards)
    box = cv2.boxPoints(cv2.minAreaRect(np.concatenate(truth).astype(np.float32))).astype(float)
    region = CardOutline(box, cut.REGION_SCORE)
    monkeypatch.setattr(analyzer, "find",
                        lambda image, unlike_table=None, picture=None, known=None: (seen, kept + [region]))
    return image, box


def test_a_region_read_as_a_face_is_no_card(monkeypatch, analyzer, small_scene):
    image, box = _with_region(monkeypatch, analyzer, small_scene, [("middle", ["green", "yellow"])])
    assert analyzer.recogniser.recognise(image, [CardOutline(box)])[0].kind == "middle"   # (as an outline, it reads)
    assert not any(np.allclose(r.outline.corners, box) for r in analyzer.read(image))


def test_a_region_is_not_read_in_halves(monkeypatch, analyzer, small_scene):
    # two cards end to end outlined as one are read in halves; a region is a fan's, not a pair's
    image, box = _with_region(monkeypatch, analyzer, small_scene, [("head", ["red"]), ("middle", ["red", "blue"])])
    given = []
    real = analyze.pairs_read_apart

    def spy(image, readings, unread, recognise):
        given.extend(unread)
        return real(image, readings, unread, recognise)
    monkeypatch.setattr(analyze, "pairs_read_apart", spy)
    analyzer.read(image)
    assert not any(np.allclose(o.corners, box) for o in given)


def test_a_region_is_not_the_paper_a_frame_is_balanced_on(monkeypatch, analyzer, small_scene):
    # (a calibrated deck's frame is white-balanced on its cards' paper: a fan's green is none)
    image, box = _with_region(monkeypatch, analyzer, small_scene, [("middle", ["green", "yellow"])])
    balanced_on = []
    real = analyzer._frame_reader

    def spy(image, outlines):
        balanced_on.extend(outlines)
        return real(image, outlines)
    monkeypatch.setattr(analyzer, "_frame_reader", spy)
    analyzer.read(image)
    assert balanced_on and not any(np.allclose(o.corners, box) for o in balanced_on)
