"""A frame that is decoded only as far as it is looked at.

Most frames of a game are only ever seen by the change gate, which wants a
~180 px picture.  A JPEG (an MJPEG stream's part, a Motion-JPEG video's
packet, a .jpg in a folder) can be decoded straight to 1/2, 1/4 or 1/8 of its
size by scaling its DCT, several times faster than a full decode followed by a
resize; the full picture is decoded only for the frames that are analysed.
"""
from __future__ import annotations

import cv2
import numpy as np

_REDUCED = ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4),
            (2, cv2.IMREAD_REDUCED_COLOR_2))


class EncodedFrame:
    """The bytes of one JPEG, decoded lazily: `small(h)` for the gate, `image` in full."""

    __slots__ = ("data", "_image", "_decoded")

    def __init__(self, data: bytes | np.ndarray):
        self.data = np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray)) \
            else np.ascontiguousarray(data, np.uint8).ravel()
        self._image: np.ndarray | None = None
        self._decoded = False

    @property
    def image(self) -> np.ndarray | None:
        """The full picture (None if the bytes are not a decodable image)."""
        if not self._decoded:
            self._decoded = True
            if self.data.size:
                self._image = cv2.imdecode(self.data, cv2.IMREAD_COLOR)
        return self._image

    def small(self, height: int) -> np.ndarray | None:
        """The picture at the strongest JPEG reduction that keeps about `height` rows."""
        if not self.data.size:
            return None
        rows = jpeg_rows(self.data)
        if rows is not None:   # the header says which reduction: one decode, not a trial each
            flag = next((f for k, f in _REDUCED if rows / k >= 0.75 * height), _REDUCED[-1][1])
            return cv2.imdecode(self.data, flag)
        for factor, flag in _REDUCED:
            small = cv2.imdecode(self.data, flag)
            if small is None:
                return None
            if small.shape[0] >= 0.75 * height or factor == 2:
                return small
        return None


def jpeg_rows(data: np.ndarray) -> int | None:
    """The height a JPEG's frame header gives (None when the bytes do not show one)."""
    raw = data.tobytes() if data.size < 4096 else data[:65536].tobytes()
    if raw[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 <= len(raw) and raw[i] == 0xFF:
        marker = raw[i + 1]
        if marker == 0xFF:          # fill byte
            i += 1
            continue
        length = int.from_bytes(raw[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):   # a start of frame
            return int.from_bytes(raw[i + 5:i + 7], "big") or None
        if marker == 0xDA:          # the scan starts before any frame header: not a JPEG we know
            return None
        i += 2 + length
    return None


def full_image(frame) -> np.ndarray | None:
    """The decoded picture of a frame given as an array or an `EncodedFrame`."""
    return frame.image if isinstance(frame, EncodedFrame) else frame
