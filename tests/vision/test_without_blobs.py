"""What no face's evidence vouches for is a card only by its four straight sides (`without_blobs`)."""
import cv2
import numpy as np
import pytest

from companion.vision.analyze import GUESSED_SCORE, without_blobs
from companion.vision.outline import CardOutline, order_corners
from companion.vision.recognise import CardReading

from .test_quads import _table_with


def _room():
    """A noisy grey wall with a card on it (left) and a round blob, a face or a stool's seat (right)."""
    card = order_corners(cv2.boxPoints(((200, 240), (120, 180), 15)))
    blob = order_corners(cv2.boxPoints(cv2.minAreaRect(cv2.ellipse2Poly((520, 240), (75, 95), -10, 0, 360, 5))))

    def draw(img):
        cv2.fillConvexPoly(img, np.int32(card), (225, 230, 235))
        cv2.ellipse(img, ((520, 240), (150, 190), -10), (70, 110, 190), -1)
    return _table_with(draw, shape=(480, 720), seed=3), card, blob


def _reading(corners, kind, score):
    return CardReading(CardOutline(corners, score), kind, [], [], 0.9, {}, ())


@pytest.mark.parametrize("kind", ["unknown", "back"])
def test_a_guessed_outline_on_a_blob_is_no_card_but_one_on_a_card_is(kind):
    img, card, blob = _room()
    readings = [_reading(card, kind, GUESSED_SCORE), _reading(blob, kind, GUESSED_SCORE)]
    assert without_blobs(img, readings) == readings[:1]


def test_an_outline_fitted_to_its_own_region_or_read_as_a_face_stays():
    img, _, blob = _room()
    fitted = _reading(blob, "unknown", 0.8)           # the finder fitted it to a region's own sides
    face = _reading(blob, "middle", GUESSED_SCORE)    # a face of the deck proves itself by its art
    assert without_blobs(img, [fitted, face]) == [fitted, face]
