"""Drawing a picture: items warped onto the table with their shadows, then light, lens and sensor.

Each card face or prop is warped into a small region of interest; the light
(drawn over the final picture, looked up where each pixel lands) is applied
in 8 bits before the lens bends the picture, so lens and camera shake are one
remap; blur, noise and JPEG follow.  The label image records which truth card
each pixel shows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from .camera import Camera
from .layout import Item
from .light import Look, apply_sensor, expose, jpeg_round_trip, light_field_small
from .styles import GLOSS
from .world import World

GLOSS_FOREIGN = 0.5


@dataclass
class Frame:
    image: np.ndarray
    label: np.ndarray
    jpeg: bytes
    visibility: dict[int, float]
    hidden: dict[int, float] = field(default_factory=dict)    # share of a card under a hand or prop
    outside: dict[int, float] = field(default_factory=dict)   # share of a card outside the picture


def draw(world: World, items: list[Item], truth_ids: dict[int, int], rng: np.random.Generator,
         look: Look | None = None, shake: tuple[float, float] = (0.0, 0.0), jpeg: bool = True) -> Frame:
    """Draw items (in z order) on the table, then lens, light and sensor.

    truth_ids maps id(item) -> its truth card id; `shake` shifts the whole picture in pixels.
    """
    look = look or world.look
    cam = world.camera
    W, H = cam.size
    canvas = world.background.copy()
    label = np.zeros((H, W), np.uint16)
    cards_only = np.zeros((H, W), np.uint16)     # the label were hands and props not there
    gloss = np.zeros((H, W), np.float32) if look.glare[0] > 0 else None
    card_gloss = GLOSS[world.style]
    light_dir = np.array([math.cos(look.gradient[1]), math.sin(look.gradient[1])])
    for item in items:
        src, gl = _source(world, item, light_dir)
        sh_h, sh_w = src.shape[:2]
        pose = item.pose
        tl = pose.centre - pose.right * pose.w / 2 - pose.up * pose.h / 2
        A = np.array([[pose.right[0] * pose.w / sh_w, pose.up[0] * pose.h / sh_h, 0],
                      [pose.right[1] * pose.w / sh_w, pose.up[1] * pose.h / sh_h, 0], [0, 0, 1.0]])
        A[:2, 2] = tl + A[:2, :2] @ np.array([0.5, 0.5])
        M = cam.H @ A
        src, M = _in_front(src, M)
        if src is None:
            continue
        sh_h, sh_w = src.shape[:2]
        corners_px = np.array([[-0.5, -0.5], [sh_w - 0.5, -0.5], [sh_w - 0.5, sh_h - 0.5], [-0.5, sh_h - 0.5]])
        quad = cv2.perspectiveTransform(corners_px.reshape(-1, 1, 2), M).reshape(-1, 2)
        height = (item.sprite.height_mm if item.sprite is not None else 0.3) + item.lift
        middle = np.linalg.inv(cam.H) @ (M @ np.array([sh_w / 2, sh_h / 2, 1.0]))
        scale = cam.scale_at((middle[0] / middle[2], middle[1] / middle[2]))
        sigma = 0.6 + height * scale * 0.12
        offset = light_dir * (0.5 + height * scale * 0.25)
        margin = int(abs(offset).max() + 3 * sigma + 2)
        x0, y0 = np.floor(quad.min(0)).astype(int) - margin
        x1, y1 = np.ceil(quad.max(0)).astype(int) + margin + 1
        cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(W, x1), min(H, y1)
        if cx1 <= cx0 or cy1 <= cy0:
            continue
        T = np.array([[1, 0, -cx0], [0, 1, -cy0], [0, 0, 1.0]])
        warped = cv2.warpPerspective(src, T @ M, (cx1 - cx0, cy1 - cy0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        a8 = warped[..., 3]
        a = a8.astype(np.float32) * (1 / 255.0)
        roi = canvas[cy0:cy1, cx0:cx1]
        # its shadow first: offset away from the light, softer the higher it stands
        shadow = _soft_shadow(a, offset, sigma)
        depth = 0.35 if height < 1 else 0.5
        colour = cv2.cvtColor(warped, cv2.COLOR_BGRA2BGR).astype(np.float32)
        if item.shade != 1.0:
            colour *= item.shade
        # whole-ROI OpenCV blends: a single-channel weight per pixel over three channels
        lit = 1.0 - depth * shadow
        shaded = cv2.blendLinear(roi, np.zeros_like(roi), lit, 1.0 - lit)
        roi[...] = cv2.blendLinear(colour, shaded, a, 1.0 - a)
        if gloss is not None:
            gl_roi = gloss[cy0:cy1, cx0:cx1]
            gl_roi += ((card_gloss if gl is None else gl) - gl_roi) * a
        tid = truth_ids.get(id(item))
        mask = a8 > 127          # alpha > 0.5
        label[cy0:cy1, cx0:cx1][mask] = 0 if tid is None else tid + 1
        if item.what in ("card", "back", "unknown"):
            cards_only[cy0:cy1, cx0:cx1][mask] = 0 if tid is None else tid + 1

    # light falls on the table, so it is applied before the lens bends the picture:
    # the light field (drawn over the final picture) is looked up where each pixel lands
    shake = (float(shake[0]), float(shake[1]))
    img = expose(canvas, look, _field_on_table(cam, look, shake), gloss, _glare_on_table(cam, look, shake))
    img = cam.distort_image(img, shift=shake)
    label = cam.distort_image(label, cv2.INTER_NEAREST, shift=shake)
    cards_only = cam.distort_image(cards_only, cv2.INTER_NEAREST, shift=shake)
    img = apply_sensor(img, look, rng)
    data = b""
    if jpeg:
        img, data = jpeg_round_trip(img, look.jpeg_quality)
    counts = np.bincount(label.ravel(), minlength=len(truth_ids) + 1)
    unhidden = np.bincount(cards_only.ravel(), minlength=len(truth_ids) + 1)
    picture = np.float32([[-0.5, -0.5], [W - 0.5, -0.5], [W - 0.5, H - 0.5], [-0.5, H - 0.5]])
    vis, hidden, outside = {}, {}, {}
    for item in items:
        tid = truth_ids.get(id(item))
        if tid is not None:
            quad = cam.project(item.pose.corners()) + np.array(shake)
            # the rounded corners are not card: (4 - pi) r^2 of the rectangle, r = 0.07 short side
            rounded = (4 - math.pi) * (0.07 * min(item.pose.w, item.pose.h)) ** 2 / (item.pose.w * item.pose.h)
            area = abs(cv2.contourArea(quad.astype(np.float32))) * (1 - rounded)
            vis[tid] = float(min(1.0, counts[tid + 1] / max(area, 1.0)))
            hidden[tid] = float(min(1.0, max(0, int(unhidden[tid + 1]) - int(counts[tid + 1])) / max(area, 1.0)))
            full = abs(cv2.contourArea(quad.astype(np.float32)))
            inside, _ = cv2.intersectConvexConvex(_convex(quad), picture)
            outside[tid] = float(min(1.0, max(0.0, 1.0 - inside / max(full, 1e-9))))
    return Frame(img, label, data, vis, hidden, outside)


def _convex(quad: np.ndarray) -> np.ndarray:
    return cv2.convexHull(quad.astype(np.float32)).reshape(-1, 2)


def _field_on_table(cam: Camera, look: Look, shake: tuple[float, float]) -> np.ndarray:
    """The small light field (`light_field_small`) resampled for the undistorted picture."""
    W, H = cam.size
    small = light_field_small(look, (W, H))
    if cam.k1 == 0.0 and shake == (0.0, 0.0):
        return small
    sh, sw = small.shape
    xs = (np.arange(sw) + 0.5) * (W / sw) - 0.5
    ys = (np.arange(sh) + 0.5) * (H / sh) - 0.5
    grid = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
    # where these pixels land in the picture (6 steps of the solve: within 0.1 px at this size)
    p = cam.distort_points(grid, iterations=6) + np.array(shake)
    mx = ((p[:, 0] + 0.5) * (sw / W) - 0.5).reshape(sh, sw).astype(np.float32)
    my = ((p[:, 1] + 0.5) * (sh / H) - 0.5).reshape(sh, sw).astype(np.float32)
    return cv2.remap(small, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _glare_on_table(cam: Camera, look: Look, shake: tuple[float, float]) -> tuple[float, float, float]:
    """The glare's centre and radius (px) in the undistorted picture."""
    W, H = cam.size
    _, gx, gy, gr = look.glare
    centre = np.array([[gx * W - 0.5 - shake[0], gy * H - 0.5 - shake[1]]])
    x, y = cam.undistort_points(centre)[0]
    return float(x), float(y), float(gr * W)


NEAREST_DEPTH = 0.1   # of the camera's distance to the table centre: nearer is far outside the picture


def _in_front(src: np.ndarray, M: np.ndarray):
    """Crop a long sprite (an arm) to the part well in front of the camera.

    Table points near or behind the camera's foot project to infinity or wrap
    round; the depth of a sprite pixel is linear in (u, v), so the part to keep
    is a band of rows.  Returns (None, None) when nothing is in front.
    """
    h, w = src.shape[:2]
    a, b, c = M[2]
    depth = lambda u, v: a * u + b * v + c  # noqa: E731
    if min(depth(u, v) for u in (0, w) for v in (0, h)) >= NEAREST_DEPTH:
        return src, M
    if abs(b) < 1e-12:
        return (src, M) if min(depth(0, 0), depth(w, 0)) >= NEAREST_DEPTH else (None, None)
    bounds = [(NEAREST_DEPTH - a * u - c) / b for u in (0, w)]
    if b > 0:
        v0 = int(np.ceil(max(bounds)))
        if v0 >= h - 1:
            return None, None
        T = np.array([[1, 0, 0], [0, 1, max(0, v0)], [0, 0, 1.0]])
        return src[max(0, v0):], M @ T
    v1 = int(np.floor(min(bounds)))
    if v1 <= 1:
        return None, None
    return src[:min(h, v1)], M


def _soft_shadow(alpha: np.ndarray, offset: np.ndarray, sigma: float) -> np.ndarray:
    """The item's coverage shifted away from the light and blurred; wide blurs at 1/4 size."""
    h, w = alpha.shape
    if sigma < 3 or min(h, w) < 16:
        M = np.float32([[1, 0, offset[0]], [0, 1, offset[1]]])
        return cv2.GaussianBlur(cv2.warpAffine(alpha, M, (w, h)), (0, 0), sigma)
    f = 0.25
    small = cv2.resize(alpha, (max(1, int(w * f)), max(1, int(h * f))), interpolation=cv2.INTER_AREA)
    M = np.float32([[1, 0, offset[0] * f], [0, 1, offset[1] * f]])
    small = cv2.GaussianBlur(cv2.warpAffine(small, M, (small.shape[1], small.shape[0])), (0, 0), sigma * f)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _source(world: World, item: Item, light_dir: np.ndarray) -> tuple[np.ndarray, float | None]:
    """The BGRA picture to warp for an item, and its gloss (None = the deck's).

    `light_dir` is the way shadows fall in the picture; a prop with relief is lit
    from the other way, turned into the sprite's own axes."""
    if item.what in ("card", "back"):
        px = world.camera.scale_at(tuple(item.pose.centre)) * item.pose.w * 1.15
        return world.faces.get(item.card, px), None
    light = None
    if item.sprite.relief is not None:
        c = item.pose.centre
        q = world.camera.to_undistorted(np.array([c, c + item.pose.right, c + item.pose.up]))
        right, up = q[1] - q[0], q[2] - q[0]
        right /= max(1e-9, np.linalg.norm(right))
        up /= max(1e-9, np.linalg.norm(up))
        light = (float(-light_dir @ right), float(-light_dir @ up))
    return item.sprite.bgra(light), (GLOSS_FOREIGN if item.what == "unknown" else 0.25)
