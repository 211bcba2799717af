"""A minimal RTSP server on 127.0.0.1 serving JPEG frames, the way IP cameras do.

Enough of RTSP (RFC 2326) for FFmpeg's client, which OpenCV uses: OPTIONS,
DESCRIBE (an SDP with one JPEG video stream, static payload type 26), SETUP,
PLAY and TEARDOWN.  Media go as RTP over the RTSP connection itself ("TCP
interleaved", which OpenCV asks for); a SETUP asking for UDP is answered 461,
on which FFmpeg falls back to TCP.  Each frame is an RFC 2435 JPEG
payload: the scan data in fragments, with the quantisation tables in the first
one (the client rebuilds the JPEG headers from the standard Huffman tables).

Like a live camera, frames go on from where they were when a client
reconnects; `drop_after` closes the connection after that many frames.
"""
from __future__ import annotations

import socket
import struct
import threading

import cv2

PAYLOAD = 1400


def jpeg_scan(jpeg: bytes) -> tuple[int, int, int, bytes, bytes]:
    """(RFC 2435 type, width, height, quantisation tables, scan data) of a baseline JPEG."""
    tables, pos, kind, size = b"", 2, None, None
    while pos < len(jpeg):
        marker, length = jpeg[pos + 1], struct.unpack(">H", jpeg[pos + 2:pos + 4])[0]
        body = jpeg[pos + 4:pos + 2 + length]
        if marker == 0xDB:                       # DQT: one or more 8-bit tables
            for k in range(0, len(body), 65):
                tables += body[k + 1:k + 65]
        elif marker == 0xC0:                     # SOF0: size and the luma sampling
            height, width = struct.unpack(">HH", body[1:5])
            size = (width, height)
            kind = {0x21: 0, 0x22: 1}[body[7]]
        elif marker == 0xDD:
            raise ValueError("restart markers are not supported here")
        elif marker == 0xDA:                     # SOS: the scan runs to EOI
            return kind, size[0], size[1], tables, jpeg[pos + 2 + length:-2]
        pos += 2 + length
    raise ValueError("no scan in JPEG")


def rtp_packets(jpeg: bytes, seq: int, timestamp: int) -> list[bytes]:
    kind, width, height, tables, scan = jpeg_scan(jpeg)
    packets = []
    for offset in range(0, len(scan), PAYLOAD):
        last = offset + PAYLOAD >= len(scan)
        header = struct.pack(">BBHII", 0x80, (0x80 if last else 0) | 26, (seq + len(packets)) & 0xFFFF,
                             timestamp, 0x1155)
        # type-specific 0, fragment offset, type, Q = 255 (tables in band), size in 8 px blocks
        jpeg_header = bytes([0]) + offset.to_bytes(3, "big") + bytes([kind, 255, width // 8, height // 8])
        quant = struct.pack(">BBH", 0, 0, len(tables)) + tables if offset == 0 else b""
        packets.append(header + jpeg_header + quant + scan[offset:offset + PAYLOAD])
    return packets


class RtspServer:
    def __init__(self, frames, drop_after: int | None = None, fps: float = 30.0):
        self.jpegs = [cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
                      for f in frames]
        self.drop_after = drop_after
        self.fps = fps
        self.next = 0
        self.seq = 0
        self.connections = 0
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"rtsp://127.0.0.1:{self.sock.getsockname()[1]}/game"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        send = threading.Lock()
        try:
            while True:
                first = reader.read(1)
                if not first:
                    return
                if first == b"$":                   # the client's RTCP reports: read, ignore
                    _, length = struct.unpack(">BH", reader.read(3))
                    reader.read(length)
                    continue
                lines = [first + reader.readline()]
                while lines[-1] not in (b"\r\n", b"\n", b""):
                    lines.append(reader.readline())
                head = [line.decode("latin-1").strip() for line in lines if line.strip()]
                headers = {k.strip().lower(): v.strip() for k, _, v in
                           (line.partition(":") for line in head[1:])}
                if int(headers.get("content-length", 0)):
                    reader.read(int(headers["content-length"]))
                method, url = head[0].split()[:2]
                with self.lock:
                    self.requests.append(method)
                reply = self._answer(method, url, headers)
                with send:
                    conn.sendall(reply)
                if method == "PLAY":
                    threading.Thread(target=self._stream, args=(conn, send), daemon=True).start()
                elif method == "TEARDOWN":
                    return
        except (OSError, ValueError, struct.error):
            return
        finally:
            conn.close()

    def _answer(self, method: str, url: str, headers: dict) -> bytes:
        status, extra, body = "200 OK", [], b""
        if method == "OPTIONS":
            extra.append("Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER")
        elif method == "DESCRIBE":
            body = ("v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=Hisss game\r\nc=IN IP4 0.0.0.0\r\n"
                    "t=0 0\r\nm=video 0 RTP/AVP 26\r\na=control:track1\r\n").encode()
            extra += [f"Content-Base: {url.rstrip('/')}/", "Content-Type: application/sdp"]
        elif method == "SETUP":
            if "TCP" not in headers.get("transport", "").upper():
                status = "461 Unsupported Transport"
            else:
                extra += ["Transport: RTP/AVP/TCP;unicast;interleaved=0-1", "Session: 4242;timeout=60"]
        elif method == "PLAY":
            extra += ["Session: 4242", "Range: npt=0.000-"]
        elif method not in ("TEARDOWN", "GET_PARAMETER"):
            status = "405 Method Not Allowed"
        lines = [f"RTSP/1.0 {status}", f"CSeq: {headers.get('cseq', '0')}", *extra]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

    def _stream(self, conn: socket.socket, send: threading.Lock) -> None:
        sent = 0
        try:
            while not self._stop.is_set():
                with self.lock:
                    if self.next >= len(self.jpegs):
                        break
                    jpeg, k = self.jpegs[self.next], self.next
                    self.next += 1
                    packets = rtp_packets(jpeg, self.seq, round(k * 90000 / self.fps))
                    self.seq += len(packets)
                with send:
                    for packet in packets:
                        conn.sendall(b"$\x00" + struct.pack(">H", len(packet)) + packet)
                sent += 1
                if self.drop_after and sent >= self.drop_after:
                    break     # the connection drops; the camera goes on
        except OSError:
            pass
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
