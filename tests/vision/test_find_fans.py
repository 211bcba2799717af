"""The fan of face-down cards: overlapping, one region, no cut parts it; its top card lies whole."""
import cv2
import numpy as np

from companion.vision.find import find_cards
from companion.vision.outline import polygon_iou
from companion.vision.split import card_on_side

SIZE = (70, 112)              # px: a card's short and long side
GREEN = (70, 120, 40)         # BGR: the back's colour
RIM = (30, 60, 20)


def _card(img, corners):
    cv2.fillConvexPoly(img, np.round(corners).astype(np.int32), GREEN, cv2.LINE_AA)
    cv2.polylines(img, [np.round(corners).astype(np.int32)], True, RIM, 2, cv2.LINE_AA)


def _fan_table(seed, n, step):
    """Two lone backs (they teach the card size) and a fan of `n` turned `step` degrees apart
    about a point near one end, the last card on top."""
    rng = np.random.default_rng(seed)
    img = np.full((480, 640, 3), (60, 110, 150), np.uint8)
    lone = [cv2.boxPoints(((120, 360), SIZE, 10)), cv2.boxPoints(((520, 120), SIZE, -20))]
    base = rng.uniform(-180, 180)
    pivot = np.array([330.0, 250.0])
    fan = []
    for k in range(n):
        a = np.radians(base + k * step)
        up = np.array([-np.sin(a), np.cos(a)])
        fan.append(cv2.boxPoints((tuple(pivot - up * SIZE[1] * 0.35), SIZE, np.degrees(a))))
    for c in lone + fan:
        _card(img, c.astype(np.float64))
    noisy = np.clip(img + rng.normal(0, 2.0, img.shape), 0, 255).astype(np.uint8)
    return noisy, [c.astype(np.float64) for c in lone], [c.astype(np.float64) for c in fan]


def _best(found, corners):
    return max((polygon_iou(f.corners, corners) for f in found), default=0.0)


def test_the_top_card_of_a_fan_is_found_and_never_one_beneath_it():
    tops = 0
    for n, step in ((5, 10), (4, -12)):
        for seed in range(8):
            img, lone, fan = _fan_table(seed, n, step)
            found = find_cards(img)
            assert all(_best(found, c) > 0.85 for c in lone)
            top, beneath = _best(found, fan[-1]), max(_best(found, c) for c in fan[:-1])
            if top > 0.85:
                tops += 1
                assert beneath < top
            # whatever lies on the fan is one card: never two, never a card across it
            on_fan = [f for f in found if max(polygon_iou(f.corners, c) for c in fan) > 0.3]
            assert len(on_fan) <= 1
    # (the top card's flank is hidden where the cards beneath poke out at its corner,
    # in about half of these fans)
    assert tops >= 6, tops


def test_a_card_is_grown_from_a_side_of_a_region_only_onto_edges():
    # a card with something of the table's kind stuck to one long side: one region
    card = np.array([[100, 80], [170, 80], [170, 192], [100, 192]], np.float64)
    mask = np.zeros((300, 300), np.uint8)
    cv2.fillConvexPoly(mask, card.astype(np.int32), 255)
    cv2.rectangle(mask, (170, 110), (215, 170), 255, -1)
    contour = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0]
    assert card_on_side(contour, *SIZE, np.zeros_like(mask), 2.6) == []
    edges = cv2.Canny(mask, 50, 150)            # the region's outline: not the card's far side
    assert all(polygon_iou(q, card) < 0.85 for q, _ in card_on_side(contour, *SIZE, edges, 2.6))
    cv2.polylines(edges, [card.astype(np.int32)], True, 255, 1)   # the card's own rim
    got = card_on_side(contour, *SIZE, edges, 2.6)
    assert len(got) == 1 and polygon_iou(got[0][0], card) > 0.85, got
