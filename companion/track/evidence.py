"""Pictures a referee can point at: dispute stills and the annotated live frame."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

OUTLINE = (0, 215, 255)      # BGR amber: the cards a move is about
ILLEGAL = (40, 40, 230)
TABLE = (90, 220, 90)


def outlined(image: np.ndarray, outlines: Sequence[Sequence[Sequence[float]]],
             colour=OUTLINE, label: str | None = None) -> np.ndarray:
    """A copy of the picture with each outline (four corners) drawn thick."""
    out = image.copy()
    thickness = max(2, round(out.shape[0] / 240))
    for corners in outlines:
        pts = np.round(np.asarray(corners, np.float32)).astype(np.int32)
        cv2.polylines(out, [pts], True, colour, thickness, cv2.LINE_AA)
    if label:
        _banner(out, label, colour)
    return out


def _banner(image: np.ndarray, text: str, colour) -> None:
    scale = max(0.5, image.shape[0] / 900)
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
    cv2.rectangle(image, (0, 0), (min(image.shape[1], w + 20), h + base + 16), (0, 0, 0), -1)
    cv2.putText(image, text, (10, h + 8), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 2, cv2.LINE_AA)


def save_move_evidence(folder: str | Path, number: int, move: dict, stills, outlines) -> list[str]:
    """Write the before and after stills of a move with its cards outlined; returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    colour = OUTLINE if move.get("legal", True) else ILLEGAL
    verdict = "legal" if move.get("legal", True) else f"ILLEGAL {move.get('code') or ''}".strip()
    paths = []
    for when, image, boxes in zip(("before", "after"), stills, outlines):
        if image is None:
            continue
        frame = move.get("evidence", {}).get(when)
        label = f"move {number} {when} (frame {frame}): {move.get('card') or move.get('action')} {verdict}"
        path = folder / f"move-{number:03d}-{when}-f{frame if frame is not None else 0:06d}.jpg"
        if not cv2.imwrite(str(path), outlined(image, boxes, colour, label)):
            raise OSError(f"cannot write {path}")
        paths.append(str(path))
    return paths


def annotate(image: np.ndarray, tracker) -> np.ndarray:
    """The live picture with the settled table drawn on it (and a desync banner)."""
    out = image.copy()
    thickness = max(1, round(out.shape[0] / 400))
    entry = tracker.history[-1] if tracker.history else None
    for ids, codes in zip(entry["tracks"], entry["table"]) if entry else ():
        centres = []
        for t, code in zip(ids, codes):
            track = tracker.tracks.get(t)
            if track is None:
                continue
            pts = np.round(track.corners).astype(np.int32)
            cv2.polylines(out, [pts], True, TABLE, thickness, cv2.LINE_AA)
            c = tuple(int(v) for v in track.centre)
            centres.append(c)
            cv2.putText(out, code, (c[0] - 30, c[1]), cv2.FONT_HERSHEY_SIMPLEX,
                        max(0.35, out.shape[0] / 1800), (255, 255, 255), 1, cv2.LINE_AA)
        for a, b in zip(centres, centres[1:]):
            cv2.line(out, a, b, TABLE, thickness, cv2.LINE_AA)
    if tracker.desync:
        _banner(out, f"desync, waiting for the table: {tracker.desync_reason}", ILLEGAL)
    return out
