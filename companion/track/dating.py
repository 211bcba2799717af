"""When was a card found late laid?  Dating it back by the settled pictures.

The reader misses cards now and then; a card found only at a later settled
table must still be judged in the turn it was laid.  The pixels say when: its
place changed in the settled picture of that turn and stayed as it was since.
`SettledPictures` keeps the settled pictures since the table was last given to
the referee (that one first) and answers, per card, which of them first showed
it -- by where its place changed, by the frame a waiting change first showed it
in, or by where it lay before its chain was pushed.

A date is an index into the pictures (`SettledPictures.frame(k)` is its frame).
Outlines are four corners in full-image pixels; pictures are the change gate's
small copies.
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping

import cv2
import numpy as np

from .gate import ChangeGate
from .pushes import chain_push

# corners (4 x 2, full-image pixels) -> the pixels under that outline did not change
PlaceTest = Callable[[np.ndarray], bool]
Corners = np.ndarray
KEEP = 7   # settled pictures kept: the judged one and the latest few


def _small_per_full(before: np.ndarray | None, now: np.ndarray | None,
                    image_shape: tuple[int, ...] | None) -> np.ndarray | None:
    """Small-picture pixels per full-image pixel (x, y), or None when the two pictures cannot
    be compared (one missing, or of different sizes)."""
    if before is None or now is None or image_shape is None or before.shape != now.shape:
        return None
    return np.array([now.shape[1] / image_shape[1], now.shape[0] / image_shape[0]])


def unmoved_test(gate: ChangeGate, before: np.ndarray | None, now: np.ndarray | None,
                 image_shape: tuple[int, ...] | None, fraction: float) -> PlaceTest | None:
    """A test: did the pixels under an outline stay as they were in `before`?  (Under
    `fraction` of them changed.)  None when there is no picture to compare with."""
    scale = _small_per_full(before, now, image_shape)
    if scale is None:
        return None
    changed = gate.changed_mask(now, before)

    def unmoved(corners) -> bool:
        region = np.zeros(changed.shape, np.uint8)
        pts = np.round(np.asarray(corners, float) * scale).astype(np.int32)
        cv2.fillConvexPoly(region, pts, 1)
        inside = region.astype(bool)
        return inside.sum() > 0 and changed[inside].mean() < fraction
    return unmoved


def nudged_test(gate: ChangeGate, before: np.ndarray | None, now: np.ndarray | None,
                image_shape: tuple[int, ...] | None, fraction: float, reach: int) -> PlaceTest | None:
    """A test: does `now` show under an outline what `before` showed there, moved at most
    `reach` small pixels each way (a card nudged by one laid against it)?  (Under `fraction`
    of its pixels changed, its rim left out, at the shift that matches best.)  None when
    there is no picture to compare with.

    The share of an outline's pixels that changed cannot say it: a card nudged a quarter of
    its width changed under half of them, and so did a card laid on a cloth of the paper's
    cream with dark dots; moved back, the first changed none and the second as many."""
    scale = _small_per_full(before, now, image_shape)
    if scale is None:
        return None
    h, w = now.shape[:2]

    def nudged(corners) -> bool:
        pts = np.asarray(corners, float) * scale
        x0, y0 = np.maximum(np.floor(pts.min(axis=0)).astype(int), reach)
        x1, y1 = np.minimum(np.ceil(pts.max(axis=0)).astype(int) + 1, (w - reach, h - reach))
        if x1 - x0 < 3 or y1 - y0 < 3:
            return False
        patch = now[y0:y1, x0:x1]
        match = cv2.matchTemplate(before[y0 - reach:y1 + reach, x0 - reach:x1 + reach], patch,
                                  cv2.TM_SQDIFF)
        dx, dy = np.subtract(cv2.minMaxLoc(match)[2], reach)
        region = np.zeros(patch.shape[:2], np.uint8)
        cv2.fillConvexPoly(region, np.round(pts - (x0, y0)).astype(np.int32), 1)
        inside = cv2.erode(region, np.ones((3, 3), np.uint8)).astype(bool)
        changed = gate.changed_mask(patch, before[y0 + dy:y1 + dy, x0 + dx:x1 + dx])
        return inside.any() and changed[inside].mean() < fraction
    return nudged


def carried_test(gate: ChangeGate, before: np.ndarray | None, now: np.ndarray | None,
                 image_shape: tuple[int, ...] | None, fraction: float
                 ) -> Callable[[np.ndarray, np.ndarray], bool] | None:
    """A test: does `now` show under outline `to` what `before` showed under `start` (a card
    carried from there to there, under `fraction` of its pixels changed)?  None when there
    is no picture to compare with."""
    scale = _small_per_full(before, now, image_shape)
    if scale is None:
        return None
    scale = scale.astype(np.float32)

    def carried(start, to) -> bool:
        a = (np.asarray(start, np.float32) * scale).reshape(4, 2)
        b = (np.asarray(to, np.float32) * scale).reshape(4, 2)
        moved = cv2.warpPerspective(before, cv2.getPerspectiveTransform(a, b),
                                    (now.shape[1], now.shape[0]), flags=cv2.INTER_LINEAR)
        moved = moved.reshape(now.shape)   # (a one-channel picture loses its channel axis)
        region = np.zeros(now.shape[:2], np.uint8)
        cv2.fillConvexPoly(region, np.round(b).astype(np.int32), 1)
        # (its rim left out: the table around it was not carried)
        inside = cv2.erode(region, np.ones((3, 3), np.uint8)).astype(bool)
        return inside.sum() > 0 and gate.changed_mask(now, moved)[inside].mean() < fraction
    return carried


class SettledPictures:
    """The settled pictures (frame, small copy) since the table was last judged, that one
    first, and the dates they give cards found late."""

    def __init__(self, gate: ChangeGate, unmoved_fraction: float):
        self.gate = gate
        self.unmoved_fraction = unmoved_fraction
        self._shots: list[tuple[int, np.ndarray]] = []
        self._before: np.ndarray | None = None   # the picture judged before the judged one
        self._between: list[tuple[int, np.ndarray]] = []   # the pictures kept between the two

    def __len__(self) -> int:
        return len(self._shots)

    def frame(self, k: int) -> int:
        """The frame of the k-th picture (a date's frame)."""
        return self._shots[k][0]

    @property
    def last(self) -> np.ndarray | None:
        return self._shots[-1][1] if self._shots else None

    @property
    def judged(self) -> np.ndarray | None:
        """The picture the table was last judged from."""
        return self._shots[0][1] if self._shots else None

    def showing(self, frame: int) -> np.ndarray | None:
        """The first kept picture taken at or after `frame`: the one a reading then was of."""
        return next((small for f, small in self._shots if f >= frame), None)

    def restart(self, frame: int, small: np.ndarray) -> None:
        """The table was judged from this picture: dating starts again from it."""
        self._before = self._shots[0][1] if self._shots else None
        self._between = self._shots[1:]
        self._shots = [(frame, small)]

    def keep(self, frame: int, small: np.ndarray) -> None:
        """Keep a settled picture (the judged one and the latest few)."""
        if len(self._shots) > KEEP:
            self._shots = self._shots[:1] + self._shots[-(KEEP - 1):]
        self._shots.append((frame, small))

    def test(self, now: np.ndarray | None, image_shape, before: np.ndarray | None) -> PlaceTest | None:
        return unmoved_test(self.gate, before, now, image_shape, self.unmoved_fraction)

    def laid_unseen(self, cards: Mapping[int, Corners], now: np.ndarray | None,
                    image_shape) -> dict[int, int]:
        """Of cards found where nothing changed since some settled picture, those whose place
        changed since the table was judged before: card -> the first picture that showed it
        (the one after the last in which its place changed; the reader missed it there).
        One first shown by the judged picture (0) was laid in the turn judged there, and
        missed.  A card whose place changed since the last picture is not dated: it was laid now."""
        if not cards:   # (each test compares two whole pictures)
            return {}
        tests = [self.test(now, image_shape, small) for _, small in self._shots]
        earlier = self.test(now, image_shape, self._before)
        out = {}
        for t, corners in cards.items():
            changed = [k for k, test in enumerate(tests) if test is not None and not test(corners)]
            if changed and max(changed) + 1 < len(tests):
                out[t] = max(changed) + 1
            elif not changed and tests and earlier is not None and not earlier(corners):
                out[t] = 0
        return out

    def there_before_judged(self, cards: Mapping[int, Corners], judged: Iterable[Corners],
                            image_shape) -> dict[int, int]:
        """Of cards laid in the turn judged last and missed there (`laid_unseen`'s 0), those
        already lying as in the judged picture in a picture kept between it and the one
        judged before, while the places of the cards judged there (`judged`) changed after
        it: card -> that picture's frame.  They were laid a turn before the one judged."""
        judged = list(judged)
        out: dict[int, int] = {}
        if not judged:   # (no card judged there: nothing to date the cards against)
            return out
        for frame, small in self._between:
            test = self.test(self.judged, image_shape, small)
            if test is None or any(test(c) for c in judged):
                continue
            out.update({t: frame for t, corners in cards.items() if t not in out and test(corners)})
        return out

    def seen_before(self, added: Iterable[int], waited: Mapping[int, int]) -> dict[int, int]:
        """New cards of a change left unjudged (`waited`: card -> frame first showing it) were
        laid by the picture that first showed them, whatever happened at their place since
        (a card pushed to be joined no longer lies where the pixels could say so)."""
        frames = [f for f, _ in self._shots]
        out = {}
        for t in set(added) & set(waited):
            k = next((k for k, f in enumerate(frames) if f >= waited[t]), None)
            if k is not None:
                out[t] = k
        return out

    def laid_before_push(self, cards: Mapping[int, tuple[Corners, float]], chain_of: Mapping[int, set],
                         now: Mapping[int, Corners], then: Mapping[int, Corners],
                         settled_frame: int | None, image_shape) -> dict[int, int]:
        """Of new cards (`cards`: card -> corners now, size) whose place changed since the last
        settled picture, those in a chain (`chain_of`) pushed since then that the reader missed
        in that picture: where each lay before the push, that picture differs from the one
        before it (it was laid then), while a card laid now finds the table there as it was.
        `now` and `then` are the outlines of the settled cards now and at the last settle."""
        # (the push is measured from the last settled table: only when that is the last picture)
        if len(self._shots) < 2 or not cards or self._shots[-1][0] != settled_frame:
            return {}
        changed_then = self.test(self._shots[-1][1], image_shape, self._shots[-2][1])
        if changed_then is None:
            return {}
        out = {}
        for t, (corners, size) in cards.items():
            push = chain_push(chain_of[t], now, then, size)
            if push is not None and not changed_then(corners - push):
                out[t] = len(self._shots) - 1
        return out
