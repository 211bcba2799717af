"""Card faces: every card of the deck in every style, the CARDS.md semantics, print variation."""
import cv2
import numpy as np
import pytest

from companion.game.cards import Card, Kind
from companion.game.deck import load_deck
from companion.synth.cards import face_ends, render_card
from companion.synth.styles import HELD_OUT_STYLE, PALETTE_HSV, STYLES, sample_print


def _hue(bgr_pixels: np.ndarray) -> float:
    hsv = cv2.cvtColor(bgr_pixels.reshape(1, -1, 3).astype(np.uint8), cv2.COLOR_BGR2HSV)[0]
    angles = hsv[:, 0].astype(float) * np.pi / 90
    return float(np.degrees(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean())) / 2 % 180)


def _hue_distance(a: float, b: float) -> float:
    d = abs(a - b) % 180
    return min(d, 180 - d)


def _nearest_colour(hue: float) -> str:
    return min(PALETTE_HSV, key=lambda c: _hue_distance(hue, PALETTE_HSV[c][0]))


def test_at_least_three_styles_and_one_held_out():
    assert len(STYLES) >= 3
    assert HELD_OUT_STYLE in STYLES


@pytest.mark.parametrize("style", list(STYLES))
def test_every_face_and_the_back_render_at_the_asked_size(style):
    rng = np.random.default_rng(0)
    pr = sample_print(style, rng)
    deck = load_deck()
    faces = {}
    for card in set(deck.cards()) | {None}:
        img = render_card(card, style, rng, 40, 1.4, print_=pr)
        assert img.shape == (56, 40, 3) and img.dtype == np.uint8
        faces[card] = img
    # no two different cards share a drawing
    blobs = [f.tobytes() for f in faces.values()]
    assert len(set(blobs)) == len(blobs)


@pytest.mark.parametrize("style", [s for s in STYLES])
def test_middle_colour_at_each_connecting_edge_is_that_ends_colour(style):
    """The body meets each short edge at its midpoint in that end's colour."""
    rng = np.random.default_rng(3)
    for a, b in [("red", "blue"), ("yellow", "purple"), ("green", "orange")]:
        card = Card(Kind.MIDDLE, (a, b))
        img = render_card(card, style, rng, 90, 1.5)
        h, w = img.shape[:2]
        (x0, y0), (x1, y1) = face_ends(card, w, h)
        top = img[int(y0) + 2:int(y0) + 6, int(x0) - 3:int(x0) + 3]
        bottom = img[int(y1) - 6:int(y1) - 2, int(x1) - 3:int(x1) + 3]
        assert _nearest_colour(_hue(top)) == a
        assert _nearest_colour(_hue(bottom)) == b


def test_head_and_tail_connect_at_the_top_only():
    rng = np.random.default_rng(1)
    pr = sample_print("cartoon", rng)
    for card in (Card.parse("H-green"), Card.parse("T-purple")):
        img = render_card(card, "cartoon", rng, 90, 1.4, print_=pr)
        h, w = img.shape[:2]
        assert len(face_ends(card, w, h)) == 1
        top = img[2:6, w // 2 - 3:w // 2 + 3]
        bottom = img[h - 3:h - 1, w // 2 - 3:w // 2 + 3]
        assert _nearest_colour(_hue(top)) == card.colours[0]
        # the bottom edge is paper, not body: close to the print's paper tone
        assert np.abs(bottom.reshape(-1, 3).mean(0) - np.array(pr.paper_bgr)).max() < 40


def test_prints_of_one_style_differ_but_keep_the_colours():
    card = Card.parse("M-red-green")
    a = render_card(card, "painted", np.random.default_rng(1), 60, 1.4)
    b = render_card(card, "painted", np.random.default_rng(2), 60, 1.4)
    assert a.shape == b.shape and not np.array_equal(a, b)


def test_aspect_ratio_is_a_parameter_within_limits():
    rng = np.random.default_rng(0)
    assert render_card(None, "photo", rng, 50, 1.0).shape[:2] == (50, 50)
    assert render_card(None, "photo", rng, 50, 1.6).shape[:2] == (80, 50)
    with pytest.raises(ValueError):
        render_card(None, "photo", rng, 50, 1.8)
    with pytest.raises(ValueError):
        render_card(None, "nope", rng, 50, 1.2)


def test_back_is_one_design_in_every_style():
    """Face-down cards look alike whatever the face style (print jitter aside)."""
    backs = [render_card(None, s, np.random.default_rng(5), 60, 1.4).astype(float) for s in STYLES]
    for other in backs[1:]:
        assert np.abs(other - backs[0]).mean() < 20


def test_training_papers_range_from_white_to_yellowed():
    """Recognisers balance each card on its paper: they must meet papers that are not white.
    The training styles' prints yellow with age, from white to well past cream."""
    blue_over_red = {style: [p[0] / p[2] for p in (sample_print(style, np.random.default_rng(k)).paper_bgr
                                                   for k in range(300))]
                     for style in ("cartoon", "painted")}
    assert max(blue_over_red["cartoon"]) > 0.95      # still white papers
    assert min(blue_over_red["painted"]) < 0.75      # and yellowed ones
