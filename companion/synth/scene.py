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

from . import props as P
from .draw import draw
from .layout import ChainStyle, Item, Layout, Occupancy, Pose, fit_chain, fit_fan, fit_thing
from .states import POOL_SIZE, Game, pooled_game
from .styles import TRAIN_STYLES, check_style
from .tiers import TIERS, Tier, get_tier
from .truth import truth_of, visibility_of, visible_truth
from .world import World, make_world, short_sides


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
            fan: int = 0, distractors: int = 0, foreign: int = 0) -> Layout:
    """Place a table state (chains in physical order) and the extras on the visible table;
    `foreign` other games' cards more than the distractors draw, where they fit."""
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
    # asked-for foreign cards before the game's chains: a full table would leave them no room
    # (a chain that no longer fits is dropped, and render_scene shows a smaller table)
    for _ in range(foreign):
        _, sprite = P.foreign_card(rng, world.sprite_ppm)
        pose = fit_thing(occ, sprite.size_mm, rng, grow=0.3 * w)
        if pose is not None:
            out.items.append(Item(pose, None, "unknown", sprite=sprite))
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
                 textures_dir: str | Path | None = None, table=None, styles: Sequence[str] | None = None,
                 foreign: int = 0) -> Scene:
    """One photograph of a Hisss table and its truth; the same arguments give the same bytes.

    `table`, when given, is the state to draw: a list of chains, each a list of
    `Card`s or card codes in physical order.  Otherwise a state is taken from a
    simulated game.  `styles` limits the random choice of art style (default:
    the training styles, never the held-out one); `style` fixes it.  `foreign`
    lays that many other games' cards more than the tier's distractors (for
    teaching and tuning the `unknown` kind; 0 leaves the scene's bytes as they were).
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
        layout = lay_out(world, state, rl, collected=collected, fan=fan, distractors=n_distract, foreign=foreign)
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
    meta = {
        "seed": int(seed), "tier": tier, "style": style, "surface": world.surface, "size": list(size),
        "camera": {"tilt": world.camera.tilt, "roll": world.camera.roll, "focal": world.camera.focal,
                   "k1": world.camera.k1, "card_mm": list(world.card_mm), "aspect": world.aspect},
        "print": dict(world.print_.__dict__), "look": world.look.describe(), "state": state_info,
        "dropped_chains": layout.dropped,
        "visibility": visibility_of(frame, len(all_cards), gone),
        "left_out": [dict(all_cards[k], id=None, hidden=round(frame.hidden[k], 3),
                          outside=round(frame.outside[k], 3)) for k in gone],
        "hand": any(it.what == "prop" and it.lift > 0 for it in layout.items),
        "props": [it.what if it.sprite is None else f"{it.what}:{it.sprite.size_mm}" for it in layout.items if it.what in ("prop", "unknown")],
    }
    return Scene(frame.image, truth, label, frame.jpeg, meta)
