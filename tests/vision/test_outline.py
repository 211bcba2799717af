"""Overlap measures of outlines (`companion.vision.outline`)."""
import numpy as np
import pytest

from companion.vision.outline import polygon_iou, share_inside


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
