"""A dim picture brightened as a camera's exposure would, before anything is read in it.

A camera in a dim room, or one whose automatic exposure lags behind a lamp
switched off, films the cards' paper grey and their ink dull and dark: the
finder's maps separate them less from the table, and the recogniser, which
learnt from pictures exposed for the paper, doubts them.  Brightening the
whole picture by one factor keeps every colour's hue and every ratio between
colours; it lifts the picture's brightest part (the paper, nearly always) to
where a well-exposed picture has it.  A picture lacking less than half as
much light again is left as it is: the models learnt from pictures that dim,
and lifting them all found as many false cards as real ones.
"""
from __future__ import annotations

import cv2
import numpy as np

BRIGHTEST = 0.995    # share of the picture's pixels below its brightest part
WELL_EXPOSED = 230   # 8-bit grey of the brightest part in a well-exposed picture
MAX_GAIN = 2.5       # more would only lift the sensor's noise
LEAST_GAIN = 1.5     # a picture lacking less than this is within what the models learnt from


def well_exposed(image: np.ndarray) -> np.ndarray:
    """The BGR picture brightened so that its brightest part is `WELL_EXPOSED` (at most
    `MAX_GAIN` times); the picture itself when that takes less than `LEAST_GAIN`."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    counts = cv2.calcHist([gray], [0], None, [256], [0, 256]).ravel()
    brightest = int(np.searchsorted(np.cumsum(counts), BRIGHTEST * counts.sum()))
    gain = min(MAX_GAIN, WELL_EXPOSED / max(1, brightest))
    return image if gain < LEAST_GAIN else cv2.convertScaleAbs(image, alpha=gain)
