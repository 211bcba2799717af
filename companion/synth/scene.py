"""A photograph of a Hisss table with its exact truth.

`render_scene(seed, tier)` draws a camera, a table, a deck printing, a legal
game state (from the referee's simulator) laid out as people lay cards, props,
light and sensor, and returns the picture with its truth in the `analyze
--json` format of CONTRACT.md.  Truth geometry is computed from the same
table coordinates that the drawing warps, so it lands on the drawn card.

Costs stay low by drawing each card face once per scene (at about the size it
appears) and warping it into a small region of interest; the table, light and
lens are whole-image operations done once.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from companion.game.cards import Card, Kind
from companion.game.chains import is_complete

from . import props as P
from .camera import Camera
from .cards import RAINBOW, card_alpha, render_card
from .layout import ChainStyle, Item, Layout, Occupancy, Pose, fit_chain, fit_fan, fit_thing
from .light import Look, apply_sensor, expose, jpeg_round_trip, light_field_small, sample_look
from .states import POOL_SIZE, Game, pooled_game
from .styles import GLOSS, TRAIN_STYLES, Print, check_style, sample_print
from .surfaces import list_textures, make_surface
from .tiers import TIERS, Tier, get_tier

CARD_SHORT_MM = (50.0, 64.0)     # a card's short side; the long side follows the deck's aspect
GLOSS_FOREIGN = 0.5


@dataclass
class Scene:
    image: np.ndarray          # BGR uint8, exactly the pixels of `jpeg`
    truth: dict                # analyze --json format
    label: np.ndarray          # uint16: 0 = not a truth card, k + 1 = truth card id k (visible pixels)
    jpeg: bytes                # the encoded picture (write it as is)
    meta: dict = field(default_factory=dict)   # what was drawn: tier draws, style, visibility per card

    def save(self, folder: str | Path, name: str, label: bool = False) -> Path:
        """Write NAME.jpg, its truth NAME.json, NAME.meta.json and (label=True) NAME.label.png."""
        import json
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.jpg"
        path.write_bytes(self.jpeg)
        truth = dict(self.truth, image=dict(self.truth["image"], path=str(path)))
        (folder / f"{name}.json").write_text(json.dumps(truth) + "\n", encoding="utf-8")
        (folder / f"{name}.meta.json").write_text(json.dumps(self.meta, default=_jsonable) + "\n", encoding="utf-8")
        if label:   # 16-bit PNG: truth card id + 1 where that card is seen, 0 elsewhere
            cv2.imwrite(str(folder / f"{name}.label.png"), self.label)
        return path


def _jsonable(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# --------------------------------------------------------------------------- faces

class FaceCache:
    """Card faces of one printing, drawn once per size bucket (quarter octaves: at most 19 % over)."""

    def __init__(self, print_: Print, aspect: float):
        self.print_ = print_
        self.aspect = aspect
        self._faces: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._rng = np.random.default_rng(print_.seed)   # unused by drawing (print given), kept for API

    def get(self, card: Card | None, short_px: float) -> np.ndarray:
        """BGRA uint8 portrait face about `short_px` wide (never smaller)."""
        bucket = int(round(2 ** (math.ceil(4 * math.log2(max(12.0, short_px))) / 4)))
        bucket = min(bucket, 420)
        ident = card.identity(RAINBOW) if card is not None else None
        key = (ident.code if ident is not None else "back", bucket)
        if key not in self._faces:
            bgr = render_card(ident, self.print_.style, self._rng, bucket, self.aspect, print_=self.print_)
            h, w = bgr.shape[:2]
            cover = card_alpha(w, h)
            # the card's cut edge shows the light core of the board
            rim = cover - cv2.erode(cover, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
            bgr = (bgr * (1 - 0.45 * rim[..., None]) + 215.0 * 0.45 * rim[..., None]).astype(np.uint8)
            alpha = (cover * 255).astype(np.uint8)
            self._faces[key] = np.dstack([bgr, alpha])
        face = self._faces[key]
        if card is not None and ident != card:       # the same physical card seen from its other end
            face = face[::-1, ::-1]
        return face


# --------------------------------------------------------------------------- the world of one picture

@dataclass
class World:
    tier: Tier
    camera: Camera
    style: str
    print_: Print
    aspect: float
    card_mm: tuple[float, float]
    faces: FaceCache
    background: np.ndarray     # float32 undistorted table picture
    look: Look
    surface: str
    region: np.ndarray         # visible table polygon, mm (a little inside the picture)
    sprite_ppm: float
    card_range: tuple[float, float] | None = None   # every card's short side kept in this range, px

    @property
    def size(self) -> tuple[int, int]:
        return self.camera.size


def make_world(tier: Tier, rngs: dict, style: str, size: tuple[int, int],
               textures_dir: str | Path | None = None, card_px: float | None = None,
               step_back: float = 1.0, game_cards: int | None = None, game_min_px: float = 0.0) -> World:
    """Camera, deck printing, table and light of one picture (or one video).

    Without `card_px` the camera keeps every card inside the tier's size range
    (`card_sizes`) and `region` is the part of the picture where a card keeps
    it.  A given `card_px` is the card's short side at the picture centre and
    `region` the whole picture (games fit their fullest table that way);
    `step_back` moves the camera that much farther (a given table that does
    not fit).  `game_cards` (a filmed game's fullest table) chooses the camera
    by `_game_sizes` instead: cards as large as that many still fit where every
    card is at least `game_min_px`; `card_px` is then ignored.
    """
    rc = rngs["camera"]
    w, h = size
    hfov = np.radians(rc.uniform(*tier.hfov_deg))
    focal = (w / 2) / math.tan(hfov / 2)
    card_w = float(rc.uniform(*CARD_SHORT_MM))
    aspect = float(rc.uniform(1.0, 1.6))
    drawn_px = float(rc.uniform(*tier.card_px))
    tilt = float(rc.uniform(*tier.tilt_deg))
    roll = float(rc.uniform(*tier.roll_deg))
    k1 = float(rc.uniform(*tier.k1))
    principal = (w / 2 + rc.uniform(-0.01, 0.01) * w, h / 2 + rc.uniform(-0.01, 0.01) * h)
    region, card_range = None, (tier.card_px if card_px is None else None)
    if game_cards is not None:
        # a family filming a game aims the camera so the table fits: steep, wide shots ease
        # towards the tier's gentlest until the fullest table keeps cards of game_min_px
        tilt0, hfov0 = tilt, hfov
        for k in range(GAME_CAMERA_STEPS + 1):
            s = k / GAME_CAMERA_STEPS
            tilt = tilt0 + (tier.tilt_deg[0] - tilt0) * s
            hfov = hfov0 + (np.radians(tier.hfov_deg[0]) - hfov0) * s
            focal = (w / 2) / math.tan(hfov / 2)
            distance, region, card_range = _game_sizes(Camera(size, focal, tilt, roll, focal, k1, principal),
                                                       card_w, aspect, int(game_cards), float(game_min_px),
                                                       float(tier.card_px[1]))
            if card_range is not None:
                break
        distance *= step_back
    elif card_px is None:
        lo, hi = tier.card_px
        u = (drawn_px - lo) / max(1e-9, hi - lo)
        distance, region = _frame_sizes(Camera(size, focal, tilt, roll, focal, k1, principal), card_w, lo, hi, u,
                                        step_back)
    else:
        distance = focal * card_w / float(card_px) * step_back
    cam = Camera(size, focal, tilt, roll, distance, k1, principal)
    ra = rngs["art"]
    print_ = sample_print(style, ra)
    faces = FaceCache(print_, aspect)

    rs = rngs["surface"]
    photos = list_textures(textures_dir)
    surface = str(rs.choice(list(tier.surfaces) + (["photo"] * len(tier.surfaces) if photos else [])))
    cover = cam.visible_table(inset_px=-0.04 * max(size))
    lo_, hi_ = cover.min(0), cover.max(0)
    near = max(cam.scale_at(tuple(p)) for p in cover[:: max(1, len(cover) // 12)])
    area = float(np.prod(hi_ - lo_))
    ppm = min(near, math.sqrt(1.0 * w * h / area))
    tw, th = max(16, int((hi_[0] - lo_[0]) * ppm)), max(16, int((hi_[1] - lo_[1]) * ppm))
    photo = photos[int(rs.integers(len(photos)))] if surface == "photo" else None
    tex = make_surface(surface if surface != "photo" else "felt", rs, tw, th, ppm, photo)
    # texture pixel (u, v) centre -> table mm
    A = np.array([[1 / ppm, 0, lo_[0] + 0.5 / ppm], [0, 1 / ppm, lo_[1] + 0.5 / ppm], [0, 0, 1]])
    background = cv2.warpPerspective(tex, cam.H @ A, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if region is None:
        region = cam.visible_table(inset_px=3.0 + 0.01 * min(size))
    else:
        region = region * (distance / focal)      # the usable table scales with the distance
    return World(tier, cam, style, print_, aspect, (card_w, card_w * aspect), faces,
                 background.astype(np.float32), sample_look(tier, rngs["light"]), surface, region,
                 sprite_ppm=min(near, 12.0) * 1.1, card_range=card_range)


# A card's outline is judged at its centre with this much room: its far end is a
# little smaller than its centre, its near end a little larger.  (2 % room draws
# more small cards, but moves every camera; tests/vision's fixture scene depends
# on these, so change them together with its owners.)
SIZE_ROOM = (1.12, 0.93)
MAX_SHARE = 0.25       # of the picture's short side: the largest card a still's camera aims for
MIN_USABLE = 0.7       # share of the picture the cards may use, when the tier's range allows it


def card_sizes(cam: Camera, card_w: float, points_px: np.ndarray):
    """Shortest and longest possible short side (px) of a card centred at picture points.

    The outline's shortest edge lies between the smallest and largest singular
    value of the table-to-picture Jacobian times the card's short side,
    whatever way the card is turned.  Returns (table points, smallest,
    largest, in front of the camera).
    """
    X = cam.to_table(cam.undistort_points(points_px))
    front = (np.column_stack([X, np.ones(len(X))]) @ cam.H[2]) > 0
    d = 0.5
    q0 = cam.project(X)
    jac = np.stack([(cam.project(X + [d, 0]) - q0) / d, (cam.project(X + [0, d]) - q0) / d], -1)
    sv = np.linalg.svd(jac, compute_uv=False)
    return X, sv[:, 1] * card_w, sv[:, 0] * card_w, front


def _frame_sizes(cam: Camera, card_w: float, lo: float, hi: float, u: float, step_back: float):
    """The camera distance and the usable table (mm at distance = focal) for cards of lo..hi px.

    Sizes scale as 1 / distance, so they are measured once at distance = focal
    on a grid over the picture.  The card size at the centre is drawn (`u`)
    among those that leave at least MIN_USABLE of the picture usable (or 90 %
    of the best share the tier's range allows under a steep tilt); the usable
    region is the hull of the grid points where a card keeps inside lo..hi.
    """
    W, H = cam.size
    inset = 3.0 + 0.01 * min(W, H)
    xs, ys = np.linspace(inset, W - 1 - inset, 25), np.linspace(inset, H - 1 - inset, 15)
    grid = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
    grid = np.vstack([grid, [cam.principal]])
    X, small, large, front = card_sizes(cam, card_w, grid)
    sc, lc = small[-1], large[-1]
    # a photo shows a table, not two cards filling a small picture
    low, high = lo * SIZE_ROOM[0], min(hi, MAX_SHARE * min(W, H)) * SIZE_ROOM[1]
    cs = np.linspace(low, max(low, high * sc / lc), 80)         # the centre itself must be usable
    usable = [(front & (c / sc * small >= low) & (c / sc * large <= high))[:-1].mean() for c in cs]
    usable = np.array(usable)
    allowed = cs[usable >= min(MIN_USABLE, 0.9 * usable.max())]
    pos = u * len(allowed)
    i = min(len(allowed) - 1, int(pos))
    step = cs[1] - cs[0] if len(cs) > 1 else 0.0
    c = max(low, float(allowed[i] + (pos - i) * step) / step_back)
    ok = front & (c / sc * small >= low) & (c / sc * large <= high)
    pts = X[ok].astype(np.float32)
    distance = cam.distance * sc / c
    if len(pts) < 3:       # nothing usable (a tiny picture for this range): the centre only
        pts = X[-1:].astype(np.float32) + np.float32([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * card_w
    hull = cv2.convexHull(pts).reshape(-1, 2).astype(np.float64)
    return distance, hull / (cam.distance / cam.focal)


GAME_CAMERA_STEPS = 5
GAME_DENSITY = 0.25    # share of a game's usable table its fullest table's cards may cover


def _game_sizes(cam: Camera, card_w: float, aspect: float, n_cards: int, min_px: float, max_px: float):
    """The camera distance and usable table (mm at distance = focal) for a filmed game.

    The card size at the picture centre is the largest for which the part of
    the picture where every card keeps at least `min_px` (and at most
    `max_px`) holds `n_cards` at GAME_DENSITY.  When no size allows that (a
    small picture, a steep tilt), the floor is dropped: the whole picture is
    usable and the cards are as large as the fullest table allows.  Returns
    (distance, region, the size range kept or None).
    """
    W, H = cam.size
    inset = 3.0 + 0.01 * min(W, H)
    xs, ys = np.linspace(inset, W - 1 - inset, 25), np.linspace(inset, H - 1 - inset, 15)
    grid = np.vstack([np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2), [cam.principal]])
    X, small, large, front = card_sizes(cam, card_w, grid)
    sc = small[-1]
    need = n_cards * card_w * card_w * aspect / GAME_DENSITY       # mm² of table
    for floor in ((min_px, max_px), (0.0, np.inf)):
        kept = (min_px, max_px) if floor[0] > 0 else None
        for c in np.geomspace(max_px, 6.0, 160):
            ok = front & (c / sc * small >= floor[0]) & (c / sc * large <= floor[1])
            ok[-1] = False
            if ok.sum() < 3:
                continue
            hull = cv2.convexHull(X[ok].astype(np.float32)).reshape(-1, 2).astype(np.float64)
            scale = sc / c            # table mm grow with the distance
            if abs(cv2.contourArea(hull.astype(np.float32))) * scale ** 2 >= need:
                return cam.distance * scale, hull, kept
    return cam.distance * sc / 6.0, cam.visible_table(inset_px=inset), None


# --------------------------------------------------------------------------- drawing

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


# --------------------------------------------------------------------------- truth

def truth_of(world: World, items: list[Item], path: str, shake: tuple[float, float] = (0.0, 0.0)):
    """The analyze-format truth of items, and item -> truth id."""
    cam = world.camera
    ordered = sorted((it for it in items if it.what in ("card", "back", "unknown")),
                     key=lambda it: (it.chain is None, it.chain if it.chain is not None else 0,
                                     it.pos if it.pos is not None else 0))
    cards, ids, chains = [], {}, {}
    shift = np.array(shake, float)
    for k, it in enumerate(ordered):
        ids[id(it)] = k
        corners = cam.project(it.pose.corners()) + shift
        ends = [cam.project(e[None])[0] + shift for e in it.ends()]
        kind = it.card.kind.value if it.what == "card" else it.what
        cards.append({
            "id": k, "kind": kind,
            "colours": list(it.card.colours) if it.what == "card" else [],
            "ends": [[round(float(x), 2), round(float(y), 2)] for x, y in ends],
            "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in corners],
            "confidence": 1.0,
        })
        if it.what == "card" and it.chain is not None:
            chains.setdefault(it.chain, []).append((it.pos, k, it.card))
    snakes = []
    for c in sorted(chains):
        members = [k for _, k, _ in sorted(chains[c])]
        snakes.append({"cards": members, "complete": is_complete([card for _, _, card in sorted(chains[c])])})
    w, h = cam.size
    return {"image": {"path": path, "width": w, "height": h}, "cards": cards, "snakes": snakes,
            "problems": []}, ids


VISIBLE_SHARE = 0.5    # a card is in a still's truth when at least this much of it can be seen


def visible_truth(truth: dict, frame: Frame) -> tuple[dict, np.ndarray, list[int]]:
    """The truth of the cards one can judge in the picture, its label, and the ids left out.

    A card is left out when more than half of it is outside the picture or
    under a hand or a prop (outside + hidden > 1 - VISIBLE_SHARE); cards under
    other cards (a fan) stay.  A snake with a card left out becomes its runs
    of visible neighbours, each complete only if it is itself a complete snake.
    """
    n = len(truth["cards"])
    keep = [k for k in range(n) if frame.outside.get(k, 0.0) + frame.hidden.get(k, 0.0) <= 1 - VISIBLE_SHARE]
    gone = [k for k in range(n) if k not in set(keep)]
    if not gone:
        return truth, frame.label, []
    new = {k: i for i, k in enumerate(keep)}
    cards = [dict(truth["cards"][k], id=new[k]) for k in keep]
    snakes = []
    for snake in truth["snakes"]:
        runs, run = [], []
        for k in snake["cards"]:
            if k in new:
                run.append(new[k])
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
        for run in runs:
            whole = len(run) == len(snake["cards"])
            complete = snake["complete"] if whole else is_complete([_card(cards[i]) for i in run])
            snakes.append({"cards": run, "complete": complete})
    lut = np.zeros(n + 1, np.uint16)
    for k, i in new.items():
        lut[k + 1] = i + 1
    return dict(truth, cards=cards, snakes=snakes), lut[frame.label], gone


def _card(card: dict) -> Card:
    return Card(Kind(card["kind"]), tuple(card["colours"]))


def reaching_hand(world: World, items: list[Item], rng: np.random.Generator) -> Item | None:
    """A hand reaching in from beyond the picture's edge, its fingertips over a laid card."""
    cards = [it for it in items if it.what == "card"]
    if not cards:
        return None
    cam = world.camera
    W, H = cam.size
    target = cards[int(rng.integers(len(cards)))]
    tip = target.pose.centre + rng.normal(0.0, 0.3, 2) * target.pose.w
    for _ in range(8):
        a = rng.uniform(0, 2 * np.pi)
        d = np.array([math.cos(a), math.sin(a)])
        for reach in (150.0, 250.0, 400.0, 650.0, 1000.0):
            seat = tip + d * reach
            depth = cam.H[2] @ np.array([seat[0], seat[1], 1.0])
            x, y = cam.project(seat[None])[0]
            if depth > 0 and not (0 <= x < W and 0 <= y < H):
                length = reach + 100.0
                # drawn as finely as the picture shows it near the fingertips (the arm nearer the
                # camera may be a little coarser): the table's finest scale would cost many times more
                ppm = min(world.sprite_ppm, 1.5 * cam.scale_at(tuple(tip)))
                sprite = P.hand(rng, ppm, length_mm=length)
                pose = Pose(tip + d * (length / 2 - 8.0), -d, sprite.size_mm[0], length)
                return Item(pose, None, "prop", sprite=sprite, lift=30.0)
    return None


# --------------------------------------------------------------------------- laying out a state

def chain_style(tier: Tier, rng: np.random.Generator, tight: bool = False) -> ChainStyle:
    max_angle = math.radians(tier.neighbour_angle_deg)
    if tight:
        return ChainStyle(max_angle * 0.15, 0.0, (0.0, 0.02), 0.02)
    return ChainStyle(max_angle, float(rng.uniform(-0.35, 0.35)) * max_angle, tier.gap_frac, tier.lateral_frac)


def lay_out(world: World, table: list[list[Card]], rng: np.random.Generator, *, collected: list[list[Card]] = (),
            fan: int = 0, distractors: int = 0) -> Layout:
    """Place a table state (chains in physical order) and the extras on the visible table."""
    w, h = world.card_mm
    occ = Occupancy(world.region, cell=w / 6, **_sizing(world))
    out = Layout()
    chain_no = 0
    # collected snakes first, along the edges, so the open table stays free for the game
    for snake in collected:
        poses = fit_chain(occ, snake, w, h, chain_style(world.tier, rng, tight=True), rng, near_edge=world.region)
        if poses is None:
            continue
        for i, (card, pose) in enumerate(zip(snake, poses)):
            out.items.append(Item(pose, card, "card", chain=chain_no, pos=i, complete=True, shade=_shade(rng)))
        chain_no += 1
    for chain in sorted(table, key=len, reverse=True):
        poses = fit_chain(occ, chain, w, h, chain_style(world.tier, rng), rng)
        if poses is None:
            out.dropped.append([c.code for c in chain])
            continue
        for i, (card, pose) in enumerate(zip(chain, poses)):
            out.items.append(Item(pose, card, "card", chain=chain_no, pos=i, shade=_shade(rng)))
        chain_no += 1
    if fan:
        poses = fit_fan(occ, fan, w, h, rng)
        for k, pose in enumerate(poses or []):
            out.items.append(Item(pose, None, "back", z=k, shade=_shade(rng)))
    for _ in range(distractors):
        what = str(rng.choice(P.PROPS, p=[0.3, 0.15, 0.15, 0.4]))
        if what == "foreign_card":
            _, sprite = P.foreign_card(rng, world.sprite_ppm)
        else:
            sprite = getattr(P, what)(rng, world.sprite_ppm)
        pose = fit_thing(occ, sprite.size_mm, rng, grow=0.3 * w)
        if pose is not None:
            out.items.append(Item(pose, None, "unknown" if what == "foreign_card" else "prop", sprite=sprite))
    return out


def _sizing(world: World) -> dict:
    """Occupancy hooks keeping cards inside the world's size range, spread by picture area."""
    if world.card_range is None:
        return {}
    cam, (lo, hi) = world.camera, world.card_range

    def picture_area(pts):
        depth = np.column_stack([pts, np.ones(len(pts))]) @ cam.H[2]
        return np.where(depth > 0, np.abs(depth) ** -3.0, 0.0)

    def in_range(polys):
        edges = short_sides(cam, np.asarray(polys))
        return bool(np.all((edges >= lo) & (edges <= hi)))

    return {"weight": picture_area, "accept": in_range}


def short_sides(cam: Camera, polys: np.ndarray) -> np.ndarray:
    """The shortest edge (px) of each card outline (table corners, n x 4 x 2) in the picture."""
    q = cam.project(polys.reshape(-1, 2)).reshape(-1, 4, 2)
    return np.linalg.norm(q - np.roll(q, -1, axis=1), axis=2).min(1)


def _shade(rng: np.random.Generator) -> float:
    # no card lies perfectly flat: each catches the light a little differently
    return float(np.exp(rng.normal(0, 0.03)))


def _pick_state(game: Game, capacity: float, rng: np.random.Generator) -> int:
    """A frame index whose cards fit the picture, late frames preferred (fuller tables)."""
    sizes = [sum(len(c) for c in t) for t in game.frames]
    fitting = [i for i, n in enumerate(sizes) if n <= capacity] or [0]
    # a table about as full as the picture allows, when the game has one
    fitting = [i for i in fitting if sizes[i] >= 0.4 * capacity] or fitting
    weights = np.linspace(1.0, 3.0, len(fitting))
    return int(rng.choice(fitting, p=weights / weights.sum()))


def _streams(seed: int, tier: str) -> dict:
    streams = np.random.SeedSequence([int(seed), list(TIERS).index(tier)]).spawn(7)
    return dict(zip(("camera", "art", "surface", "light", "state", "layout", "sensor"),
                    (np.random.default_rng(s) for s in streams)))


def _fit_given_table(t: Tier, seed, style, size, textures_dir, table, world: World, rngs: dict):
    """A caller's table is drawn whole if it can be: while a chain does not fit, the camera
    steps back, as far as the tier's smallest card allows (then chains are left out)."""
    state = [[c if isinstance(c, Card) else Card.parse(c) for c in chain] for chain in table]
    for k in range(8):
        if not lay_out(world, state, copy.deepcopy(rngs["layout"])).dropped:
            break
        fresh = _streams(seed, t.name)
        world = make_world(t, fresh, style, size, textures_dir, step_back=1.25 ** (k + 1))
    return world, rngs["layout"]


def render_scene(seed: int, tier: str = "easy", style: str | None = None, size: tuple[int, int] | None = None,
                 textures_dir: str | Path | None = None, table=None, styles: Sequence[str] | None = None) -> Scene:
    """One photograph of a Hisss table and its truth; the same arguments give the same bytes.

    `table`, when given, is the state to draw: a list of chains, each a list of
    `Card`s or card codes in physical order.  Otherwise a state is taken from a
    simulated game.  `styles` limits the random choice of art style (default:
    the training styles, never the held-out one); `style` fixes it.
    """
    t = get_tier(tier)
    rngs = _streams(seed, tier)
    if style is None:
        pool = list(styles) if styles else list(TRAIN_STYLES)
        for s in pool:
            check_style(s)
        style = str(rngs["art"].choice(pool))
    check_style(style)
    if size is None:
        size = tuple(t.resolutions[int(rngs["camera"].integers(len(t.resolutions)))])
    size = (int(size[0]), int(size[1]))
    if not (64 <= size[0] <= 8192 and 64 <= size[1] <= 8192):
        raise ValueError(f"image size {size} out of range (64-8192 pixels a side)")
    world = make_world(t, rngs, style, size, textures_dir)
    if table is not None:
        world, layout_rng = _fit_given_table(t, seed, style, size, textures_dir, table, world, rngs)
        rngs["layout"] = layout_rng

    rs, rl = rngs["state"], rngs["layout"]
    w, h = world.card_mm
    area = abs(cv2.contourArea(world.region.astype(np.float32)))
    capacity = 0.25 * area / (w * h)
    n_distract = int(rs.integers(t.distractors[0], t.distractors[1] + 1))
    game = None
    if table is None:
        players = int(rs.integers(2, 6))
        game = pooled_game(players, int(rs.integers(POOL_SIZE)))
    for attempt in range(4):
        collected: list[list[Card]] = []
        fan = 0
        if game is None:
            state = [[c if isinstance(c, Card) else Card.parse(c) for c in chain] for chain in table]
            state_info = {"source": "given"}
        else:
            i = _pick_state(game, capacity, rs)
            state = game.frames[i]
            state_info = {"source": "simulated", "players": players, "frame": i}
            left = capacity - sum(len(c) for c in state)
            if game.piles_after and rs.uniform() < t.collected_chance:
                snakes = [s for pl in game.piles_after[i].values() for s in pl]
                rs.shuffle(snakes)
                for s in snakes[:2]:
                    if len(s) <= left * 0.6:
                        collected.append(s)
                        left -= len(s)
            if rs.uniform() < t.fan_chance:
                fan = int(rs.integers(3, 9))
        layout = lay_out(world, state, rl, collected=collected, fan=fan, distractors=n_distract)
        if not layout.dropped or game is None:
            break
        capacity *= 0.7      # a chain did not fit: show an earlier, smaller table
    hand_rng = np.random.default_rng([int(seed), list(TIERS).index(tier), 77])
    if hand_rng.uniform() < t.hand_chance:
        hand = reaching_hand(world, layout.items, hand_rng)
        if hand is not None:
            layout.items.append(hand)
    name = f"{tier}_{int(seed):08d}"
    truth, ids = truth_of(world, layout.items, f"{name}.jpg")
    frame = draw(world, layout.items, ids, rngs["sensor"])
    all_cards = truth["cards"]
    truth, label, gone = visible_truth(truth, frame)
    kept = [k for k in range(len(all_cards)) if k not in set(gone)]
    meta = {
        "seed": int(seed), "tier": tier, "style": style, "surface": world.surface, "size": list(size),
        "camera": {"tilt": world.camera.tilt, "roll": world.camera.roll, "focal": world.camera.focal,
                   "k1": world.camera.k1, "card_mm": list(world.card_mm), "aspect": world.aspect},
        "print": dict(world.print_.__dict__), "look": world.look.describe(), "state": state_info,
        "dropped_chains": layout.dropped,
        "visibility": {str(i): round(frame.visibility[k], 3) for i, k in enumerate(kept)},
        "left_out": [dict(all_cards[k], id=None, hidden=round(frame.hidden[k], 3),
                          outside=round(frame.outside[k], 3)) for k in gone],
        "hand": any(it.what == "prop" and it.lift > 0 for it in layout.items),
        "props": [it.what if it.sprite is None else f"{it.what}:{it.sprite.size_mm}" for it in layout.items if it.what in ("prop", "unknown")],
    }
    return Scene(frame.image, truth, label, frame.jpeg, meta)
