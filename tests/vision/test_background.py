"""What differs from the empty table: a card of the cloth's own colour stands out, the cloth does not."""
from __future__ import annotations

import cv2
import numpy as np

from companion.vision.background import TableBackground, difference_map, table_distance
from companion.vision.find import find_cards
from companion.vision.outline import polygon_iou

SIZE = (640, 480)
CREAM, OCHRE = (200, 222, 232), (40, 150, 200)      # BGR: the paper's colour is the light stripe's
CARD = np.array([[250, 150], [350, 170], [330, 300], [230, 280]], np.float64)
BODY = np.array([[284, 175], [300, 178], [296, 275], [280, 272]], np.int32)


def _cloth(shift: float = 0.0, gain: float = 1.0, seed: int = 0) -> np.ndarray:
    """Diagonal stripes, a period of 24 px, moved `shift` px, under `gain` light, with sensor noise."""
    y, x = np.mgrid[0:SIZE[1], 0:SIZE[0]].astype(np.float32)
    light = (np.sin((x + y + shift) * np.pi / 12) > 0)[..., None]
    img = np.where(light, np.float32(CREAM), np.float32(OCHRE)) * gain
    img = cv2.GaussianBlur(img, (0, 0), 1.0)
    img += np.random.default_rng(seed).normal(0, 3, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _with_card(img: np.ndarray) -> np.ndarray:
    out = img.copy()
    cv2.fillConvexPoly(out, CARD.astype(np.int32), CREAM, cv2.LINE_AA)
    cv2.fillConvexPoly(out, BODY, (60, 170, 60))      # a snake's thin body along the card
    return out


def _lab(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2Lab).astype(np.float32)


def _inside(quad: np.ndarray, grow: float) -> np.ndarray:
    mask = np.zeros(SIZE[::-1], np.uint8)
    c = quad.mean(axis=0)
    cv2.fillConvexPoly(mask, np.round(c + (quad - c) * grow).astype(np.int32), 1)
    return mask > 0


def _empty_table() -> TableBackground:
    return TableBackground(_lab(_cloth(seed=1)), np.ones(SIZE[::-1], bool))


def test_a_card_of_the_cloth_s_colour_differs_and_the_trembling_drifting_cloth_does_not():
    # the same cloth a moment later: the camera trembled by a pixel, the exposure crept up
    now = _with_card(_cloth(shift=1.0, gain=1.06, seed=2))
    level = difference_map(*table_distance(_lab(now), _empty_table()), np.ones(SIZE[::-1], bool))
    card, table = _inside(CARD, 0.8), ~_inside(CARD, 1.3)
    assert np.mean(level[card] >= 128) > 0.9
    assert np.mean(level[table] < 128) > 0.99


def test_nothing_is_marked_where_the_table_was_never_seen_bare():
    bg = _empty_table()
    bg.known[:, :300] = False
    level = difference_map(*table_distance(_lab(_with_card(_cloth(seed=2))), bg), bg.known)
    assert not level[:, :300].any()
    assert level[_inside(CARD, 0.8) & bg.known].mean() >= 128


def test_the_finder_outlines_a_card_from_what_differs_from_the_table():
    now = _with_card(_cloth(shift=1.0, seed=2))
    unlike = difference_map(*table_distance(_lab(now), _empty_table()), np.ones(SIZE[::-1], bool))
    found = find_cards(now, unlike_table=unlike)
    assert max((polygon_iou(o.corners, CARD) for o in found), default=0.0) > 0.85
    # the picture alone does not show it: paper of the light stripes' colour on the stripes
    assert max((polygon_iou(o.corners, CARD) for o in find_cards(now)), default=0.0) < 0.5


def test_a_slanted_card_whose_region_differs_from_the_table_only_roughly_is_found():
    # A card seen at a slant is a parallelogram; what differs from the table is a coarse
    # map, its corners rounded by blur, and bitten into at the card's end where the snake's
    # body has the colour the empty table showed there. The picture alone does not show the
    # card (paper of the light stripes' colour).
    slanted = np.array([[330, 150], [408, 150], [380, 234], [302, 234]], np.float64)
    bitten = np.array([[335, 236], [362, 236], [362, 214], [340, 214]], np.int32)
    now = _cloth(shift=1.0, seed=2)
    cv2.fillConvexPoly(now, slanted.astype(np.int32), CREAM, cv2.LINE_AA)
    cv2.fillConvexPoly(now, bitten, OCHRE)
    unlike = np.zeros(SIZE[::-1], np.uint8)
    cv2.fillConvexPoly(unlike, slanted.astype(np.int32), 255)
    cv2.fillConvexPoly(unlike, bitten, 0)
    unlike = cv2.GaussianBlur(unlike, (0, 0), 2.0)
    assert max((polygon_iou(o.corners, slanted) for o in find_cards(now, unlike_table=unlike)), default=0.0) > 0.85
    assert max((polygon_iou(o.corners, slanted) for o in find_cards(now)), default=0.0) < 0.5
