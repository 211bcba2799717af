"""Where the live game's tables come from: the `TableFeed` interface and its sources.

The dashboard does not care whether a table was settled by the camera tracker,
replayed from a recorded game, or read from a phone photo.  A feed yields
`FeedEvent`s; the game loop stores every settled table in the history and
shows every picture on the video stream.  The tracker (``companion.track``)
plugs in by providing a feed for camera indexes, stream URLs and video files
(see `open_feed`).
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Protocol, runtime_checkable


@dataclass(frozen=True)
class FeedEvent:
    index: int                      # the source's own frame number, increasing
    table: list | None = None       # a settled table (chains of card codes), or None: picture only
    jpeg: bytes | None = None       # the annotated picture at this moment, if any
    desync: bool = False            # the tracker cannot explain what it sees
    finished: bool = False          # the draw pile is empty: no more moves will come
    # a table settled earlier is corrected; it names the table event with that
    # `table_number`.  Either a card was misread, {"table_number": n, "from": code,
    # "to": code, ...} (n: the table the card was first laid in), or the table is judged
    # differently, {"table_number": n, "table": chains, "joined": chain, ...} (two of
    # its snakes were one: an end the camera missed had completed it), or
    # {"table_number": n, "table": chains, "gone": codes, ...} (cards whose going the camera
    # confirmed only later had left before it), the first such with {"before": chains,
    # "before_frame": camera frame, "before_number": m}: the table when they went, judged
    # just before it, the feed's table m from then on.
    # (Its "since"/"nth" -- the k-th table sent at feed index `since` -- are kept for
    # reading only: a table the dashboard refused would shift them onto another table.)
    correction: dict | None = None
    # the feed's number for this table, unique within one `events()` run, so that a later
    # correction can name exactly this table (None: the feed sends no corrections)
    table_number: int | None = None


@runtime_checkable
class TableFeed(Protocol):
    """A source of settled tables and pictures for one game."""

    def events(self, start_after: int = -1) -> Iterator[FeedEvent]:
        """Yield events with index > start_after, as they happen; end when the source ends.

        `start_after` lets a restarted server resume a replayable source
        without storing the same table twice; a live camera ignores it.
        """
        ...

    def close(self) -> None:
        """Stop as soon as possible; `events` must then return promptly."""
        ...


class FeedUnavailable(ValueError):
    """The source cannot be opened (no tracker installed, no such file, bad record)."""


class RecordFeed:
    """Replays a symbolic game record (the `judge` FILE format) at a steady pace.

    Each frame of the record becomes one settled table.  The picture is the
    matching rendered frame when `pictures` is given (one image file per record
    frame), otherwise the table drawn as clean card glyphs.
    """

    def __init__(self, record: dict, pace: float = 4.0, pictures: list[Path] | None = None,
                 first_delay: float | None = None):
        frames = record.get("frames") if isinstance(record, dict) else None
        if not isinstance(frames, list) or not frames:
            raise FeedUnavailable("a game record needs a non-empty 'frames' list")
        self.tables = [f.get("table") if isinstance(f, dict) else None for f in frames]
        if any(not isinstance(t, list) for t in self.tables):
            raise FeedUnavailable("every frame of a game record needs a 'table' list")
        self.players = list(record.get("players") or [])
        self.finished = bool(record.get("finished"))
        self.pace = float(pace)
        self.first_delay = self.pace if first_delay is None else float(first_delay)
        self.pictures = pictures
        self._stop = threading.Event()

    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> "RecordFeed":
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FeedUnavailable(f"cannot read game record {path}: {exc}") from None
        except RecursionError:
            raise FeedUnavailable(f"cannot read game record {path}: nested too deeply") from None
        return cls(record, **kwargs)

    def picture(self, index: int) -> bytes:
        from .picture import draw_table_jpeg, load_jpeg
        if self.pictures and index < len(self.pictures):
            return load_jpeg(self.pictures[index])
        return draw_table_jpeg(self.tables[index])

    def events(self, start_after: int = -1) -> Iterator[FeedEvent]:
        start = max(0, start_after + 1)
        if start > 0 and start - 1 < len(self.tables):
            # a resumed game: show where it stands straight away
            yield FeedEvent(start - 1, None, self.picture(start - 1))
        for i in range(start, len(self.tables)):
            if self._stop.wait(self.first_delay if i == start else self.pace):
                return
            last = i == len(self.tables) - 1
            yield FeedEvent(i, self.tables[i], self.picture(i), finished=last and self.finished)

    def close(self) -> None:
        self._stop.set()


class FilmFeed:
    """A rendered game -- the renderer's ``truth.json`` beside its frames -- at its frame rate.

    Every film frame becomes the picture; each record frame's table is
    settled at the first film frame that shows it at rest, which is what a
    perfect tracker would report.  Indexes are film frame numbers.
    """

    def __init__(self, truth_path: str | Path, speed: float = 1.0):
        path = Path(truth_path)
        try:
            truth = json.loads(path.read_text(encoding="utf-8"))
            self.players = list(truth["players"])
            tables = [f["table"] for f in truth["record"]["frames"]]
            self.settled = {int(r["first_video_frame"]): tables[int(r["record_frame"])]
                            for r in truth["record_frames"]}
            self.files = [path.parent / f["file"] for f in truth["frames"]]
            self.interval = 1.0 / (float(truth["fps"]) * speed)
            self.finished = bool(truth["record"].get("finished"))
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise FeedUnavailable(f"cannot read the rendered game {path}: {exc}") from None
        self._stop = threading.Event()

    def events(self, start_after: int = -1) -> Iterator[FeedEvent]:
        from .picture import load_jpeg
        last_table = max(self.settled, default=-1)
        for index, file in enumerate(self.files):
            if index <= start_after:
                continue
            if self._stop.wait(self.interval):
                return
            yield FeedEvent(index, self.settled.get(index), load_jpeg(file),
                            finished=self.finished and index == last_table)

    def close(self) -> None:
        self._stop.set()


class UploadFeed:
    """No live source: tables arrive only as photos uploaded for each turn."""

    def events(self, start_after: int = -1) -> Iterator[FeedEvent]:
        return iter(())

    def close(self) -> None:
        pass


def open_feed(source: str, pace: float = 4.0, players: list[str] | None = None,
              profile: str | None = None) -> TableFeed:
    """The feed for a `--source` value.

    - ``upload`` (or empty): photos uploaded on the dashboard, one per turn;
    - a ``.json`` file: a symbolic game record, replayed at `pace` seconds per frame;
    - a camera index, stream URL, video file or folder of frames: the tracker's
      feed, ``companion.track.open_table_feed(source)``.
    """
    source = (source or "").strip()
    if source in ("", "upload"):
        return UploadFeed()
    if source.lower().endswith(".json"):
        return RecordFeed.from_file(source, pace=pace)
    try:
        from companion.track import open_table_feed  # provided by the tracker (issue 6)
    except ImportError:
        raise FeedUnavailable(
            f"cannot open {source!r}: the camera tracker is not installed in this build; "
            "use photo uploads or a game record (.json)") from None
    return open_table_feed(source, players=players, profile=profile)
