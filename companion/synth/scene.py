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

from companion.game.cards import Card
from companion.game.chains import is_complete

from . import props as P
from .camera import Camera
from .cards import RAINBOW, card_alpha, render_card
from .layout import ChainStyle, Item, Layout, Occupancy, fit_chain, fit_fan, fit_thing
from .light import Look, apply_light, apply_sensor, jpeg_round_trip, light_field, sample_look
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
    """Card faces of one printing, drawn once per size bucket (powers of sqrt 2)."""

    def __init__(self, print_: Print, aspect: float):
        self.print_ = print_
        self.aspect = aspect
        self._faces: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._rng = np.random.default_rng(print_.seed)   # unused by drawing (print given), kept for API

    def get(self, card: Card | None, short_px: float) -> np.ndarray:
        """BGRA uint8 portrait face about `short_px` wide (never smaller)."""
        bucket = int(round(2 ** (math.ceil(2 * math.log2(max(12.0, short_px))) / 2)))
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

    @property
    def size(self) -> tuple[int, int]:
        return self.camera.size


def make_world(tier: Tier, rngs: dict, style: str, size: tuple[int, int],
               textures_dir: str | Path | None = None, card_px: float | None = None) -> World:
    """Camera, deck printing, table and light of one picture (or one video)."""
    rc = rngs["camera"]
    w, h = size
    hfov = np.radians(rc.uniform(*tier.hfov_deg))
    focal = (w / 2) / math.tan(hfov / 2)
    card_w = float(rc.uniform(*CARD_SHORT_MM))
    aspect = float(rc.uniform(1.0, 1.6))
    drawn_px = float(rc.uniform(*tier.card_px))
    card_px = drawn_px if card_px is None else float(card_px)
    tilt = float(rc.uniform(*tier.tilt_deg))
    distance = focal * card_w / card_px
    cam = Camera(size, focal, tilt, float(rc.uniform(*tier.roll_deg)), distance, float(rc.uniform(*tier.k1)),
                 (w / 2 + rc.uniform(-0.01, 0.01) * w, h / 2 + rc.uniform(-0.01, 0.01) * h))
    ra = rngs["art"]
    print_ = sample_print(style, ra)
    faces = FaceCache(print_, aspect)

    rs = rngs["surface"]
    photos = list_textures(textures_dir)
    surface = str(rs.choice(list(tier.surfaces) + (["photo"] * len(tier.surfaces) if photos else [])))
    cover = cam.visible_table(inset_px=-0.04 * max(size))
    lo, hi = cover.min(0), cover.max(0)
    near = max(cam.scale_at(tuple(p)) for p in cover[:: max(1, len(cover) // 12)])
    area = float(np.prod(hi - lo))
    ppm = min(near, math.sqrt(1.0 * w * h / area))
    tw, th = max(16, int((hi[0] - lo[0]) * ppm)), max(16, int((hi[1] - lo[1]) * ppm))
    photo = photos[int(rs.integers(len(photos)))] if surface == "photo" else None
    tex = make_surface(surface if surface != "photo" else "felt", rs, tw, th, ppm, photo)
    # texture pixel (u, v) centre -> table mm
    A = np.array([[1 / ppm, 0, lo[0] + 0.5 / ppm], [0, 1 / ppm, lo[1] + 0.5 / ppm], [0, 0, 1]])
    background = cv2.warpPerspective(tex, cam.H @ A, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    region = cam.visible_table(inset_px=3.0 + 0.01 * min(size))
    return World(tier, cam, style, print_, aspect, (card_w, card_w * aspect), faces,
                 background.astype(np.float32), sample_look(tier, rngs["light"]), surface, region,
                 sprite_ppm=min(near, 12.0) * 1.1)


# --------------------------------------------------------------------------- drawing

@dataclass
class Frame:
    image: np.ndarray
    label: np.ndarray
    jpeg: bytes
    visibility: dict[int, float]


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
    gloss = np.zeros((H, W), np.float32)
    card_gloss = GLOSS[world.style]
    light_dir = np.array([math.cos(look.gradient[1]), math.sin(look.gradient[1])])
    for item in items:
        src, gl = _source(world, item)
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
        a = warped[..., 3].astype(np.float32) * (1 / 255.0)
        roi = canvas[cy0:cy1, cx0:cx1]
        # its shadow first: offset away from the light, softer the higher it stands
        shadow = _soft_shadow(a, offset, sigma)
        depth = 0.35 if height < 1 else 0.5
        roi *= (1.0 - depth * shadow)[..., None]
        colour = warped[..., :3].astype(np.float32)
        if item.shade != 1.0:
            colour *= item.shade
        roi += (colour - roi) * a[..., None]
        gl_roi = gloss[cy0:cy1, cx0:cx1]
        gl_roi += ((card_gloss if gl is None else gl) - gl_roi) * a
        tid = truth_ids.get(id(item))
        label[cy0:cy1, cx0:cx1][a > 0.5] = 0 if tid is None else tid + 1

    canvas = cam.distort_image(canvas)
    label = cam.distort_image(label, cv2.INTER_NEAREST)
    gloss = cam.distort_image(gloss)
    if shake != (0.0, 0.0):
        S = np.float32([[1, 0, shake[0]], [0, 1, shake[1]]])
        canvas = cv2.warpAffine(canvas, S, (W, H), borderMode=cv2.BORDER_REFLECT)
        label = cv2.warpAffine(label, S, (W, H), flags=cv2.INTER_NEAREST)
        gloss = cv2.warpAffine(gloss, S, (W, H))
    lit = apply_light(canvas, look, light_field(look, (W, H)), gloss)
    img = apply_sensor(lit, look, rng)
    data = b""
    if jpeg:
        img, data = jpeg_round_trip(img, look.jpeg_quality)
    counts = np.bincount(label.ravel(), minlength=len(truth_ids) + 1)
    vis = {}
    for item in items:
        tid = truth_ids.get(id(item))
        if tid is not None:
            quad = cam.project(item.pose.corners()) + np.array(shake)
            # the rounded corners are not card: (4 - pi) r^2 of the rectangle, r = 0.07 short side
            rounded = (4 - math.pi) * (0.07 * min(item.pose.w, item.pose.h)) ** 2 / (item.pose.w * item.pose.h)
            area = abs(cv2.contourArea(quad.astype(np.float32))) * (1 - rounded)
            vis[tid] = float(min(1.0, counts[tid + 1] / max(area, 1.0)))
    return Frame(img, label, data, vis)


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


def _source(world: World, item: Item) -> tuple[np.ndarray, float | None]:
    """The BGRA picture to warp for an item, and its gloss (None = the deck's)."""
    if item.what in ("card", "back"):
        px = world.camera.scale_at(tuple(item.pose.centre)) * item.pose.w * 1.15
        return world.faces.get(item.card, px), None
    return item.sprite.bgra(), (GLOSS_FOREIGN if item.what == "unknown" else 0.25)


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
    occ = Occupancy(world.region, cell=w / 6)
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
    """A caller's table is drawn whole: while a chain does not fit, the camera steps back."""
    state = [[c if isinstance(c, Card) else Card.parse(c) for c in chain] for chain in table]
    for _ in range(8):
        if not lay_out(world, state, copy.deepcopy(rngs["layout"])).dropped:
            break
        px = world.camera.focal * world.card_mm[0] / world.camera.distance * 0.8
        fresh = _streams(seed, t.name)
        world = make_world(t, fresh, style, size, textures_dir, card_px=px)
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
    name = f"{tier}_{int(seed):08d}"
    truth, ids = truth_of(world, layout.items, f"{name}.jpg")
    frame = draw(world, layout.items, ids, rngs["sensor"])
    meta = {
        "seed": int(seed), "tier": tier, "style": style, "surface": world.surface, "size": list(size),
        "camera": {"tilt": world.camera.tilt, "roll": world.camera.roll, "focal": world.camera.focal,
                   "k1": world.camera.k1, "card_mm": list(world.card_mm), "aspect": world.aspect},
        "print": dict(world.print_.__dict__), "look": world.look.describe(), "state": state_info,
        "dropped_chains": layout.dropped,
        "visibility": {str(k): round(v, 3) for k, v in frame.visibility.items()},
        "props": [it.what if it.sprite is None else f"{it.what}:{it.sprite.size_mm}" for it in layout.items if it.what in ("prop", "unknown")],
    }
    return Scene(frame.image, truth, frame.label, frame.jpeg, meta)
