"""JPEG frames decoded only as far as the gate looks: one reduced decode, at the right size."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

import companion.track.frames as frames
from companion.track.frames import EncodedFrame, jpeg_rows


def _jpeg(h: int, w: int) -> bytes:
    image = np.random.default_rng(0).integers(0, 255, (h, w, 3), dtype=np.uint8)
    ok, data = cv2.imencode(".jpg", image)
    assert ok
    return data.tobytes()


@pytest.mark.parametrize("h, w", [(720, 1280), (100, 50), (1080, 1920)])
def test_the_frame_header_gives_the_height(h, w):
    assert jpeg_rows(np.frombuffer(_jpeg(h, w), np.uint8)) == h


def test_bytes_that_are_no_jpeg_have_no_height():
    assert jpeg_rows(np.frombuffer(b"\x89PNG\r\n\x1a\n" + bytes(40), np.uint8)) is None
    assert jpeg_rows(np.frombuffer(b"\xff\xd8\xff", np.uint8)) is None


def test_the_gate_copy_of_a_720p_jpeg_takes_one_decode(monkeypatch):
    calls = []
    real = cv2.imdecode

    def counting(data, flag):
        calls.append(flag)
        return real(data, flag)
    monkeypatch.setattr(frames.cv2, "imdecode", counting)
    small = EncodedFrame(_jpeg(720, 1280)).small(180)
    # a quarter is the strongest reduction keeping about 180 rows; an eighth (90) is too few
    assert small.shape[:2] == (180, 320) and calls == [cv2.IMREAD_REDUCED_COLOR_4]



def test_a_jpeg_cut_short_is_no_frame():
    data = _jpeg(120, 160)
    frame = EncodedFrame(data[:int(len(data) * 0.6)])   # a stream part that lost its end
    assert frame.small(30) is None and frame.image is None
