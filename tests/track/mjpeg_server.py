"""A small HTTP MJPEG server on 127.0.0.1, serving frames the way phone IP-webcam apps do.

It behaves like a live camera: frames go on from where they were when a
client reconnects.  `drop_after` closes the connection after that many frames
(a Wi-Fi drop-out) and `refuse` answers the next that many connection attempts
with 503 (the phone app restarting).
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2


class MjpegServer:
    def __init__(self, frames, drop_after: int | None = None, refuse: int = 0,
                 content_length: bool = True, boundary: str = "frame"):
        self.jpegs = [cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
                      for f in frames]
        self.next = 0
        self.drop_after = drop_after
        self.refuse = refuse
        self.content_length = content_length
        self.boundary = boundary
        self.connections = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                with server.lock:
                    server.connections += 1
                    if server.refuse > 0 and server.connections > 1:
                        server.refuse -= 1
                        self.send_error(503, "camera restarting")
                        return
                if self.path == "/shot.jpg":
                    with server.lock:
                        data = server.jpegs[min(server.next, len(server.jpegs) - 1)]
                        server.next += 1
                    self.send_response(200)
                    self.send_header("Content-Type", "image/jpeg")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type",
                                 f"multipart/x-mixed-replace; boundary={server.boundary}")
                self.end_headers()
                sent = 0
                try:
                    while True:
                        with server.lock:
                            if server.next >= len(server.jpegs):
                                break
                            data = server.jpegs[server.next]
                            server.next += 1
                        head = f"--{server.boundary}\r\nContent-Type: image/jpeg\r\n"
                        if server.content_length:
                            head += f"Content-Length: {len(data)}\r\n"
                        self.wfile.write(head.encode() + b"\r\n" + data + b"\r\n")
                        sent += 1
                        if server.drop_after and sent >= server.drop_after:
                            break   # the connection drops; the camera goes on
                    else:
                        pass
                    if server.next >= len(server.jpegs):
                        self.wfile.write(f"--{server.boundary}--\r\n".encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/video"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
