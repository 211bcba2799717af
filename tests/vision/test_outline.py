"""Outlines: overlap measures and moves (`companion.vision.outline`)."""
import numpy as np
import pytest

from companion.vision.outline import CardOutline, in_picture, nudged, polygon_iou, share_inside


def _square(x, y, side):
    return np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]], float)


def test_share_inside_is_the_part_of_the_first_polygon_the_second_covers():
    small, large = _square(0, 0, 10), _square(5, 0, 20)
    assert share_inside(small, large) == pytest.approx(0.5)
    assert share_inside(large, small) == pytest.approx(50 / 400)
    assert share_inside(small, _square(0, 0, 10)) == pytest.approx(1.0)
    assert share_inside(small, _square(30, 30, 5)) == 0.0
    # unlike the overlap's share of the union, it does not fall as the second one grows
    assert share_inside(small, _square(-100, -100, 300)) == pytest.approx(1.0)
    assert polygon_iou(small, _square(-100, -100, 300)) < 0.01


def test_an_outline_is_nudged_by_a_share_of_its_sides_each_way():
    card = CardOutline(np.array([[100.0, 100.0], [190.0, 100.0], [190.0, 160.0], [100.0, 160.0]]))
    moved = nudged(card, 0.05)
    assert len(moved) == 8
    shifts = {tuple(np.round(m.centre - card.centre, 6)) for m in moved}
    assert shifts == {(dx, dy) for dx in (-4.5, 0.0, 4.5) for dy in (-3.0, 0.0, 3.0)} - {(0.0, 0.0)}
    assert all(m.area == pytest.approx(card.area) for m in moved)


def test_an_outline_is_in_the_picture_only_with_every_corner_inside():
    card = CardOutline(_square(10, 10, 50))
    assert in_picture(card, (100, 200, 3))
    assert not in_picture(card, (55, 200))                       # its bottom runs off
    assert not in_picture(CardOutline(_square(-1, 10, 50)), (100, 200))
