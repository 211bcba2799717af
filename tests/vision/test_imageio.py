"""Reading images: every depth and channel count works; bad files fail by name, never by traceback."""
import struct
import zlib

import cv2
import numpy as np
import pytest

from companion.vision.imageio import ImageLoadError, decode_image, header_size, image_paths, load_image


def _encode(ext, image, params=()):
    ok, buf = cv2.imencode(ext, image, list(params))
    assert ok
    return buf.tobytes()


@pytest.fixture
def picture():
    rng = np.random.default_rng(0)
    img = np.zeros((60, 80, 3), np.uint8)
    img[:] = (30, 120, 200)
    img[20:40, 30:60] = rng.integers(0, 255, (20, 30, 3))
    return img


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp", ".webp", ".tiff"])
def test_header_size_reads_every_format(picture, ext):
    kind, w, h = header_size(_encode(ext, picture))
    assert (w, h) == (80, 60)


def test_grayscale_alpha_and_16_bit_become_bgr_uint8(picture):
    gray = cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY)
    rgba = cv2.cvtColor(picture, cv2.COLOR_BGR2BGRA)
    deep = picture.astype(np.uint16) * 257
    for data in (_encode(".png", gray), _encode(".png", rgba), _encode(".png", deep), _encode(".tiff", deep)):
        out = decode_image(data, "x.png")
        assert out.pixels.shape == (60, 80, 3) and out.pixels.dtype == np.uint8
        assert (out.width, out.height) == (80, 60)
    sixteen = decode_image(_encode(".png", deep), "deep.png").pixels
    assert np.abs(sixteen.astype(int) - picture.astype(int)).max() <= 1


def test_bad_files_name_themselves(tmp_path, picture):
    jpeg = _encode(".jpg", picture)
    png = _encode(".png", picture)
    cases = {
        "empty.jpg": b"",
        "text.jpg": b"hello, not a picture\n",
        "cut.jpg": jpeg[: len(jpeg) // 2],
        "cut.png": png[: len(png) - 20],
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ImageLoadError) as err:
            load_image(str(tmp_path / name))
        assert name in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ImageLoadError, match="no such file"):
        load_image(str(tmp_path / "missing.png"))


def _png_header(width, height):
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk + b"\x00" * 64 + b"IEND\xaeB`\x82"


def test_gigantic_image_is_refused_before_decoding():
    # a header claiming 100k x 100k pixels (30 GB decoded): refused from the header alone
    with pytest.raises(ImageLoadError, match="too large"):
        decode_image(_png_header(100_000, 100_000), "huge.png")


def test_large_jpeg_is_decoded_reduced_with_its_true_size(picture):
    big = cv2.resize(picture, (800, 600), interpolation=cv2.INTER_NEAREST)
    out = decode_image(_encode(".jpg", big), "big.jpg", max_pixels=100_000)
    assert out.pixels.shape[0] * out.pixels.shape[1] <= 100_000
    assert (out.width, out.height) == (800, 600) and out.scale > 1


def test_folders_expand_sorted_by_name(tmp_path, picture):
    for name in ("b.png", "a.jpg", "c.txt", ".hidden.png"):
        (tmp_path / name).write_bytes(b"x")
    assert [p.split("/")[-1] for p in image_paths([str(tmp_path)])] == ["a.jpg", "b.png"]


def _noisy_jpeg() -> bytes:
    noise = np.random.default_rng(1).integers(0, 255, (120, 160, 3)).astype(np.uint8)
    return _encode(".jpg", noise)


@pytest.mark.parametrize("scramble", [b"\xff\xd0" * 150, b"\x55" * 300, b"\x00" * 300])
def test_a_jpeg_whose_data_is_corrupt_is_refused_in_one_line_not_read_half_grey(capfd, scramble):
    data = bytearray(_noisy_jpeg())
    start = data.find(b"\xff\xda") + 40             # inside the compressed picture, past the scan header
    data[start:start + len(scramble)] = scramble
    with pytest.raises(ImageLoadError, match=r"^x\.jpg: corrupt JPEG file \(Corrupt JPEG data: "):
        decode_image(bytes(data), "x.jpg")
    assert capfd.readouterr().err == ""               # libjpeg's own complaint is not left on the terminal
    assert decode_image(_noisy_jpeg(), "x.jpg").pixels.shape == (120, 160, 3)
