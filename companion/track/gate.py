"""Cheap change gating: is anything moving, and has the table changed since it was last read?

A full analysis costs tens of milliseconds; a frame shrunk to ~180 px high
costs about one.  Two questions are asked of every frame in that small
form (the idea of Frigate's motion detector):

* *motion*: does it differ from the frame before?  A hand, its shadow, a card
  in flight, motion blur all do; the table is only read once motion has stopped.
* *change*: does the still picture differ from the one the current settled
  table was read from?  If not, there is nothing new to read.

Both use the same robust difference.  Light that varies slowly across the
picture (an offset, vignetting, a lamp's pool, auto-exposure creeping towards
white) is taken out by subtracting a blurred copy, and an overall gain is
matched before comparing, so exposure drift does not count as change; a
pixel only counts as changed when no pixel within one small-image pixel of it
in the other picture is close, so camera shake of a few full-size pixels does
not count either.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class GateSettings:
    # Tuned on rendered hard-tier games: at 180 rows the smallest card, far off at the
    # edge of a tilted view, still changes a few small pixels, while still frames with
    # noise, shake and exposure drift change at most one (100 rows missed such cards).
    height: int = 180               # rows of the small image
    light_scale: float = 9.0        # small-image pixels: slower light changes are not change
    relative_threshold: float = 0.5 # a changed pixel differs by this times the picture's contrast
    absolute_threshold: float = 13.0  # ... and by at least this many grey levels
    min_changed_pixels: int = 3     # fewer changed small pixels than this is noise


_KERNEL = np.ones((3, 3), np.uint8)


class ChangeGate:
    def __init__(self, settings: GateSettings = GateSettings()):
        self.settings = settings

    def shrink(self, image: np.ndarray) -> np.ndarray:
        """The frame small, with light that varies slowly across it taken out (float32)."""
        h, w = image.shape[:2]
        k = max(1, h // self.settings.height)
        if k > 1:
            # An integer factor over a crop to its multiple takes OpenCV's fast area-averaging
            # path (a fractional factor costs four times as much at 1280x720).
            image = cv2.resize(image[:h - h % k, :w - w % k], (w // k, h // k),
                               interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(image.astype(np.float32), (3, 3), 0)
        if small.ndim == 2:
            small = small[:, :, None]
        out = small - self._light(small)
        return out if out.ndim == 3 else out[:, :, None]

    def _light(self, small: np.ndarray) -> np.ndarray:
        """The slowly varying light: the picture blurred by `light_scale`.  So wide a blur is
        ten times cheaper on a copy a quarter the size, scaled back up (the light is smooth
        at that scale; half the gate's time went into it)."""
        h, w = small.shape[:2]
        k = 4 if self.settings.light_scale >= 8 and min(h, w) >= 32 else 1
        if k == 1:
            return cv2.GaussianBlur(small, (0, 0), self.settings.light_scale)
        quarter = cv2.resize(small, (w // k, h // k), interpolation=cv2.INTER_AREA)
        quarter = cv2.GaussianBlur(quarter, (0, 0), self.settings.light_scale / k)
        light = cv2.resize(quarter, (w, h), interpolation=cv2.INTER_LINEAR)
        return light if light.ndim == small.ndim else light[:, :, None]

    def changed_pixels(self, a: np.ndarray, b: np.ndarray) -> int:
        """How many small pixels changed between two shrunk frames (all of them if sizes differ)."""
        if a.shape != b.shape:
            return a.shape[0] * a.shape[1]
        return int(np.count_nonzero(self.changed_mask(a, b)))

    def changed_mask(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Where two shrunk frames of the same size differ (bool, one per small pixel)."""
        t = max(self.settings.absolute_threshold, self.settings.relative_threshold * float(a.std()))
        # Exposure gain, measured where the old picture has strong structure: most of that
        # structure is unchanged, so the median ratio is the gain even when a card was added.
        strong = np.abs(b) > 2 * t
        if np.count_nonzero(strong) >= 30:
            gain = float(np.median(a[strong] / b[strong]))
            if 0.5 < gain < 2.0:
                b = b * gain
        b_hi, b_lo = cv2.dilate(b, _KERNEL), cv2.erode(b, _KERNEL)
        a_hi, a_lo = cv2.dilate(a, _KERNEL), cv2.erode(a, _KERNEL)
        changed = (a > b_hi + t) | (a < b_lo - t) | (b > a_hi + t) | (b < a_lo - t)
        if changed.ndim == 2:
            return changed
        # any channel: or-ing the planes is ten times faster than numpy's any() over the last axis
        out = changed[..., 0].copy()
        for k in range(1, changed.shape[2]):
            out |= changed[..., k]
        return out

    def moving(self, a: np.ndarray | None, b: np.ndarray | None) -> bool:
        """Something moves between two consecutive shrunk frames.  Only changed pixels with a
        changed neighbour count: a hand, a card in flight or blur change patches of pixels,
        while sensor noise on a still table changes a few scattered ones, and just enough
        of them in one frame in three made a settled table look like motion for its
        whole still moment (it was never read)."""
        if a is None or b is None or a.shape != b.shape:
            return True
        mask = self.changed_mask(a, b).astype(np.uint8)
        neighbours = cv2.boxFilter(mask, -1, (3, 3), normalize=False) - mask
        return int(np.count_nonzero(mask & (neighbours > 0))) >= self.settings.min_changed_pixels

    def differs(self, a: np.ndarray | None, b: np.ndarray | None) -> bool:
        if a is None or b is None:
            return True
        return self.changed_pixels(a, b) >= self.settings.min_changed_pixels
