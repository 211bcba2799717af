"""Draw what was seen on a copy of the picture: outlines, kinds, colours, chains."""
from __future__ import annotations

import cv2
import numpy as np

_KIND_BGR = {"head": (0, 200, 0), "tail": (0, 160, 255), "middle": (255, 160, 0),
             "rainbow_head": (255, 0, 255), "rainbow_tail": (200, 0, 200),
             "back": (160, 160, 160), "unknown": (0, 0, 255)}
_SHORT = {"head": "H", "tail": "T", "middle": "M", "rainbow_head": "RH", "rainbow_tail": "RT",
          "back": "back", "unknown": "?"}


def annotate(image: np.ndarray, result: dict) -> np.ndarray:
    """A copy of `image` (pixels of the size `result` speaks of) with the analysis drawn on."""
    out = image.copy()
    h, w = out.shape[:2]
    s = w / max(1, result["image"].get("width") or w)
    thick = max(1, int(round(max(h, w) / 600)))
    font = max(0.4, max(h, w) / 1600)
    by_id = {c["id"]: c for c in result.get("cards", [])}
    bad = {i for p in result.get("problems", []) for i in p["cards"]}
    for c in result.get("cards", []):
        pts = (np.array(c["corners"]) * s).astype(np.int32)
        colour = _KIND_BGR.get(c["kind"], (0, 0, 255))
        cv2.polylines(out, [pts], True, (0, 0, 255) if c["id"] in bad else colour, thick * 2, cv2.LINE_AA)
        for e in c.get("ends", []):
            cv2.circle(out, (int(e[0] * s), int(e[1] * s)), thick * 3, colour, -1, cv2.LINE_AA)
        label = f'{c["id"]} {_SHORT.get(c["kind"], c["kind"])} {"/".join(c["colours"])} {c["confidence"]:.2f}'
        x, y = pts[:, 0].min(), max(12, pts[:, 1].min() - 4)
        cv2.putText(out, label, (int(x), int(y)), cv2.FONT_HERSHEY_SIMPLEX, font, (0, 0, 0), thick + 2, cv2.LINE_AA)
        cv2.putText(out, label, (int(x), int(y)), cv2.FONT_HERSHEY_SIMPLEX, font, (255, 255, 255), thick, cv2.LINE_AA)
    for snake in result.get("snakes", []):
        centres = [np.mean(np.array(by_id[i]["corners"]) * s, axis=0) for i in snake["cards"] if i in by_id]
        if len(centres) > 1:
            line_colour = (0, 220, 0) if snake.get("complete") else (0, 220, 255)
            cv2.polylines(out, [np.array(centres, np.int32)], False, line_colour, thick * 2, cv2.LINE_AA)
    return out
