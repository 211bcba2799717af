"""The games bench's readings, kept between runs so that a change to the tracker alone is
measured in a minute, not re-analysed for a quarter of an hour.

With `COMPANION_BENCH_READINGS=DIR`, each game's readings (the analyser's `analyze` output
of every frame the tracker read) are stored in `DIR/<fingerprint>/game-<seed>[-calibrated].json.gz`
and read back on later runs: a frame read before is not analysed again.  `<fingerprint>` is a
fingerprint of what a reading depends on (the vision's code and models, the calibration's
code, the renderer), so that a change to them starts afresh rather than replay readings the
new vision would not make.

Three things a reading depends on besides its picture, and what a replay does about them:

- what a frame was read against: the empty table the tracker learns from the pictures it
  reads (`track.background`).  A tracker that reads other frames than before learns it from
  other pictures; a frame read before still gets the reading made then.
- which settled cards the reader was told lie unchanged (`Tracker._unchanged_cards`): a
  tracker that settles other tables tells it other cards.  A reading is kept under its frame
  and the outlines it was told (`reading_key`), so such a frame is read afresh.
- how long the vision takes: a game with any reading replayed has no frame rate (None).
"""
from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

PACKAGE = Path(__file__).resolve().parents[1]
# what a reading depends on: the code that reads pictures, the models and deck it loads, the
# renderer that drew the picture (and the calibration photo), and the empty table it is read against
READ_FROM = (PACKAGE / "vision", PACKAGE / "calibrate", PACKAGE / "synth", PACKAGE / "track" / "background.py",
             PACKAGE.parent / "models", PACKAGE.parent / "calibration")


def readings_fingerprint(sources=READ_FROM) -> str:
    """A short hash of every file in or under `sources` (names and bytes), in a stable order."""
    digest = hashlib.sha256()
    for root in map(Path, sources):
        files = [root] if root.is_file() else root.rglob("*")
        for path in sorted(p for p in files if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def readings_file(folder: str | Path, game_seed: int, calibrated: bool, fingerprint: str) -> Path:
    name = f"game-{game_seed}{'-calibrated' if calibrated else ''}.json.gz"
    return Path(folder) / fingerprint / name


def reading_key(frame: int, known: list | None) -> str:
    """A kept reading's name: its frame, and a digest of the known outlines it was told."""
    if not known:
        return str(frame)
    corners = np.round(np.asarray(known, np.float64).reshape(-1, 8), 1)
    return f"{frame}:{hashlib.sha256(corners.tobytes()).hexdigest()[:12]}"


class KeptReadings:
    """`analyze` with its readings kept in `path`, one per frame: set `frame` before each
    frame is fed (as the bench's oracle is told).  Use as the analyser of a `TableReader`."""

    def __init__(self, analyze: Callable[..., dict], path: str | Path):
        self.analyze = analyze
        self.path = Path(path)
        self.frame = -1
        self.analysed = 0      # frames read by `analyze`, not replayed
        self.replayed = 0
        self._readings: dict[str, Any] = {}
        try:
            with gzip.open(self.path, "rt", encoding="utf-8") as f:
                self._readings = dict(json.load(f))
        except (OSError, ValueError, TypeError, EOFError):
            pass   # none kept yet, or a damaged file: read afresh, and written again whole

    def __call__(self, image, **kwargs) -> dict:
        key = reading_key(self.frame, kwargs.get("known"))
        if key in self._readings:
            self.replayed += 1
        else:
            self._readings[key] = self.analyze(image, **kwargs)
            self.analysed += 1
        # (a copy: the tracker's reader may change what it is given)
        return json.loads(json.dumps(self._readings[key]))

    def save(self) -> None:
        if not self.analysed:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        with gzip.open(partial, "wt", encoding="utf-8") as f:
            json.dump(self._readings, f)
        partial.replace(self.path)   # (a run stopped midway leaves the last whole file)
