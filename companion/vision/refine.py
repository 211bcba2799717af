"""Outlines' sides moved onto the picture's own edges, at full resolution."""
from __future__ import annotations

import cv2
import numpy as np

from .outline import CardOutline
from .quads import intersect_lines


def refine_corners(gray: np.ndarray, outline: CardOutline, window: int = 6) -> CardOutline:
    """Move each side onto the strongest nearby edge at full resolution.

    Each side is sampled across at 12 places along it (all four sides in one
    remap); the strongest step of each profile, where strong, gives a point
    of the side, and a robust line through them the side.
    """
    c = outline.corners
    h, w = gray.shape
    d = c[[1, 2, 3, 0]] - c
    length = np.hypot(d[:, 0], d[:, 1])
    if length.min() < 8:
        return outline
    u = d / length[:, None]
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    ts = np.linspace(0.2, 0.8, 12)[None, :] * length[:, None]                 # (4, 12)
    offs = np.arange(-window, window + 1, dtype=np.float64)
    samples = c[:, None, None, :] + ts[:, :, None, None] * u[:, None, None, :] + offs[None, None, :, None] * n[:, None, None, :]
    xs = samples[..., 0].astype(np.float32)
    ys = samples[..., 1].astype(np.float32)
    outside = (xs.min(axis=(1, 2)) < 1) | (ys.min(axis=(1, 2)) < 1) | \
        (xs.max(axis=(1, 2)) > w - 2) | (ys.max(axis=(1, 2)) > h - 2)
    prof = cv2.remap(gray, xs.reshape(-1, len(offs)), ys.reshape(-1, len(offs)), cv2.INTER_LINEAR)
    grad = np.abs(np.diff(prof.astype(np.float32).reshape(4, len(ts[0]), len(offs)), axis=2))
    k = np.argmax(grad, axis=2)
    strong = np.take_along_axis(grad, k[..., None], axis=2)[..., 0] > 12
    shift = offs[k] + 0.5
    pts = c[:, None, :] + ts[:, :, None] * u[:, None, :] + shift[:, :, None] * n[:, None, :]
    lines = []
    for i in range(4):
        if outside[i] or strong[i].sum() < 5:
            lines.append((c[i], u[i]))
            continue
        vx, vy, x0, y0 = cv2.fitLine(pts[i][strong[i]].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    out = []
    for i in range(4):
        p = intersect_lines(lines[i - 1], lines[i])
        if p is None or np.hypot(*(p - c[i])) > 2 * window:
            return outline
        out.append(p)
    return CardOutline(np.array(out), outline.score)
