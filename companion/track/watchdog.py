"""Keep a live source going: reopen it with back-off when it drops out.

A phone on Wi-Fi or a USB camera that is bumped loses its stream for a few
seconds; the game on the table goes on meanwhile.  `watch` turns any source
into one uninterrupted sequence of numbered frames: frame indices keep counting
across reconnections, so the tracker sees one game and loses nothing (a move
made while the camera was away is seen as soon as it is back, because the
tracker compares settled tables, not consecutive frames).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from .sources import FrameSource, SourceError


@dataclass(frozen=True)
class SourceStatus:
    online: bool
    message: str


def watch(source: FrameSource, first_index: int = 0, *, max_offline: float = 30.0,
          backoff: tuple[float, float] = (0.25, 4.0),
          on_status: Callable[[SourceStatus], None] | None = None,
          sleep: Callable[[float], None] = time.sleep,
          clock: Callable[[], float] = time.monotonic) -> Iterator[tuple[int, np.ndarray | None]]:
    """Yield (frame index, image or None for an undecodable frame) until a recording ends.

    A recording that cannot be opened raises `SourceError` at once; a live
    source is retried until it has been away for `max_offline` seconds.
    """
    report = on_status or (lambda status: None)
    index = first_index
    offline_since: float | None = None     # the source is away until a frame arrives again
    delay = backoff[0]
    is_open = False

    def wait_or_give_up(why) -> None:
        nonlocal delay
        if clock() - offline_since > max_offline:
            raise SourceError(f"{source.name}: offline for more than {max_offline:g} s ({why})")
        sleep(delay)
        delay = min(delay * 2, backoff[1])

    try:
        while True:
            if not is_open:
                try:
                    source.open()
                    is_open = True
                except (SourceError, OSError, ValueError) as exc:
                    if not source.live:
                        raise SourceError(str(exc)) from None
                    if offline_since is None:
                        offline_since = clock()
                        report(SourceStatus(False, f"{source.name}: {exc}; retrying"))
                    wait_or_give_up(exc)
                    continue
            read = source.read()
            if not read.ok:
                source.close()
                is_open = False
                if not source.live:
                    return
                if offline_since is None:
                    offline_since = clock()
                    report(SourceStatus(False, f"{source.name}: stream lost; reconnecting"))
                else:
                    # it opened but gave nothing (a server that accepts and sends no
                    # frames): still away, and retried no faster than a refused one
                    wait_or_give_up("connects but sends no frames")
                continue
            if offline_since is not None:
                # back only once a frame arrives, not when a connection merely opens
                report(SourceStatus(True, f"{source.name}: back after "
                                          f"{clock() - offline_since:.1f} s"))
                offline_since = None
                delay = backoff[0]
            yield index, read.image
            index += 1
    finally:
        source.close()
