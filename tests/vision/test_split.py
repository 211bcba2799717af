import cv2
import numpy as np

from companion.vision.split import candidate_cuts, split_blob


def _two_cards_end_to_end():
    """Two 60x96 cards with rounded corners, touching along x = 160: a notch above and below the seam."""
    mask = np.zeros((200, 320), np.uint8)
    for x0 in (64, 160):
        cv2.rectangle(mask, (x0, 52), (x0 + 95, 147), 255, -1)
        for cx in (x0, x0 + 95):
            for cy in (52, 147):   # cut each corner off into a quarter circle
                cv2.rectangle(mask, (cx - 8 if cx > x0 else cx, cy - 8 if cy > 52 else cy),
                              (cx if cx > x0 else cx + 8, cy if cy > 52 else cy + 8), 0, -1)
                cv2.circle(mask, (cx - 8 if cx > x0 else cx + 8, cy - 8 if cy > 52 else cy + 8), 8, 255, -1)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=cv2.contourArea)


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
