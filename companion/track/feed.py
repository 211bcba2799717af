"""The tracker as the dashboard's table feed (`companion.web.feed.TableFeed`).

The dashboard keeps its own history and referee; what it needs from the
camera is each settled table, the desync flag, an annotated picture now and
then for its MJPEG view, and the tracker's corrections: a card read wrongly
when it was laid and outvoted by later readings, which the dashboard stores
as a card correction of the table the card was first settled in; and a judged
table the tracker re-judged (a snake completed with an end the reader missed,
then collected whole), which the dashboard stores as a retable of that table;
and cards whose going was confirmed only later, cut out of the tables judged
while they were believed still there (retables of those tables), the first of
which may have a table put in before it (the table when they were first missed).
"""
from __future__ import annotations

import threading
import time
from typing import Iterator

import cv2

from .frames import full_image
from .reading import AnalyzeFn
from .sources import guess_fps, open_source
from .tables import canonical_chain
from .tracker import Tracker, TrackerSettings
from .watchdog import watch


class TrackerFeed:
    def __init__(self, source: str, players: list[str] | None = None, profile: str | None = None,
                 analyze: AnalyzeFn | None = None, picture_fps: float = 8.0,
                 max_offline: float = 3600.0, realtime: bool = True,
                 settings: dict | None = None):
        from .background import TableReader
        from .run import DEFAULT_PLAYERS, make_analyzer
        self.source = source
        self.players = list(players or DEFAULT_PLAYERS)
        self._analyze = analyze or TableReader(make_analyzer(profile))
        self.picture_interval = 1.0 / picture_fps if picture_fps > 0 else float("inf")
        self.max_offline = max_offline
        self.realtime = realtime      # a recording plays at its own pace, like a camera would
        # `TrackerSettings` fields set here; the others follow the source's frame rate
        self.settings = dict(settings or {})
        self.tracker: Tracker | None = None
        self._stop = threading.Event()

    def events(self, start_after: int = -1) -> Iterator:
        from companion.web.feed import FeedEvent
        first = max(0, start_after + 1)
        src = open_source(self.source, start=first)
        fps = guess_fps(src)
        self.tracker = tracker = Tracker(self._analyze, self.players,
                                         settings=TrackerSettings.for_fps(fps, **self.settings))
        last_picture = 0.0
        began = time.monotonic()
        sent = SentTables()

        def told(index: int, events: list) -> Iterator:
            # the tables of one call are the last ones of its history, in order (a table the
            # tracker inserts further back in it comes with a correction, see `_removal`)
            tables = sum(event.kind == "table" for event in events)
            entries = iter(tracker.history[len(tracker.history) - tables:])
            for event in events:
                if event.kind == "table":
                    # a copy: a later correction renames cards in the tracker's own tables
                    table = [list(chain) for chain in event.data["table"]]
                    yield FeedEvent(index, table=table, desync=False,
                                    table_number=sent.add(index, next(entries)))
                elif event.kind in ("desync", "resync"):
                    yield FeedEvent(index, table=None, desync=event.kind == "desync")
                elif event.kind == "correction":
                    for correction in _corrections(tracker, event.data, sent, index):
                        yield FeedEvent(index, correction=correction, desync=tracker.desync)

        for index, image in watch(src, first, max_offline=self.max_offline, on_status=tracker.on_source_status):
            if self._stop.is_set():
                return
            if self.realtime and not src.live:
                self._stop.wait(max(0.0, began + (index - first) / fps - time.monotonic()))
            yield from told(index, tracker.feed(index, image))
            now = time.monotonic()
            image = full_image(image) if now - last_picture >= self.picture_interval else None
            if image is not None:
                last_picture = now
                ok, jpeg = cv2.imencode(".jpg", tracker.annotated(image),
                                        [cv2.IMWRITE_JPEG_QUALITY, 80])
                if ok:
                    yield FeedEvent(index, jpeg=jpeg.tobytes(), desync=tracker.desync)
        if not src.live and not self._stop.is_set():
            yield from told(tracker.last_frame, tracker.end_of_source())

    def close(self) -> None:
        self._stop.set()


class SentTables:
    """The tracker's tables as the feed sent them: the history entry each one was (the
    entry itself, so that tables the tracker inserts into its history later shift
    nothing) and the feed index it went out at.  A table's number is its place here --
    the name the dashboard knows it by.  (A table the tracker inserted is sent with the
    correction that tells of it, so it gets its number then, after later tables'.)"""

    def __init__(self) -> None:
        self.entries: list[dict] = []
        self.indexes: list[int] = []

    def add(self, index: int, entry: dict) -> int:
        self.entries.append(entry)
        self.indexes.append(index)
        return len(self.entries) - 1

    def number(self, entry: dict) -> int | None:
        return next((n for n, sent in enumerate(self.entries) if sent is entry), None)

    def address(self, number: int) -> dict:
        """The number, and for reading only the feed index it went out at and which of the
        tables sent at that index it was."""
        since = self.indexes[number]
        return {"table_number": number, "since": since,
                "nth": self.indexes[:number].count(since)}


def _corrections(tracker: Tracker, data: dict, sent: SentTables, index: int) -> list[dict]:
    """A tracker correction as the dashboard's corrections of the tables the feed sent (see
    `_correction` and, for cards whose going was confirmed late, `_removal`)."""
    if "cut" in data:
        return _removal(tracker, data, sent, index)
    correction = _correction(tracker, data, sent)
    return [] if correction is None else [correction]


def _correction(tracker: Tracker, data: dict, sent: SentTables) -> dict | None:
    """A tracker correction as the dashboard addresses it (`SentTables.address`): for a
    card renamed, the first table sent with the card in it, old and new name; for a judged
    table whose snakes were joined, or that holds cards found to have lain there from the
    start, that table as now judged (see `_retable`).  None for a correction that cannot be
    placed on a table the feed sent."""
    if "joined" in data or "found" in data:
        return _retable(tracker, data, sent)
    if "track" not in data:
        return None
    first = next((n for n, entry in enumerate(sent.entries)
                  if any(data["track"] in chain for chain in entry["tracks"])), None)
    if first is None:
        return None
    return {**sent.address(first), "from": data["from"], "to": data["to"]}


def _retable(tracker: Tracker, data: dict, sent: SentTables) -> dict | None:
    """A judged table corrected to show two of its snakes joined (`joined`), or cards that lay
    alone on it unseen (`found`), as the dashboard addresses it: the whole table as the
    tracker now judges it, and the snake joined or the cards found.  None unless the
    tracker's history entry it names was sent and holds that snake or those cards: a table
    named by an index that no longer means what the tracker meant is not guessed at."""
    number = data.get("table_number")
    if not isinstance(number, int) or not 0 <= number < len(tracker.history):
        return None
    entry = tracker.history[number]
    table = [list(chain) for chain in entry["table"]]
    snakes = [list(data["joined"])] if "joined" in data else [[code] for code in data["found"]]
    held = {canonical_chain(chain) for chain in table}
    if sent.number(entry) is None or any(canonical_chain(s) not in held for s in snakes):
        return None
    told = {"joined": snakes[0]} if "joined" in data else {"found": list(data["found"])}
    return {**sent.address(sent.number(entry)), "table": table, **told}


def _removal(tracker: Tracker, data: dict, sent: SentTables, index: int) -> list[dict]:
    """Cards whose going the tracker confirmed only later (`MoveRecord._observe_removal`), as
    the dashboard addresses it: each sent table judged while they were believed still there,
    as now judged without them -- the first one also with the table the tracker put in just
    before it (`before`: the table when they were first missed), which from now on is a
    table the feed sent too (`before_number`).  A table not sent is left out, not guessed at."""
    cut = [k for k in data["cut"] if isinstance(k, int) and 0 <= k < len(tracker.history)]
    inserted = data.get("inserted")
    out = []
    for k in cut:
        entry = tracker.history[k]
        number = sent.number(entry)
        if number is None:
            continue
        correction = {**sent.address(number), "table": [list(c) for c in entry["table"]],
                      "gone": list(data["gone"])}
        if isinstance(inserted, int) and k == inserted + 1:
            put_in = tracker.history[inserted]
            known = sent.number(put_in)
            correction.update(before=[list(c) for c in put_in["table"]],
                              before_frame=put_in["frame"],
                              before_number=sent.add(index, put_in) if known is None else known)
        out.append(correction)
    return out


def open_table_feed(source: str, **options) -> TrackerFeed:
    """The feed `companion serve --source SOURCE` uses for cameras, streams, videos and folders."""
    return TrackerFeed(source, **options)
