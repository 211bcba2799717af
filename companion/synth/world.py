"""The world of one picture or one video: camera, deck printing, table and light.

`make_world` chooses the camera so that cards keep the tier's size range (a
still) or so that a game's fullest table fits with cards of a minimum size (a
filmed game), makes the table surface and draws the light (`Look`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .camera import Camera
from .faces import FaceCache
from .light import Look, sample_look
from .styles import Print, sample_print
from .surfaces import list_textures, make_surface
from .tiers import Tier

CARD_SHORT_MM = (50.0, 64.0)     # a card's short side; the long side follows the deck's aspect


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


def short_sides(cam: Camera, polys: np.ndarray) -> np.ndarray:
    """The shortest edge (px) of each card outline (table corners, n x 4 x 2) in the picture."""
    q = cam.project(polys.reshape(-1, 2)).reshape(-1, 4, 2)
    return np.linalg.norm(q - np.roll(q, -1, axis=1), axis=2).min(1)
