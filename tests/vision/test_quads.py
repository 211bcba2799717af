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


def _table_with(draw, shape=(480, 640), seed=0):
    """A grey table with sensor noise, something drawn on it (`draw(img)` in place)."""
    rng = np.random.default_rng(seed)
    img = np.full(shape + (3,), (95, 110, 125), np.uint8)
    draw(img)
    noise = rng.normal(0, 4, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


CARD = ((320, 240), (120, 180), 20)    # a card's rotated rectangle: centre, size, degrees


def test_a_card_s_sides_lie_on_straight_edges_and_a_quad_off_it_s_do_not():
    from companion.vision.quads import straight_sides
    corners = cv2.boxPoints(CARD)
    img = _table_with(lambda im: cv2.fillConvexPoly(im, np.int32(corners), (225, 230, 235)))
    assert straight_sides(img, corners) == 4
    # slid along and turned off the card, two of its sides cross the card's instead of lying on them
    (cx, cy), size, angle = CARD
    assert straight_sides(img, cv2.boxPoints(((cx + 40, cy), size, angle + 12))) < 3


def test_a_quad_fitted_to_a_round_blob_has_no_straight_sides():
    from companion.vision.quads import straight_sides
    img = _table_with(lambda im: cv2.ellipse(im, ((320, 240), (150, 190), 20), (40, 60, 170), -1))
    fitted = cv2.boxPoints(cv2.minAreaRect(cv2.ellipse2Poly((320, 240), (75, 95), 20, 0, 360, 5)))
    assert straight_sides(img, fitted) <= 1


def test_straight_sides_are_judged_alike_at_any_picture_size():
    from companion.vision.quads import straight_sides
    corners = cv2.boxPoints(CARD)
    img = _table_with(lambda im: cv2.fillConvexPoly(im, np.int32(corners), (225, 230, 235)))
    big = cv2.resize(img, None, fx=4, fy=4, interpolation=cv2.INTER_LINEAR)   # a 4K picture of it
    assert straight_sides(big, 4 * corners) == straight_sides(img, corners) == 4


def test_a_side_against_a_neighbour_of_the_same_paper_still_leaves_three():
    from companion.vision.quads import straight_sides
    (cx, cy), (w, h), angle = CARD
    corners = cv2.boxPoints(CARD)
    turn = np.deg2rad(angle)
    below = (cx - h * np.sin(turn), cy + h * np.cos(turn))   # the next card end to end, no seam
    img = _table_with(lambda im: [cv2.fillConvexPoly(im, np.int32(c), (225, 230, 235)) for c in
                                  (corners, cv2.boxPoints((below, (w, h), angle)))], shape=(720, 640))
    assert straight_sides(img, corners) == 3
