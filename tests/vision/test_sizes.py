"""The cards' apparent size across the picture: one plane of size over the image."""
import numpy as np
import pytest

from companion.vision.sizes import CardSizes


def _card(cx, cy, short, long_):
    return np.array([[cx - short / 2, cy - long_ / 2], [cx + short / 2, cy - long_ / 2],
                     [cx + short / 2, cy + long_ / 2], [cx - short / 2, cy + long_ / 2]], float)


def _perspective_scale(x, y):
    return 0.6 + 0.0008 * x + 0.0012 * y   # near (bottom) cards larger, as under a tilted camera


def test_a_card_s_size_follows_the_table_s_depth_despite_a_phone_among_the_cards():
    places = [(100, 100), (500, 120), (900, 90), (150, 500), (600, 450), (950, 520), (400, 300)]
    cards = [_card(x, y, 60 * _perspective_scale(x, y), 90 * _perspective_scale(x, y)) for x, y in places]
    cards.append(_card(700, 200, 150, 260))      # a phone, found as a card
    sizes = CardSizes.from_cards(cards)
    for x, y in [(300, 200), (800, 500), (120, 580)]:
        short, long_ = sizes.at((x, y))
        assert short == pytest.approx(60 * _perspective_scale(x, y), rel=0.05)
        assert long_ == pytest.approx(90 * _perspective_scale(x, y), rel=0.05)


def test_few_cards_give_one_size_for_the_whole_picture():
    cards = [_card(100, 100, 50, 80), _card(600, 400, 70, 110), _card(300, 300, 60, 90)]
    sizes = CardSizes.from_cards(cards)
    assert sizes.at((0, 0)) == sizes.at((1000, 700)) == (60.0, 90.0)


def test_one_size_knows_how_far_below_it_its_smallest_card_lies_and_a_plane_needs_none():
    # three cards are too few for a plane: the typical one is 60 x 90, the smallest 50 x 80
    cards = [_card(100, 100, 50, 80), _card(600, 400, 70, 110), _card(300, 300, 60, 90)]
    assert CardSizes.from_cards(cards).spread == pytest.approx(np.log(5400 / 4000))
    # a card as small as a sliver widens it to half the typical area at most
    assert CardSizes.from_cards(cards[1:] + [_card(100, 100, 15, 20)]).spread == pytest.approx(np.log(2.0))
    places = [(100, 100), (500, 120), (900, 90), (150, 500), (600, 450), (950, 520), (400, 300)]
    on_a_plane = [_card(x, y, 60 * _perspective_scale(x, y), 90 * _perspective_scale(x, y)) for x, y in places]
    assert CardSizes.from_cards(on_a_plane).spread == 0.0
    assert CardSizes.from_cards(cards).at_most(1.2).spread == CardSizes.from_cards(cards).spread


def test_no_card_means_no_size():
    assert not CardSizes.from_cards([])


def test_a_plane_no_tilted_table_could_give_is_not_believed():
    # fragments growing tenfold across the picture agree with a plane, but no
    # camera at 45 degrees or less sees one card ten times the size of another
    cards = [_card(100 * k + 50, 100 + 200 * (k % 2), 6 * (k + 1), 9 * (k + 1)) for k in range(10)]
    sizes = CardSizes.from_cards(cards)
    assert sizes.at((50, 100)) == sizes.at((950, 100))


def test_two_cards_end_to_end_are_not_explained_as_perspective():
    # four cards of nearly one size and a region of two of them end to end, placed where
    # a tilted plane could call it one near card: one size explains all but one region
    # as well, and a plane must be agreed by clearly more cards than that
    cards = [_card(100 + 150 * k, 200 + 80 * (k % 2), 60 * f, 90 * f)
             for k, f in enumerate((0.93, 0.97, 1.0, 1.03))]
    cards.append(_card(900, 240, 85, 127))
    sizes = CardSizes.from_cards(cards)
    short, _ = sizes.at((900, 240))
    assert short == pytest.approx(sizes.short)


def test_a_gentle_slant_is_followed_though_one_size_would_pass_within_the_tolerance():
    # cards half as large again at the near edge as at the far one: every card lies within
    # the support's tolerance of one size, but the plane fits them all closely, one size half
    def scale(x, y):
        return 0.8 + 0.00016 * x + 0.0005 * y
    places = [(100 + 260 * i, 80 + 150 * j) for i in range(4) for j in range(4)]
    cards = [_card(x, y, 50 * scale(x, y), 80 * scale(x, y)) for x, y in places]
    sizes = CardSizes.from_cards(cards)
    for x, y in [(100, 80), (880, 530), (500, 300)]:
        assert sizes.at((x, y))[0] == pytest.approx(50 * scale(x, y), rel=0.03)


def test_the_long_side_is_capped_by_the_deck_s_proportions_wherever_the_card_lies():
    places = [(100, 100), (500, 120), (900, 90), (150, 500), (600, 450), (950, 520), (400, 300)]
    # every card found alone squeezed across its width: 1:2, where the deck's cards are at most 1:1.6
    cards = [_card(x, y, 50 * _perspective_scale(x, y), 100 * _perspective_scale(x, y)) for x, y in places]
    capped = CardSizes.from_cards(cards).at_most(1.6)
    for x, y in [(300, 200), (800, 500)]:
        short, long_ = capped.at((x, y))
        assert short == pytest.approx(50 * _perspective_scale(x, y), rel=0.05)   # the plane stays
        assert long_ == pytest.approx(1.6 * short)
    # cards within the deck's proportions are left as they are
    assert CardSizes(60, 90).at_most(1.6).at((0, 0)) == (60, 90)
