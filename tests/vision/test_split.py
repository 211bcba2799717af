import cv2
import numpy as np
import pytest

from companion.vision.split import candidate_cuts, split_blob


def _row(n):
    """n 96x96 cards with rounded corners, end to end along x from 64: a notch above and below each seam."""
    mask = np.zeros((200, 96 * n + 130), np.uint8)
    for x0 in range(64, 64 + 96 * n, 96):
        cv2.rectangle(mask, (x0, 52), (x0 + 95, 147), 255, -1)
        for cx in (x0, x0 + 95):
            for cy in (52, 147):   # cut each corner off into a quarter circle
                cv2.rectangle(mask, (cx - 8 if cx > x0 else cx, cy - 8 if cy > 52 else cy),
                              (cx if cx > x0 else cx + 8, cy if cy > 52 else cy + 8), 0, -1)
                cv2.circle(mask, (cx - 8 if cx > x0 else cx + 8, cy - 8 if cy > 52 else cy + 8), 8, 255, -1)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=cv2.contourArea)


def _two_cards_end_to_end():
    """Two cards touching along x = 160."""
    return _row(2)


def test_the_best_cut_joins_the_notches_at_the_seam():
    contour = _two_cards_end_to_end()
    cuts = candidate_cuts(contour, 96.0)
    assert cuts
    p, q = cuts[0]
    assert abs(p[0] - 160) <= 4 and abs(q[0] - 160) <= 4
    top, bottom = sorted([p[1], q[1]])
    assert 52 <= top < 70 and 130 < bottom <= 147   # from notch to notch, right across the strip


def test_a_row_of_two_is_cut_into_two_cards():
    pieces = split_blob(_two_cards_end_to_end(), 0.0, 0.0, 1.0, 1.6)
    assert len(pieces) == 2
    centres = sorted(q.mean(axis=0)[0] for q, _ in pieces)
    assert abs(centres[0] - 112) < 6 and abs(centres[1] - 208) < 6


def test_the_seam_gradient_made_in_windows_is_the_whole_picture_s():
    from companion.vision.split import SeamGradient
    rng = np.random.default_rng(3)
    L = cv2.GaussianBlur(rng.integers(0, 256, (90, 140), dtype=np.uint8), (5, 5), 0)
    blurred = cv2.GaussianBlur(L, (3, 3), 0)
    whole = (cv2.Sobel(blurred, cv2.CV_32F, 1, 0), cv2.Sobel(blurred, cv2.CV_32F, 0, 1))
    lazy = SeamGradient(L)
    for xs, ys in [(np.float32([[10.3, 30.7]]), np.float32([[20.5, 40.2]])),     # inside
                   (np.float32([[-3.0, 4.5]]), np.float32([[85.2, 95.0]])),      # over a corner
                   (np.float32([[120.0, 139.9]]), np.float32([[0.1, 2.0]]))]:    # along an edge
        gx, gy = lazy.around(xs, ys)
        for mine, truth in zip((gx, gy), whole):
            assert np.array_equal(cv2.remap(mine, xs, ys, cv2.INTER_LINEAR), cv2.remap(truth, xs, ys, cv2.INTER_LINEAR))


def test_one_frame_s_cuts_reach_the_last_of_six_rows_seen_in_five_maps():
    """A table in play holds half a dozen snakes, and each is a region of five maps (colour
    open and closed, edges, rarity open and closed): the frame's budget of cuts, spent
    first on the largest regions, must reach the last of them."""
    from companion.vision.split import SPLIT_BUDGET
    budget = [SPLIT_BUDGET]
    row = _row(8)
    for _ in range(6 * 5 - 1):
        split_blob(row, 0.0, 0.0, 1.0, 1.6, budget=budget)
    assert len(split_blob(row, 0.0, 0.0, 1.0, 1.6, budget=budget)) >= 6


def _row_in_perspective(lengths, seams=True):
    """A picture of cards 60 across and `lengths` long lying edge to edge in a straight row, with
    no notch between them (square corners), seen at a slant: the row runs away from the camera,
    so each card looks shorter than the one before.  Returns the picture's lightness, the row's
    outline as a contour, and each card's corners in the picture."""
    edges = 40 + np.concatenate([[0], np.cumsum(lengths)])
    flat = np.full((200, int(edges[-1]) + 40), 150, np.uint8)       # the table
    cv2.rectangle(flat, (40, 70), (int(edges[-1]) - 1, 129), 225, -1)   # the cards' paper
    xs = np.arange(40, int(edges[-1]))
    body = np.stack([xs, 100 + 12 * np.sin(xs / 80 * 3 * np.pi)], axis=1).astype(np.int32)
    cv2.polylines(flat, [body], False, 60, 9)                        # a wavy snake along them all
    if seams:
        for x in edges[1:-1]:
            cv2.line(flat, (int(x), 70), (int(x), 129), 170, 1)
    h, w = flat.shape
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[30, 40], [w * 0.8 + 30, 70], [w * 0.8 + 30, h - 10], [30, h + 40]])
    slant = cv2.getPerspectiveTransform(src, dst)
    picture = cv2.warpPerspective(flat, slant, (int(w * 0.8) + 60, h + 60), borderValue=150)

    def seen(x0, x1):
        return cv2.perspectiveTransform(np.float32([[[x0, 70]], [[x1, 70]], [[x1, 130]], [[x0, 130]]]),
                                        slant).reshape(4, 2)
    mask = np.zeros(picture.shape, np.uint8)
    cv2.fillPoly(mask, [np.int32(np.round(seen(edges[0], edges[-1])))], 255)
    contour = max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)
    return picture, contour, [seen(a, b) for a, b in zip(edges, edges[1:])]


@pytest.mark.parametrize("lengths", [[80] * 6, [80, 92, 72, 90, 74, 84]], ids=["equal", "unequal"])
def test_a_straight_row_with_no_notches_is_cut_at_its_seams_in_perspective(lengths):
    """Equal cards, and cards a little unequal (a row laid by hand): each seam is
    looked for near its place, not only at it."""
    from companion.vision.outline import polygon_iou
    from companion.vision.split import SeamGradient, cut_row
    picture, contour, cards = _row_in_perspective(lengths)
    pieces = cut_row(contour, SeamGradient(picture), 1.6)
    assert len(pieces) == 6
    pieces = sorted((q for q, _ in pieces), key=lambda q: q[:, 0].mean())
    assert all(polygon_iou(piece, card) > 0.85 for piece, card in zip(pieces, cards))
    assert np.ptp(pieces[0][:, 0]) > 1.15 * np.ptp(pieces[-1][:, 0])     # (the slant shrinks them)


def test_a_long_strip_without_seams_is_not_cut():
    from companion.vision.split import SeamGradient, cut_row
    picture, contour, _ = _row_in_perspective([80] * 6, seams=False)
    assert cut_row(contour, SeamGradient(picture), 1.6) == []


def _faded_strip(cards, length=80, width=60, fade=8):
    """The outline of `cards` cards `length` long and `width` across lying end to end along x,
    as a learnt map shows them: the strip `fade` pixels wider each side, no notch, no seam."""
    mask = np.zeros((width + 4 * fade + 40, cards * length + 80), np.uint8)
    cv2.rectangle(mask, (40, 20 + fade), (40 + cards * length - 1, 20 + 3 * fade + width - 1), 255, -1)
    return max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)


@pytest.mark.parametrize("cards, measured", [(2, 86.0), (5, 84.0), (9, 81.5)])
def test_a_strip_of_known_card_size_is_cut_into_as_many_cards_as_it_holds(cards, measured):
    from companion.vision.split import split_to_size
    # cards found alone elsewhere measured a little longer than these: the size is a fit
    pieces = split_to_size(_faded_strip(cards), 60.0, measured)
    assert len(pieces) == cards
    centres = sorted(q.mean(axis=0)[0] for q, _ in pieces)
    assert np.allclose(centres, 40 + 80 * np.arange(cards) + 40, atol=1.5)
    for quad, _ in pieces:
        across = np.ptp(quad[:, 1])
        assert across <= 60.5   # as wide as a card, not as the faded strip


def test_a_strip_no_whole_number_of_cards_long_is_not_cut_to_size():
    from companion.vision.split import split_to_size
    assert split_to_size(_faded_strip(5), 60.0, 80.0 * 5 / 4.5) == []     # four and a half cards
    assert split_to_size(_faded_strip(5, width=110), 60.0, 80.0) == []     # two rows side by side
    # nine cards measured 7% long: eight or nine, the count is not guessed
    assert split_to_size(_faded_strip(9), 60.0, 86.0) == []
