"""A small client for HTTP MJPEG, the format phone "IP webcam" apps serve.

An MJPEG stream is one endless HTTP response of type
``multipart/x-mixed-replace; boundary=...``: parts separated by the boundary,
each with its own headers (usually a Content-Length) and one JPEG.  Some apps
omit Content-Length or send the boundary with or without its leading ``--``;
both are handled.  A URL that answers a single ``image/jpeg`` is treated as a
snapshot endpoint and polled.  OpenCV's FFmpeg reader can open MJPEG too, but
gives no control over timeouts or reconnection, which a watchdog needs.
"""
from __future__ import annotations

import http.client
import urllib.parse
from typing import Optional

MAX_PART_BYTES = 32 * 1024 * 1024  # a 4K JPEG is a few MB; refuse anything absurd


class MjpegStream:
    def __init__(self, url: str, timeout: float = 5.0):
        self.url = url
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None
        self._response: http.client.HTTPResponse | None = None
        self._boundary: bytes | None = None
        self._snapshot = False
        self._pending: bytes | None = None

    def connect(self) -> None:
        self.close()
        self._response = self._request()
        ctype = self._response.getheader("Content-Type", "")
        main = ctype.split(";", 1)[0].strip().lower()
        if main.startswith("multipart/"):
            boundary = _param(ctype, "boundary")
            if not boundary:
                self.close()
                raise ValueError(f"{self.url}: multipart stream without a boundary")
            self._boundary = boundary.encode("latin-1").lstrip(b"-")
        elif main.startswith("image/"):
            self._snapshot = True
        else:
            self.close()
            raise ValueError(f"{self.url}: not an MJPEG stream or image (Content-Type {ctype!r})")

    def _request(self) -> http.client.HTTPResponse:
        parts = urllib.parse.urlsplit(self.url)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "localhost", parts.port, timeout=self.timeout)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        headers = {"User-Agent": "companion-track", "Accept": "multipart/x-mixed-replace, image/jpeg"}
        if parts.username:
            import base64
            token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        if response.status != 200:
            conn.close()
            raise OSError(f"{self.url}: HTTP {response.status} {response.reason}")
        self._conn = conn
        return response

    def next_frame(self) -> Optional[bytes]:
        """The next JPEG's bytes; None when the server ended the stream."""
        if self._response is None:
            return None
        if self._snapshot:
            data = self._response.read(MAX_PART_BYTES + 1)
            self.close()
            self._response = self._request()  # the next poll
            return data if 0 < len(data) <= MAX_PART_BYTES else None
        return self._next_part()

    def _readline(self, limit: int) -> bytes:
        if self._pending is not None:
            line, self._pending = self._pending, None
            return line
        assert self._response is not None
        return self._response.readline(limit)

    def _next_part(self) -> Optional[bytes]:
        assert self._response is not None and self._boundary is not None
        # Find the boundary line (skipping the blank line after the previous part).
        while True:
            line = self._readline(4096)
            if not line:
                return None
            mark = line.strip().lstrip(b"-")
            if mark == self._boundary:
                break
            if mark == self._boundary + b"--":  # the closing boundary
                return None
        length = None
        while True:
            line = self._readline(4096)
            if not line:
                return None
            if not line.strip():
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is not None:
            if not 0 < length <= MAX_PART_BYTES:
                raise ValueError(f"{self.url}: part of {length} bytes")
            data = self._response.read(length)
            return data if len(data) == length else None
        return self._read_until_boundary()

    def _read_until_boundary(self) -> Optional[bytes]:
        """A part without Content-Length: its JPEG runs up to the next boundary line."""
        assert self._boundary is not None
        marker = b"--" + self._boundary
        chunks = bytearray()
        while len(chunks) <= MAX_PART_BYTES:
            line = self._readline(65536)
            if not line or line.startswith(marker):
                self._pending = line or None  # the boundary opens the next part
                return bytes(chunks).rstrip(b"\r\n") or None
            chunks += line
        raise ValueError(f"{self.url}: part larger than {MAX_PART_BYTES} bytes")

    def close(self) -> None:
        self._pending = None
        if self._response is not None:
            try:
                self._response.close()
            except OSError:
                pass
            self._response = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _param(header: str, name: str) -> str | None:
    for piece in header.split(";")[1:]:
        key, _, value = piece.partition("=")
        if key.strip().lower() == name:
            return value.strip().strip('"')
    return None
