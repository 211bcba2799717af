"""A pinhole camera over the table plane, with mild radial lens distortion.

World coordinates are millimetres on the table (z = 0).  The camera looks at
the world origin from `distance` mm, tilted `tilt` degrees from vertical and
rolled `roll` degrees about its optical axis, so a table point maps to the
undistorted image by the homography `H = K [r1 r2 t]`.  Distortion is one
radial term on normalised coordinates, defined from the *distorted* (output)
pixel to where it looks in the undistorted picture, so the whole image is
distorted by one `cv2.remap` and truth points by a short fixed-point solve.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np


@dataclass
class Camera:
    size: tuple[int, int]            # (width, height) in pixels
    focal: float                     # pixels
    tilt: float                      # degrees from looking straight down
    roll: float                      # degrees about the optical axis
    distance: float                  # mm from the camera to the world origin
    k1: float = 0.0                  # radial distortion (>0 barrel)
    principal: tuple[float, float] | None = None
    H: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w, h = self.size
        cx, cy = self.principal or (w / 2.0, h / 2.0)
        self.principal = (cx, cy)
        K = np.array([[self.focal, 0, cx], [0, self.focal, cy], [0, 0, 1]], np.float64)
        th = np.radians(self.tilt)
        s, c = np.sin(th), np.cos(th)
        centre = np.array([0.0, -self.distance * s, self.distance * c])
        R = np.array([[1.0, 0, 0], [0, -c, -s], [0, s, -c]])
        ps = np.radians(self.roll)
        Rz = np.array([[np.cos(ps), -np.sin(ps), 0], [np.sin(ps), np.cos(ps), 0], [0, 0, 1]])
        R = Rz @ R
        t = -R @ centre
        self.H = K @ np.column_stack([R[:, 0], R[:, 1], t])
        self.H /= self.H[2, 2]

    # -- table <-> undistorted image
    def to_undistorted(self, xy: np.ndarray) -> np.ndarray:
        pts = np.asarray(xy, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.H).reshape(-1, 2)

    def to_table(self, uv_undistorted: np.ndarray) -> np.ndarray:
        pts = np.asarray(uv_undistorted, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, np.linalg.inv(self.H)).reshape(-1, 2)

    def scale_at(self, xy: tuple[float, float]) -> float:
        """Image pixels per table millimetre around a table point (undistorted)."""
        p = np.array([xy, (xy[0] + 1.0, xy[1]), (xy[0], xy[1] + 1.0)])
        q = self.to_undistorted(p)
        a, b = q[1] - q[0], q[2] - q[0]
        return float(np.sqrt(abs(a[0] * b[1] - a[1] * b[0])))

    # -- distortion
    def _norm(self, uv: np.ndarray) -> np.ndarray:
        return (uv - np.array(self.principal)) / self.focal

    def undistort_points(self, uv_distorted: np.ndarray) -> np.ndarray:
        """Where distorted output pixels look in the undistorted picture."""
        n = self._norm(np.asarray(uv_distorted, np.float64).reshape(-1, 2))
        r2 = (n * n).sum(1, keepdims=True)
        return n * (1 + self.k1 * r2) * self.focal + np.array(self.principal)

    def distort_points(self, uv_undistorted: np.ndarray, iterations: int = 20) -> np.ndarray:
        nu = self._norm(np.asarray(uv_undistorted, np.float64).reshape(-1, 2))
        nd = nu.copy()
        for _ in range(iterations):
            r2 = (nd * nd).sum(1, keepdims=True)
            nd = nu / (1 + self.k1 * r2)
        return nd * self.focal + np.array(self.principal)

    def project(self, xy: np.ndarray) -> np.ndarray:
        """Table millimetres -> output (distorted) image pixels."""
        return self.distort_points(self.to_undistorted(xy))

    def distort_image(self, img: np.ndarray, interpolation: int = cv2.INTER_LINEAR,
                      shift: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        """The undistorted picture as the lens shows it, moved by `shift` pixels (camera shake)."""
        if self.k1 == 0.0 and shift == (0.0, 0.0):
            return img
        if self.k1 == 0.0:
            S = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
            return cv2.warpAffine(img, S, self.size, flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
        mx, my = _distortion_maps(self.size, self.focal, self.principal, self.k1, tuple(shift))
        return cv2.remap(img, mx, my, interpolation, borderMode=cv2.BORDER_REPLICATE)

    def visible_table(self, inset_px: float = 0.0, per_edge: int = 12) -> np.ndarray:
        """The table polygon (mm) the output image shows, `inset_px` in from its border."""
        w, h = self.size
        a = np.linspace(0, 1, per_edge, endpoint=False)
        x0, y0, x1, y1 = inset_px, inset_px, w - inset_px, h - inset_px
        border = np.concatenate([
            np.stack([x0 + a * (x1 - x0), np.full_like(a, y0)], 1),
            np.stack([np.full_like(a, x1), y0 + a * (y1 - y0)], 1),
            np.stack([x1 - a * (x1 - x0), np.full_like(a, y1)], 1),
            np.stack([np.full_like(a, x0), y1 - a * (y1 - y0)], 1),
        ])
        return self.to_table(self.undistort_points(border))


@lru_cache(maxsize=8)
def _distortion_maps(size, focal, principal, k1, shift=(0.0, 0.0)):
    # x_u = cx + f nx (1 + k (nx^2 + ny^2)) separates into a row term plus an
    # outer product: two broadcasts instead of a dozen full-size operations.
    # Output pixel p shows the lens picture at p - shift.
    w, h = size
    nx = ((np.arange(w) - shift[0] - principal[0]) / focal).astype(np.float32)
    ny = ((np.arange(h) - shift[1] - principal[1]) / focal).astype(np.float32)
    mx = (principal[0] + focal * nx * (1 + k1 * nx * nx))[None, :] + (focal * k1 * nx)[None, :] * (ny * ny)[:, None]
    my = (principal[1] + focal * ny * (1 + k1 * ny * ny))[:, None] + (focal * k1 * ny)[:, None] * (nx * nx)[None, :]
    return mx.astype(np.float32), my.astype(np.float32)
