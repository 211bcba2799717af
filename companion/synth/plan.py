"""Planning a filmed game without drawing it: the room, the table over the game, the shots.

`plan_game` lays the whole game first and checks that every settled table
fits the picture (cards inside it, at least `GAME_MIN_PX`, not lying on each
other); a plan that fails is laid again with another seed and, after a few
tries, more room.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from companion.game.cards import Card
from companion.game.record import PLAYER_COUNTS

from .director import Director, snapshot
from .draw import draw
from .film import TableFilm
from .layout import Item, Occupancy
from .states import PLAYER_NAMES
from .styles import TRAIN_STYLES, check_style
from .tiers import get_tier
from .truth import shot_truth
from .world import World, make_world, short_sides

GAME_MIN_PX = 40.0    # a filmed game's cards keep at least this short side where the picture allows
PLAN_ATTEMPTS, SAME_ROOM, ROOM_STEP = 16, 4, 1.1   # a failed layout is laid again; after SAME_ROOM tries with more room
OVERLAP_SHARE = 0.03  # neighbours hinged at a corner overlap less than this share of a card
EDGE_MARGIN_PX = 2.0  # settled cards stay this far inside the picture (the camera shake is < 2 px)


def _completing_table(before: list[list[Card]], move: dict, after: list[list[Card]]):
    """The table with the completing card laid and the snake not yet taken (None if not found)."""
    from companion.game.chains import is_complete, table_multiset
    from companion.game.rules import legal_placements
    card = Card.parse(move["card"])
    want = table_multiset(after)
    for placement in legal_placements(before, card):
        if not placement.completes:
            continue
        rest = [list(c) for c in placement.table if not is_complete(c)]
        if table_multiset(rest) == want:
            return [list(c) for c in placement.table]
    return None


@dataclass
class GamePlan:
    """A game planned shot by shot (world, cards, hands), before any frame is drawn."""

    world: World
    director: Director
    sim: object                  # the referee simulator's game
    frames: list                 # the record frames filmed
    names: list[str]
    style: str
    starts: dict[int, int]       # record frame -> first shot of its turn
    rngs: dict

    def still(self, i: int, sensor: np.random.Generator) -> tuple[bytes, dict]:
        """Shot `i` drawn on its own: its JPEG and its truth (empty between settled tables).
        For a look at a few frames of a game without filming the rest: the film's exposure drift
        and camera shake, which accumulate from the first frame, are left out."""
        truth, ids = shot_truth(self.world, self.director.shots[i], f"frame_{i:06d}.jpg")
        return draw(self.world, self.director.shots[i].items, ids, sensor).jpeg, truth

    def settled_cards(self):
        """(shot index, item) of every Hisss card on every settled table."""
        for i, shot in enumerate(self.director.shots):
            if shot.chains is not None:
                for it in shot.items:
                    if it.what in ("card", "back"):
                        yield i, it


def plan_game(players: int | list[str], seed: int, tier: str = "medium", style: str | None = None,
              fps: int = 10, size: tuple[int, int] | None = (1280, 720), illegal_rate: float = 0.0,
              max_frames: int | None = None, draw_pile: bool = False) -> GamePlan:
    """Plan a filmed game without drawing it (arguments as `render_game`)."""
    from companion.game.simulate import simulate_game

    t = get_tier(tier)
    if not 1 <= int(fps) <= 60:
        raise ValueError(f"fps must be 1-60, got {fps}")
    names = [PLAYER_NAMES[i] for i in range(players)] if isinstance(players, int) else list(players)
    if len(names) not in PLAYER_COUNTS:
        raise ValueError(f"a game has 2-5 players, got {len(names)}")
    size = tuple(size or (1280, 720))
    sim = simulate_game(names, int(seed), illegal_rate=float(illegal_rate))
    frames = sim.frames if max_frames is None else sim.frames[:max(1, int(max_frames))]
    most = max(sum(len(c) for c in tab) for tab in frames) + (6 if draw_pile else 0) + 2
    plan = None
    for attempt in range(PLAN_ATTEMPTS):
        # a table that did not stay in the picture is laid again, with more room
        plan = _plan_once(t, names, int(seed), style, int(fps), size, sim, frames, draw_pile,
                          most * ROOM_STEP ** max(0, attempt - SAME_ROOM + 1), attempt)
        if _settled_fit(plan):
            return plan
    raise RuntimeError(f"game seed {seed}: no layout kept every settled card in the picture")


def _plan_once(t, names, seed, style, fps, size, sim, frames, draw_pile, room_cards, attempt) -> GamePlan:
    streams = np.random.SeedSequence([seed, 7]).spawn(8)
    rngs = dict(zip(("camera", "art", "surface", "light", "state", "layout", "sensor", "hands"),
                    (np.random.default_rng(s) for s in streams)))
    if attempt:
        rngs["layout"] = np.random.default_rng([seed, 7, attempt])
    style = check_style(style) if style else str(rngs["art"].choice(list(TRAIN_STYLES)))
    world = make_world(t, rngs, style, size, game_cards=math.ceil(room_cards), game_min_px=GAME_MIN_PX)

    film = TableFilm(world, rngs["layout"])
    director = Director(world, names, int(fps), rngs["hands"])
    left = [sim.deck.size - sum(len(c) for c in tab) - sum(len(sn) for pl in sim.piles_after[k].values() for sn in pl)
            for k, tab in enumerate(frames)]
    if draw_pile:
        from .layout import fit_fan
        pile_rng = np.random.default_rng([int(seed), 99])
        w, h = world.card_mm
        poses = fit_fan(Occupancy(world.region, cell=w / 6), 6, w, h, pile_rng) or []
        director.pile = [Item(pose, None, "back", shade=float(np.exp(pile_rng.normal(0, 0.03)))) for pose in poses]
        film.fixed = [pose.corners() for pose in poses]
        director.pile_count = min(len(poses), left[0])
    moves_by_frame: dict[int, list[dict]] = {}
    for m in sim.truth["moves"]:
        moves_by_frame.setdefault(m["frame"], []).append(m)
    starts: dict[int, int] = {}
    film.apply([list(c) for c in frames[0]])
    director.settle(film, 0)
    for k in range(1, len(frames)):
        starts[k] = len(director.shots)
        director.pile_count = min(len(director.pile), max(0, left[k]))     # this turn's card is drawn
        moves = moves_by_frame.get(k, [])
        placer = next((m["player"] for m in moves if m.get("card")), None)
        collector = next((m["collected"]["player"] for m in moves if m.get("collected")), None)
        player = placer or collector or names[(k - 1) % len(names)]
        completing = next((m for m in moves if m.get("card") and m.get("action") == "complete"), None)
        table_before = [[it.card for it in ch] for ch in film.chains]
        middle = _completing_table(table_before, completing, frames[k]) if completing else None
        before = snapshot(film)
        change = film.apply(middle if middle is not None else [list(c) for c in frames[k]],
                            lays=any(m.get("card") for m in moves))
        after = snapshot(film)
        if change.removed:       # taken late, or (illegally) removed: before the next card
            gone_ids = {id(it) for ch in change.removed for it in ch}
            director.take(collector or player, [v for key, v in before.items() if key not in gone_ids],
                          [v for key, v in before.items() if key in gone_ids])
            before = {key: v for key, v in before.items() if key not in gone_ids}
        laid = None
        if change.placed or change.moves:
            laid = director.lay(player, change, before, after, stay=middle is not None)
        if middle is not None:
            done = film.apply([list(c) for c in frames[k]])
            gone_ids = {id(it) for ch in done.removed for it in ch}
            director.take(collector or player, [v for key, v in after.items() if key not in gone_ids],
                          [after[key] for key in after if key in gone_ids], laid=laid)
        director.settle(film, k)

    return GamePlan(world, director, sim, frames, names, style, starts, rngs)


def _settled_fit(plan: GamePlan) -> bool:
    """Every card of every settled table lies inside the picture (and in the size range kept)."""
    items = [it for _, it in plan.settled_cards()]
    if not items:
        return True
    cam, (W, H) = plan.world.camera, plan.world.size
    polys = np.array([it.pose.corners() for it in items])
    q = cam.project(polys.reshape(-1, 2))
    m = EDGE_MARGIN_PX
    if not ((q[:, 0] >= m) & (q[:, 0] <= W - 1 - m) & (q[:, 1] >= m) & (q[:, 1] <= H - 1 - m)).all():
        return False
    if plan.world.card_range is not None:
        lo, hi = plan.world.card_range
        sides = short_sides(cam, polys)
        if not ((sides >= lo) & (sides <= hi)).all():
            return False
    return not _any_overlap(plan)


def _any_overlap(plan: GamePlan) -> bool:
    """Whether two cards of a settled table lie on each other (beyond the touch of neighbours)."""
    seen = set()
    w, h = plan.world.card_mm
    for shot in plan.director.shots:
        if shot.chains is None or id(shot.chains) in seen:
            continue
        seen.add(id(shot.chains))
        cards = [it for ch in shot.chains for it in ch]
        quads = [it.pose.corners().astype(np.float32) for it in cards]
        centres = np.array([it.pose.centre for it in cards]).reshape(-1, 2)
        for i in range(len(cards)):
            near = np.nonzero(np.linalg.norm(centres[i + 1:] - centres[i], axis=1) < h * 1.3)[0] + i + 1
            for j in near:
                area, _ = cv2.intersectConvexConvex(quads[i], quads[j])
                if area > OVERLAP_SHARE * w * h:
                    return True
    return False
