import cv2
import numpy as np

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
