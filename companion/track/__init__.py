"""Frames over time to settled tables and game events.

- `Tracker(analyze, players)`: `feed(frame_index, image) -> [TrackEvent]`, `table`,
  `moves`, `desync`, `account()`, `state()`/`restore()`, `finish()`;
- `open_source(SOURCE)` and `watch(source)`: numbered frames from a video file, a
  folder, a camera index or a stream URL, surviving drop-outs;
- `open_table_feed(SOURCE)`: the dashboard's feed of settled tables and pictures.
"""
from .feed import TrackerFeed, open_table_feed
from .sources import SourceError, open_source
from .tracker import TrackEvent, Tracker, TrackerSettings
from .watchdog import SourceStatus, watch

__all__ = ["Tracker", "TrackerSettings", "TrackEvent", "open_source", "watch", "SourceError",
           "SourceStatus", "open_table_feed", "TrackerFeed"]
