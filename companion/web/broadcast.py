"""Fan-out to many viewers: server-sent events and the latest video picture.

Each event is serialised once and handed to every subscriber's queue, so 20
viewers cost 20 queue puts, not 20 replays of the game.  A viewer too slow to
keep up loses its oldest messages rather than growing memory without bound;
the next message carries the whole state anyway.
"""
from __future__ import annotations

import queue
import threading
import time


class Broadcaster:
    def __init__(self, backlog: int = 64):
        self._subscribers: set[queue.Queue] = set()
        self._lock = threading.Lock()
        self._backlog = backlog

    def subscribe(self) -> queue.Queue:
        q: queue.Queue = queue.Queue(self._backlog)
        with self._lock:
            self._subscribers.add(q)
        return q

    def unsubscribe(self, q: queue.Queue) -> None:
        with self._lock:
            self._subscribers.discard(q)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def publish(self, message: str) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for q in subscribers:
            while True:
                try:
                    q.put_nowait(message)
                    break
                except queue.Full:
                    try:
                        q.get_nowait()
                    except queue.Empty:
                        pass


class PictureBuffer:
    """The latest JPEG and a version number; readers wait for the next version."""

    def __init__(self, jpeg: bytes = b""):
        self._jpeg = jpeg
        self._version = 0
        self._changed = threading.Condition()

    def put(self, jpeg: bytes) -> None:
        with self._changed:
            self._jpeg = jpeg
            self._version += 1
            self._changed.notify_all()

    def latest(self) -> tuple[int, bytes]:
        with self._changed:
            return self._version, self._jpeg

    def wait_newer(self, version: int, timeout: float) -> tuple[int, bytes]:
        """The picture after `version`, or the same one again once `timeout` passes."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._version == version:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return self._version, self._jpeg
