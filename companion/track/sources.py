"""Where frames come from: a video file, a folder of stills, a camera, a stream.

Every source has the same small interface (`open`, `read`, `close`) and says
whether it is *live*.  A recording ends when it runs out of frames; a live
source (camera index, HTTP MJPEG, RTSP) never ends on its own: when it fails it
is reopened by `companion.track.watchdog.watch`, and the game goes on.

`read()` answers a `FrameRead`: `ok=False` means the source has nothing more
to give (end of a recording, or a live connection that broke); `ok=True` with
`image=None` is one frame that arrived but could not be decoded, which the
tracker counts and skips.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from .frames import EncodedFrame
from .mjpeg import MjpegStream

# OpenCV's own warnings ("can't be used to capture by name") would come on stderr beside the
# one line this module's SourceError gives for the same fault
cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".jpe", ".png", ".bmp", ".dib", ".webp", ".tif", ".tiff")
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mjpg", ".mjpeg", ".wmv", ".mpg", ".mpeg")


class SourceError(ValueError):
    """A source that cannot be opened at all; the message names it."""


@dataclass(frozen=True)
class FrameRead:
    ok: bool
    image: np.ndarray | None = None


END = FrameRead(False)


class FrameSource(Protocol):
    name: str
    live: bool

    def open(self) -> None: ...
    def read(self) -> FrameRead: ...
    def close(self) -> None: ...


def _bgr(image: np.ndarray | None) -> np.ndarray | None:
    """Any decoded frame as 8-bit BGR; None when it is not a usable picture."""
    if image is None or image.size == 0 or image.ndim not in (2, 3):
        return None
    if image.dtype != np.uint8:
        image = cv2.convertScaleAbs(image, alpha=255.0 / max(1, np.iinfo(image.dtype).max)
                                    if image.dtype.kind in "ui" else 255.0)
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.shape[2] == 1:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    return image


class FolderSource:
    """Still images in a folder, sorted by name; a file that will not decode is one unreadable frame."""

    live = False

    def __init__(self, folder: str | Path, start: int = 0):
        self.folder = Path(folder)
        self.name = str(folder)
        self._paths: list[Path] = []
        self._next = start

    def open(self) -> None:
        try:
            entries = sorted(p for p in self.folder.iterdir()
                             if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        except OSError as exc:
            raise SourceError(f"{self.folder}: cannot list folder ({exc.strerror})") from None
        if not entries:
            raise SourceError(f"{self.folder}: no image files in folder")
        self._paths = entries

    def read(self) -> FrameRead:
        if self._next >= len(self._paths):
            return END
        path = self._paths[self._next]
        self._next += 1
        try:
            data = np.fromfile(str(path), dtype=np.uint8)
        except OSError:
            return FrameRead(True, None)
        if path.suffix.lower() in (".jpg", ".jpeg", ".jpe"):
            return FrameRead(True, EncodedFrame(data))
        image = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if data.size else None
        return FrameRead(True, _bgr(image))

    def close(self) -> None:
        pass


class CaptureSource:
    """Anything OpenCV's VideoCapture opens: a video file, a camera index, an RTSP URL."""

    def __init__(self, target: str | int, live: bool, start: int = 0, name: str | None = None):
        self.target = target
        self.live = live
        self.name = name or str(target)
        self._start = start
        self._cap: cv2.VideoCapture | None = None
        self._position = 0
        self._count = 0
        self._failures = 0
        self._raw = False

    def open(self) -> None:
        self.close()
        if isinstance(self.target, int):
            cap = cv2.VideoCapture(self.target)
        else:
            # Bounded waits: a stream that stalls must fail so the watchdog can reopen it.
            params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, 5000, cv2.CAP_PROP_READ_TIMEOUT_MSEC, 5000]
            if not self.live:
                # One decoding thread: the tracker's speed is measured on one core.
                params += [cv2.CAP_PROP_N_THREADS, 1]
            cap = cv2.VideoCapture(self.target, cv2.CAP_FFMPEG, params)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.name}: cannot open")
        self._cap = cap
        self._count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0) if not self.live else 0
        fourcc = int(cap.get(cv2.CAP_PROP_FOURCC) or 0).to_bytes(4, "little")
        # Motion-JPEG: hand out each frame's JPEG undecoded (see frames.EncodedFrame).
        self._raw = not self.live and fourcc.upper() in (b"MJPG", b"AVRN", b"LJPG", b"JPEG") \
            and cap.set(cv2.CAP_PROP_FORMAT, -1)
        self._position = 0
        if not self.live:
            # Skipping by decoding is exact where seeking by timestamp is not.
            while self._position < self._start and cap.grab():
                self._position += 1

    def read(self) -> FrameRead:
        if self._cap is None:
            return END
        ok, image = self._cap.read()
        if ok:
            self._position += 1
            self._failures = 0
            if self._raw:
                return FrameRead(True, EncodedFrame(image))
            return FrameRead(True, _bgr(image))
        if not self.live and self._position < self._count - 1 and self._failures < 10:
            # A damaged frame inside a recording: skip it, the rest may still decode.
            self._failures += 1
            self._position += 1
            return FrameRead(True, None)
        return END

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class HttpMjpegSource:
    """An HTTP MJPEG stream (phone IP-webcam apps) or a snapshot URL polled for stills."""

    live = True

    def __init__(self, url: str, timeout: float = 5.0):
        self.url = url
        self.name = url
        self.timeout = timeout
        self._stream: MjpegStream | None = None

    def open(self) -> None:
        self.close()
        self._stream = MjpegStream(self.url, timeout=self.timeout)
        self._stream.connect()

    def read(self) -> FrameRead:
        if self._stream is None:
            return END
        try:
            jpeg = self._stream.next_frame()
        except (OSError, ValueError):
            return END
        if jpeg is None:
            return END
        return FrameRead(True, EncodedFrame(jpeg))

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def open_source(spec: str, start: int = 0) -> FrameSource:
    """The source a SOURCE argument names, not yet opened.

    `start` is the first frame index wanted (for `--resume` on a recording);
    live sources cannot rewind and ignore it.
    """
    spec = spec.strip()
    if not spec:
        raise SourceError("empty source")
    if spec.isdigit():
        return CaptureSource(int(spec), live=True, name=f"camera {spec}")
    if _URL.match(spec):
        scheme = spec.split(":", 1)[0].lower()
        _check_url(spec)
        if scheme in ("http", "https"):
            return HttpMjpegSource(spec)
        if scheme in ("rtsp", "rtsps", "rtmp", "udp", "tcp", "srt"):
            return CaptureSource(spec, live=True)
        raise SourceError(f"{spec}: unsupported stream scheme {scheme!r} (http, https, rtsp)")
    path = Path(spec)
    if path.is_dir():
        return FolderSource(path, start=start)
    if path.is_file():
        return CaptureSource(str(path), live=False, start=start)
    if path.suffix.lower() in VIDEO_SUFFIXES + IMAGE_SUFFIXES or "/" in spec:
        raise SourceError(f"{spec}: no such file or folder")
    raise SourceError(f"{spec}: not a video file, folder, camera index or stream URL")


def _check_url(spec: str) -> None:
    """A URL no retry can reach (no host, a port out of range, a broken IPv6 address) is
    refused at once, not waited for as a camera that is away."""
    from urllib.parse import urlsplit
    try:
        parts = urlsplit(spec)
        host, _ = parts.hostname, parts.port
    except ValueError as exc:
        raise SourceError(f"{spec}: not a stream URL ({exc})") from None
    if not host:
        raise SourceError(f"{spec}: the URL names no host")


LIVE_FPS_GUESS = 30.0     # webcams and phone apps send 10-30 fps; erring high only waits longer
FOLDER_FPS = 10.0         # a folder of stills has no rate; the renderer films at 10 fps


def guess_fps(source: FrameSource) -> float:
    """Frames per second a source delivers, to turn the tracker's waits into frame counts."""
    if isinstance(source, CaptureSource) and not source.live:
        cap = cv2.VideoCapture(str(source.target))
        try:
            fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        finally:
            cap.release()
        return fps if 1.0 <= fps <= 240.0 else FOLDER_FPS
    return LIVE_FPS_GUESS if source.live else FOLDER_FPS
