"""Cheap change gating: is anything moving, and has the table changed since it was last read?

A full analysis costs tens of milliseconds; a frame shrunk to ~100 px high
costs well under one.  Two questions are asked of every frame in that small
form (the idea of Frigate's motion detector):

* *motion*: does it differ from the frame before?  A hand, its shadow, a card
  in flight, motion blur all do; the table is only read once motion has stopped.
* *change*: does the still picture differ from the one the current settled
  table was read from?  If not, there is nothing new to read.

Both use the same robust difference.  Each channel is normalised by its own
mean and spread, so auto-exposure and white-balance drift (a gain and an
offset) do not count as change; a pixel only counts as changed when no pixel
within one small-image pixel of it in the other picture is close, so camera
shake of a few full-size pixels does not count either.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class GateSettings:
    height: int = 100               # rows of the small image
    pixel_threshold: float = 0.45   # in units of the channel's spread (std)
    min_changed_pixels: int = 6     # fewer changed small pixels than this is noise


_KERNEL = np.ones((3, 3), np.uint8)


class ChangeGate:
    def __init__(self, settings: GateSettings = GateSettings()):
        self.settings = settings

    def shrink(self, image: np.ndarray) -> np.ndarray:
        """The frame as a small, exposure-normalised float32 picture."""
        h, w = image.shape[:2]
        k = max(1, h // self.settings.height)
        if k > 1:
            # An integer factor over a crop to its multiple takes OpenCV's fast area-averaging
            # path (a fractional factor costs four times as much at 1280x720).
            image = cv2.resize(image[:h - h % k, :w - w % k], (w // k, h // k),
                               interpolation=cv2.INTER_AREA)
        small = image.astype(np.float32)
        small = cv2.GaussianBlur(small, (3, 3), 0)
        if small.ndim == 2:
            small = small[:, :, None]
        mean, std = cv2.meanStdDev(small)
        return (small - mean.reshape(1, 1, -1).astype(np.float32)) / \
            np.maximum(std.reshape(1, 1, -1), 4.0).astype(np.float32)

    def changed_pixels(self, a: np.ndarray, b: np.ndarray) -> int:
        """How many small pixels changed between two shrunk frames (0 if they differ in size)."""
        if a.shape != b.shape:
            return a.shape[0] * a.shape[1]
        t = self.settings.pixel_threshold
        b_hi, b_lo = cv2.dilate(b, _KERNEL), cv2.erode(b, _KERNEL)
        a_hi, a_lo = cv2.dilate(a, _KERNEL), cv2.erode(a, _KERNEL)
        changed = (a > b_hi + t) | (a < b_lo - t) | (b > a_hi + t) | (b < a_lo - t)
        if changed.ndim == 3:
            changed = changed.any(axis=2)
        return int(np.count_nonzero(changed))

    def differs(self, a: np.ndarray | None, b: np.ndarray | None) -> bool:
        if a is None or b is None:
            return True
        return self.changed_pixels(a, b) >= self.settings.min_changed_pixels
