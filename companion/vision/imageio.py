"""Reading images from files safely: any depth or channel count in, BGR uint8 out.

The dimensions are read from the file header before anything is decoded, so a
gigantic image is decoded at a reduced scale (JPEG) or refused, instead of
exhausting memory; a truncated or corrupt file is refused instead of being
analysed with a grey band where its data stopped.
"""
from __future__ import annotations

import os
import struct
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".jpe", ".png", ".bmp", ".dib", ".webp", ".tif", ".tiff")

# 8K is ~33 MP; above this a decoded BGR copy alone would pass ~150 MB.
MAX_DECODED_PIXELS = 40_000_000
# Files whose header claims more than this are refused outright, whatever the format.
MAX_HEADER_PIXELS = 40_000_000 * 64
_STDERR_LOCK = threading.Lock()


class ImageLoadError(ValueError):
    """A file that is not a readable image; the message names the file."""


@dataclass(frozen=True)
class LoadedImage:
    path: str
    pixels: np.ndarray  # BGR uint8, possibly downscaled
    width: int          # the file's own dimensions (what coordinates refer to)
    height: int

    @property
    def scale(self) -> float:
        """Factor from `pixels` coordinates to the file's own coordinates."""
        return self.width / self.pixels.shape[1]


def image_paths(paths: list[str]) -> list[str]:
    """Expand folders (their image files sorted by name); keep files in the order given."""
    out: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(str(f) for f in sorted(p.iterdir(), key=lambda f: f.name)
                       if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES
                       and not f.name.startswith("."))
        else:
            out.append(raw)
    return out


def header_size(data: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) from the header of a PNG, JPEG, BMP, WebP, TIFF or GIF file."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            w, h = struct.unpack(">II", data[16:24])
            return "png", w, h
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
        if data[:2] == b"BM":
            w, h = struct.unpack("<ii", data[18:26])
            return "bmp", abs(w), abs(h)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data[:4] in (b"II*\x00", b"MM\x00*"):
            return _tiff_size(data)
        if data[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", data[6:10])
            return "gif", w, h
    except struct.error:
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[str, int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return "jpeg", w, h
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[str, int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return "webp", w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        b = data[21:25]
        w = 1 + (((b[1] & 0x3F) << 8) | b[0])
        h = 1 + (((b[3] & 0x0F) << 10) | (b[2] << 2) | ((b[1] & 0xC0) >> 6))
        return "webp", w, h
    if chunk == b"VP8X":
        w = 1 + int.from_bytes(data[24:27], "little")
        h = 1 + int.from_bytes(data[27:30], "little")
        return "webp", w, h
    return None


def _tiff_size(data: bytes) -> tuple[str, int, int] | None:
    end = "<" if data[:2] == b"II" else ">"
    offset = struct.unpack(end + "I", data[4:8])[0]
    count = struct.unpack(end + "H", data[offset:offset + 2])[0]
    size: dict[int, int] = {}
    for k in range(count):
        e = offset + 2 + 12 * k
        tag, typ = struct.unpack(end + "HH", data[e:e + 4])
        if tag in (256, 257):
            fmt = end + ("H" if typ == 3 else "I")
            size[tag] = struct.unpack(fmt, data[e + 8:e + 8 + struct.calcsize(fmt)])[0]
    if 256 in size and 257 in size:
        return "tiff", size[256], size[257]
    return None


def _looks_truncated(kind: str, data: bytes) -> bool:
    tail = data[-64:].rstrip(b"\x00")
    if kind == "jpeg":
        return b"\xff\xd9" not in tail[-16:]
    if kind == "png":
        return b"IEND" not in tail
    return False


def decode_image(data: bytes, name: str, max_pixels: int = MAX_DECODED_PIXELS) -> LoadedImage:
    """Decode image bytes into BGR uint8; raise ImageLoadError naming `name` if impossible."""
    if not data:
        raise ImageLoadError(f"{name}: empty file")
    head = header_size(data)
    if head is None:
        raise ImageLoadError(f"{name}: not an image (JPEG, PNG, BMP, WebP or TIFF expected)")
    kind, width, height = head
    if width <= 0 or height <= 0:
        raise ImageLoadError(f"{name}: image header gives no size ({width}x{height})")
    if _looks_truncated(kind, data):
        raise ImageLoadError(f"{name}: truncated {kind.upper()} file (its data stops early)")
    pixels = width * height
    flags = cv2.IMREAD_COLOR  # any depth/channels -> 8-bit BGR, EXIF orientation applied
    if pixels > MAX_HEADER_PIXELS:
        raise ImageLoadError(f"{name}: image is {width}x{height} pixels, too large to analyse")
    if pixels > max_pixels:
        if kind != "jpeg":
            raise ImageLoadError(
                f"{name}: image is {width}x{height} pixels; at most {max_pixels // 1_000_000} "
                f"megapixels can be analysed (JPEG can be larger: it is decoded reduced)")
        for factor, reduced in ((2, cv2.IMREAD_REDUCED_COLOR_2), (4, cv2.IMREAD_REDUCED_COLOR_4),
                                (8, cv2.IMREAD_REDUCED_COLOR_8)):
            if pixels / factor ** 2 <= max_pixels:
                flags = reduced
                break
        else:
            raise ImageLoadError(f"{name}: image is {width}x{height} pixels, too large to analyse")
    if kind == "jpeg":
        # libjpeg fills what it cannot decode with grey and only says so on stderr; even its
        # "extraneous bytes" warning comes from scrambled data as often as from harmless padding
        image, complaints = _decode_hearing_libjpeg(data, flags)
        if complaints:
            raise ImageLoadError(f"{name}: corrupt JPEG file ({complaints[0].decode(errors='replace')})")
    else:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    if image is None or image.size == 0:
        raise ImageLoadError(f"{name}: cannot decode this {kind.upper()} file (damaged?)")
    if image.dtype != np.uint8:  # defensive: some builds keep depth for TIFF
        image = cv2.convertScaleAbs(image, alpha=255.0 / max(1.0, float(image.max())))
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    h, w = image.shape[:2]
    # EXIF rotation swaps the axes the header spoke of; report what was decoded.
    if (w > h) != (width > height) and width != height:
        width, height = height, width
    return LoadedImage(name, np.ascontiguousarray(image), width, height)


def _decode_hearing_libjpeg(data: bytes, flags: int) -> tuple[np.ndarray | None, list[bytes]]:
    """Decode, catching what libjpeg writes to the process's stderr: its only way to say data was lost."""
    with _STDERR_LOCK, tempfile.TemporaryFile() as heard:
        saved = os.dup(2)
        os.dup2(heard.fileno(), 2)
        try:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        heard.seek(0)
        lines = heard.read().splitlines()
    ours = [line for line in lines if line.lower().startswith((b"corrupt jpeg", b"premature end of jpeg"))]
    others = [line for line in lines if line not in ours]
    if others:     # another thread's words, written while we listened: pass them on
        os.write(2, b"\n".join(others) + b"\n")
    return image, ours


def load_image(path: str, max_pixels: int = MAX_DECODED_PIXELS) -> LoadedImage:
    """Read an image file; every failure is an ImageLoadError whose message names the file."""
    p = Path(path)
    if p.is_dir():
        raise ImageLoadError(f"{path}: is a folder with no images")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ImageLoadError(f"{path}: no such file") from None
    except OSError as exc:
        raise ImageLoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return decode_image(data, path, max_pixels)
