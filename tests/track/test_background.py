"""The empty table learnt over a game: never a card, the table wherever it is seen bare."""
from __future__ import annotations

import cv2
import numpy as np

from companion.track.background import ABSORB_READS, UNKNOWN_READS, EmptyTable, TableReader
from companion.vision.background import difference_map

SIZE = (320, 240)
CARD = np.array([[100, 80], [160, 80], [160, 170], [100, 170]], np.float64)


def _table(seed: int, gain: float = 1.0, shift: int = 0) -> np.ndarray:
    """A speckled cloth (the same cloth for every seed; the seed draws the sensor's noise)."""
    cloth = np.random.default_rng(99).integers(60, 120, (SIZE[1] // 8, SIZE[0] // 8, 3)).astype(np.float32)
    img = cv2.resize(cloth, SIZE, interpolation=cv2.INTER_NEAREST)
    img = np.roll(img, shift, axis=1) * gain + np.random.default_rng(seed).normal(0, 2, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def _with_card(img: np.ndarray) -> np.ndarray:
    out = img.copy()
    cv2.fillConvexPoly(out, CARD.astype(np.int32), (210, 225, 235))
    return out


def _lab(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2Lab).astype(np.float32)


def _shows_card(table: EmptyTable, img: np.ndarray) -> bool:
    level = difference_map(*table.unlike(_lab(img))[:2], table.background.known)
    return float(np.mean(level[95:155, 105:155] >= 128)) > 0.9


def test_a_card_read_when_watching_began_is_not_the_table_and_its_place_is_learnt_once_bare():
    table = EmptyTable()
    table.learn(_lab(_with_card(_table(0))), [CARD])
    assert not table.background.known[100:150, 110:150].any()
    assert table.background.known[:, :80].all()
    for k in range(UNKNOWN_READS):       # the card taken away: its place is seen bare
        assert not table.background.known[100:150, 110:150].all()
        table.learn(_lab(_table(k + 1)), [])
    assert table.background.known.all()
    assert _shows_card(table, _with_card(_table(9)))


def test_a_card_the_reader_misses_is_not_learnt_as_table_until_it_has_stayed_unread_long():
    table = EmptyTable()
    table.learn(_lab(_table(0)), [])
    laid = _with_card(_table(1))
    for k in range(ABSORB_READS - 1):
        table.learn(_lab(_with_card(_table(k + 2))), [])     # missed in every reading
        assert _shows_card(table, laid)
    table.learn(_lab(_with_card(_table(50))), [])
    assert not _shows_card(table, laid)                      # a cup set down for good is table


def test_a_card_read_protects_its_place_and_the_light_s_drift_is_followed():
    table = EmptyTable()
    table.learn(_lab(_table(0)), [])
    for k in range(ABSORB_READS + 1):      # the exposure creeps up by a tenth meanwhile
        table.learn(_lab(_with_card(_table(k + 1, gain=1.0 + 0.1 * k / ABSORB_READS))), [CARD])
    assert _shows_card(table, _with_card(_table(80, gain=1.1)))
    level = difference_map(*table.unlike(_lab(_table(81, gain=1.1)))[:2], table.background.known)
    assert np.mean(level[:, :90] >= 128) < 0.01 and np.mean(level[:, 170:] >= 128) < 0.01


def test_a_camera_that_moved_learns_the_table_afresh():
    table = EmptyTable()
    table.learn(_lab(_table(0)), [])
    table.learn(_lab(_table(1)), [])        # the camera's noise is known
    table.learn(_lab(_table(2, shift=24)), [CARD])
    assert not table.background.known[100:150, 110:150].any()       # started again from this picture
    level = difference_map(*table.unlike(_lab(_table(3, shift=24)))[:2], table.background.known)
    assert np.mean(level >= 128) < 0.01


def test_the_reader_gives_the_analyser_what_differs_from_the_table_it_has_learnt():
    calls = []

    def analyze(image, unlike_table=None, bare_table=None):
        calls.append((unlike_table, bare_table))
        return {"cards": [{"corners": CARD.tolist()}]}

    reader = TableReader(analyze)
    reader(_table(0))
    reader(_with_card(_table(1)))
    reader(_table(2))
    assert calls[0] == (None, None) and calls[1][0].shape == calls[1][1].shape == (SIZE[1], SIZE[0])
    assert not calls[1][0][100:150, 110:150].any()     # under the card read first: unknown ...
    assert not calls[1][1][100:150, 110:150].any()     # ... so not known to be bare either
    assert reader.table.background.known[:, :80].all()
    # away from the card the cloth, its pattern and noise included, is the bare table ...
    assert calls[1][1][:, :80].mean() > 0.95 and calls[2][1][:, :80].mean() > 0.95
    # ... but where the card was taken away it is not known to be until seen bare
    assert not calls[2][1][100:150, 110:150].any()


def test_a_part_of_the_picture_is_read_against_the_same_table_as_part_of_the_whole():
    size = (2048, 1536)        # searched at half size, as its parts are
    cloth = np.random.default_rng(99).integers(60, 120, (size[1] // 16, size[0] // 16, 3)).astype(np.float32)
    bare = cv2.resize(cloth, size, interpolation=cv2.INTER_NEAREST).astype(np.uint8)
    card = np.array([[1000, 700], [1120, 700], [1120, 880], [1000, 880]], np.int32)
    laid = bare.copy()
    cv2.fillConvexPoly(laid, card, (210, 225, 235))
    calls = []

    def analyze(image, unlike_table=None, bare_table=None, picture=None):
        calls.append((image.shape, unlike_table, picture, bare_table))
        return {"cards": [{"corners": [[10.0, 20.0]] * 4, "ends": [[30.0, 40.0]]}]}

    reader = TableReader(analyze)
    reader(bare)
    reader(bare)
    learnt = reader.table.background.lab.copy()
    whole = difference_map(*reader.table.unlike(_lab(cv2.resize(laid, None, fx=0.5, fy=0.5,
                                                                 interpolation=cv2.INTER_AREA)))[:2],
                           reader.table.background.known)
    for box, searched in (((901, 601, 1301, 1001), (200, 200)), ((1701, 1201, 2048, 1536), (168, 174))):
        result = reader.region(laid, box)
        shape, unlike, picture, bare = calls[-1]
        assert picture == (1536, 2048)     # searched at the whole picture's scale, with its sizes
        assert shape[:2] == (box[3] - box[1], box[2] - box[0]) and unlike.shape == searched
        x0, y0 = round(box[0] / 2), round(box[1] / 2)
        assert np.array_equal(unlike, whole[y0:y0 + searched[0], x0:x0 + searched[1]])
        assert bare.shape == searched and bare.dtype == bool
        assert result["cards"][0]["corners"][0] == [box[0] + 10.0, box[1] + 20.0]
        assert result["cards"][0]["ends"] == [[box[0] + 30.0, box[1] + 40.0]]
    assert (unlike >= 128).mean() < 0.01 and (calls[-2][1][60:130, 60:100] >= 128).mean() > 0.95
    assert bare.mean() > 0.95 and not calls[-2][3][60:130, 60:100].any()   # the card laid is not bare
    assert len(calls) == 4     # each part was read once and taught the table nothing
    assert np.array_equal(reader.table.background.lab, learnt)
