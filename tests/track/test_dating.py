"""Dating cards found late by the settled pictures (`companion.track.dating`)."""
import numpy as np

from companion.track.dating import KEEP, SettledPictures, nudged_test, unmoved_test
from companion.track.gate import ChangeGate
from companion.track.settings import TrackerSettings

SHAPE = (90, 160, 3)          # the full image; the pictures below are its small copies
CARD = np.array([[40.0, 20.0], [60.0, 20.0], [60.0, 50.0], [40.0, 50.0]])
ELSEWHERE = CARD + [80.0, 30.0]


def picture(*cards: np.ndarray) -> np.ndarray:
    """A textured table (so that change is measured against real contrast) with cards on it."""
    rng = np.random.default_rng(0)
    small = rng.normal(0, 20, SHAPE).astype(np.float32)
    for corners in cards:
        x0, y0 = corners.min(axis=0).astype(int)
        x1, y1 = corners.max(axis=0).astype(int)
        small[y0:y1, x0:x1] = 150.0
    return small


def pictures(*shots: np.ndarray) -> SettledPictures:
    dating = SettledPictures(ChangeGate(), unmoved_fraction=0.1)
    dating.restart(100, shots[0])
    for k, small in enumerate(shots[1:], 1):
        dating.keep(100 + 10 * k, small)
    return dating


def test_a_card_missed_when_laid_is_dated_by_the_picture_where_its_place_changed():
    # judged table (no card), the card laid at 110 (missed by the reader), another turn at 120
    dating = pictures(picture(), picture(CARD), picture(CARD, ELSEWHERE))
    now = picture(CARD, ELSEWHERE)
    assert dating.laid_unseen({7: CARD}, now, SHAPE) == {7: 1}
    assert dating.frame(1) == 110


def test_a_card_whose_place_changed_only_now_has_no_date():
    # laid in the picture being judged: no kept picture shows it, so it is this turn's
    dating = pictures(picture(), picture(ELSEWHERE))
    assert dating.laid_unseen({7: CARD, 8: ELSEWHERE}, picture(CARD, ELSEWHERE), SHAPE) == {8: 1}


def test_a_card_missed_in_the_picture_the_table_was_judged_from_is_dated_by_it():
    # judged at 100 without the card, judged again at 110 from a picture that shows it (the
    # reader missed it): laid in the turn judged at 110, not in the one being judged now
    dating = pictures(picture())
    dating.restart(110, picture(CARD))
    now = picture(CARD, ELSEWHERE)
    assert dating.laid_unseen({7: CARD, 8: ELSEWHERE}, now, SHAPE) == {7: 0}
    assert dating.frame(0) == 110


def test_a_card_whose_place_never_changed_has_no_date():
    dating = pictures(picture(CARD), picture(CARD, ELSEWHERE))
    assert dating.laid_unseen({7: CARD}, picture(CARD, ELSEWHERE), SHAPE) == {}


def test_a_waiting_card_is_dated_by_the_first_picture_at_or_after_the_frame_that_showed_it():
    dating = pictures(picture(), picture(CARD), picture(CARD))
    assert dating.seen_before({7, 8}, {7: 105, 9: 100}) == {7: 1}
    assert dating.seen_before({7}, {7: 500}) == {}


def test_a_card_in_a_pushed_chain_is_dated_where_it_lay_before_the_push():
    push = np.array([30.0, 0.0])
    neighbour = CARD - [20.0, 0.0]
    # laid (unseen) at 110 beside its neighbour; by now the chain was pushed 30 px right
    dating = pictures(picture(neighbour), picture(neighbour, CARD))
    out = dating.laid_before_push({7: (CARD + push, 20.0)}, {7: {3, 7}},
                                  now={3: neighbour + push}, then={3: neighbour},
                                  settled_frame=110, image_shape=SHAPE)
    assert out == {7: 1}
    # a card laid only now finds the last picture as it was where it lies before the push
    dating = pictures(picture(neighbour), picture(neighbour))
    out = dating.laid_before_push({7: (CARD + push, 20.0)}, {7: {3, 7}},
                                  now={3: neighbour + push}, then={3: neighbour},
                                  settled_frame=110, image_shape=SHAPE)
    assert out == {}


def test_the_judged_picture_and_the_latest_few_are_kept():
    dating = pictures(*[picture() for _ in range(12)])
    assert len(dating) == KEEP + 1
    assert dating.frame(0) == 100 and dating.frame(len(dating) - 1) == 210


def test_a_card_carried_is_recognised_at_its_new_place_by_what_it_showed_at_its_old_one():
    from companion.track.dating import carried_test

    def shown(at: np.ndarray | None, upside_down: bool = False) -> np.ndarray:
        small = picture()
        if at is not None:     # a face of two halves, so that which way round it lies shows
            x0, y0 = at.min(axis=0).astype(int)
            x1, y1 = at.max(axis=0).astype(int)
            middle = (y0 + y1) // 2
            small[y0:middle, x0:x1], small[middle:y1, x0:x1] = (60.0, 150.0) if upside_down else (150.0, 60.0)
        return small
    before = shown(CARD)
    assert carried_test(ChangeGate(), before, shown(ELSEWHERE), SHAPE, 0.1)(CARD, ELSEWHERE)
    assert not carried_test(ChangeGate(), before, shown(None), SHAPE, 0.1)(CARD, ELSEWHERE)
    assert not carried_test(ChangeGate(), before, shown(ELSEWHERE, upside_down=True), SHAPE, 0.1)(CARD, ELSEWHERE)
    assert carried_test(ChangeGate(), before, None, SHAPE, 0.1) is None


def dotted_cloth(*cards: np.ndarray) -> np.ndarray:
    """A cream cloth with dark blue dots, and cards of its cream with a yellow body along them."""
    small = np.full(SHAPE, 200.0, np.float32)
    small[::4, ::4] = small[1::4, ::4] = small[::4, 1::4] = small[1::4, 1::4] = (150, 80, 40)
    for corners in cards:
        x0, y0 = corners.min(axis=0).astype(int)
        x1, y1 = corners.max(axis=0).astype(int)
        small[y0:y1, x0:x1] = 200.0
        mid = (x0 + x1) // 2
        small[y0:y1, mid - 3:mid + 3] = (30, 200, 230)
    return small


def test_a_card_nudged_is_told_from_one_laid_on_a_cloth_of_its_own_paper():
    # the cloth's cream is the paper's: a card laid there changes under half of its outline
    # (the dots it covers and its body), as a card nudged by one laid against it does; only
    # the nudged card's pixels are the picture before, moved a little
    settings = TrackerSettings()

    def nudged(before, now, corners):
        return nudged_test(ChangeGate(), before, now, SHAPE, settings.nudged_fraction,
                           settings.nudge_reach)(corners)
    pushed = CARD + [3.0, 2.0]
    for before, now, corners in [(dotted_cloth(), dotted_cloth(CARD), CARD),
                                 (dotted_cloth(CARD), dotted_cloth(pushed), pushed)]:
        assert unmoved_test(ChangeGate(), before, now, SHAPE, 0.5)(corners)
        assert not unmoved_test(ChangeGate(), before, now, SHAPE, settings.unmoved_fraction)(corners)
    assert not nudged(dotted_cloth(), dotted_cloth(CARD), CARD)
    assert nudged(dotted_cloth(CARD), dotted_cloth(pushed), pushed)
