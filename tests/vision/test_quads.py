import cv2
import numpy as np
import pytest

from companion.vision.quads import (distance_to_quad, fit_quad, perimeter_coverage, quad_shape_score,
                                    signed_inside)

SQUARE = np.array([[0, 0], [100, 0], [100, 160], [0, 160]], float)


@pytest.mark.parametrize("quad", [SQUARE, SQUARE[::-1]])   # either winding
def test_points_measured_against_each_side(quad):
    pts = np.array([[50, 80], [50, -10], [110, 80], [0, 40], [120, 180]], float)
    assert distance_to_quad(pts, quad) == pytest.approx([50, 10, 10, 0, np.hypot(20, 20)])
    assert signed_inside(pts, quad) == pytest.approx([50, -10, -10, 0, -20])


def test_coverage_counts_the_perimeter_the_points_follow():
    # the middle 80% of the top side (away from the other sides' reach): 16 of its 20 bins
    top = np.column_stack([np.arange(10, 90, 1.0), np.zeros(80)])
    assert perimeter_coverage(top, SQUARE) == pytest.approx(16 / 80)
    assert perimeter_coverage(top[top[:, 0] < 50], SQUARE) == pytest.approx(8 / 80)
    assert perimeter_coverage(top + [0, 30], SQUARE) == 0.0   # inside, along no side


def _outline(mask):
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=cv2.contourArea)


def test_a_card_shaped_region_scores_high_and_a_bumpy_one_zero():
    mask = np.zeros((240, 200), np.uint8)
    cv2.rectangle(mask, (40, 30), (139, 189), 255, -1)
    card = _outline(mask)
    quad = fit_quad(card)
    assert np.abs(np.sort(quad[:, 0]) - [40, 40, 140, 140]).max() < 1.5
    assert quad_shape_score(quad, card, cv2.contourArea(card), 1.0, 1.6) > 0.9
    cv2.circle(mask, (140, 110), 25, 255, -1)   # something lies against its side
    bumpy = _outline(mask)
    q = fit_quad(bumpy)
    assert q is None or quad_shape_score(q, bumpy, cv2.contourArea(bumpy), 1.0, 1.6) == 0.0


def test_a_hull_given_by_the_caller_changes_nothing():
    mask = np.zeros((240, 200), np.uint8)
    cv2.fillConvexPoly(mask, np.array([[40, 30], [150, 45], [140, 190], [35, 175]], np.int32), 255)
    c = _outline(mask)
    hull = cv2.convexHull(c)
    q = fit_quad(c)
    assert np.array_equal(fit_quad(c, hull=hull), q)
    assert quad_shape_score(q, c, cv2.contourArea(c), 1.0, 1.6, cv2.contourArea(hull)) == \
        quad_shape_score(q, c, cv2.contourArea(c), 1.0, 1.6) > 0.8
