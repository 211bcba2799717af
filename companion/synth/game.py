"""A whole simulated game filmed over the table: frames, a video and the truth.

The referee's simulator (`companion.game.simulate`) decides what happens; this
module only films it.  Cards keep their place on the table from one turn to
the next: a new card is hinged onto the end it extends, a join nudges the
second chain over to meet it, a collected snake is carried away by a hand.

For each change of the table: the player's hand reaches in from their seat
holding the card (its shadow on the table), lays it, withdraws; a completed
snake stays a moment, then a hand takes it.  Between changes the table lies
still for a while: those *settled* frames carry analyze-format truth.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.game.cards import Card, Kind

from . import props as P
from .layout import Item, Occupancy, Pose, hinge
from .scene import World, draw, make_world, short_sides, truth_of
from .states import PLAYER_NAMES
from .styles import TRAIN_STYLES, check_style
from .tiers import get_tier

# How long each part of a turn takes, in seconds.
REACH, PLACE, WITHDRAW, SETTLE, STAY = 0.5, 0.2, 0.4, 0.8, 0.4
GAME_MIN_PX = 40.0    # a filmed game's cards keep at least this short side where the picture allows
PLAN_ATTEMPTS, SAME_ROOM, ROOM_STEP = 16, 4, 1.1   # a failed layout is laid again; after SAME_ROOM tries with more room
OVERLAP_SHARE = 0.03  # neighbours hinged at a corner overlap less than this share of a card
EDGE_MARGIN_PX = 2.0  # settled cards stay this far inside the picture (the camera shake is < 2 px)
VIDEO_NAME = "game.avi"          # Motion-JPEG in AVI: this OpenCV build writes and reads it back


def _ease(t: float) -> float:
    return t * t * (3 - 2 * t)


def _flip(item: Item) -> None:
    """Read a card from its other end: a middle's colours swap, its face turns 180 degrees."""
    if item.card is not None and item.card.kind is Kind.MIDDLE:
        item.card = item.card.flipped()
        item.pose = Pose(item.pose.centre, -item.pose.up, item.pose.w, item.pose.h)


def outer_edge(chain: list[Item], at_end: bool) -> tuple[np.ndarray, np.ndarray]:
    """Midpoint and outward direction of a chain's free edge at one end."""
    item = chain[-1] if at_end else chain[0]
    p, card, alone = item.pose, item.card, len(chain) == 1
    if card.kind.is_end_piece:
        return (p.top(), -p.up) if alone else (p.bottom(), p.up)
    return (p.bottom(), p.up) if at_end else (p.top(), -p.up)


def _read_back(cards: list[Card]) -> list[Card]:
    """The same chain read from its other end."""
    return [c.flipped() for c in reversed(cards)]


def _rigid(items: list[Item], src_mid, src_dir, dst_mid, dst_dir) -> list[Pose]:
    """Poses of items moved so that (src_mid, src_dir) lands on (dst_mid, dst_dir)."""
    turn = math.atan2(dst_dir[1], dst_dir[0]) - math.atan2(src_dir[1], src_dir[0])
    return [it.pose.moved(dst_mid - src_mid, turn, about=src_mid) for it in items]


@dataclass
class Change:
    """What one diff of the table does: cards laid, chains moved, chains taken away."""

    placed: list[Item] = field(default_factory=list)
    moves: list[tuple[list[Item], list[Pose], list[Pose]]] = field(default_factory=list)
    removed: list[list[Item]] = field(default_factory=list)


class TableFilm:
    """The cards on the table, kept in place across the game's frames."""

    def __init__(self, world: World, rng: np.random.Generator):
        self.world = world
        self.rng = rng
        self.chains: list[list[Item]] = []
        self.fixed: list[np.ndarray] = []        # footprints the chains keep clear of (the draw pile)
        w = world.card_mm[0]
        self.max_turn = math.radians(world.tier.neighbour_angle_deg)
        self.gap = world.tier.gap_frac
        self.w = w
        self.too_long = 10 ** 6          # the shortest chain found not to fit the picture at all

    # -- matching old chains into a new table
    def _segments(self, chain: list[Card], used: list[set[int]]):
        """Split a new chain into runs of old cards (Items, read in the new direction) and new cards.

        A whole old chain is preferred; failing that, a run of two or more cards
        out of an old chain (a card was taken out of it against the rules).
        """
        out, i = [], 0
        while i < len(chain):
            best = None                                  # (length, chain k, reversed, start)
            for k in sorted(range(len(self.chains)), key=lambda k: -len(self.chains[k])):
                if used[k]:
                    continue
                old = [it.card for it in self.chains[k]]
                n = len(old)
                if chain[i:i + n] == old:
                    best = (n, k, False, 0)
                elif chain[i:i + n] == _read_back(old):
                    best = (n, k, True, 0)
                if best:
                    break
            if best is None:
                for k, items in enumerate(self.chains):
                    n = len(items)
                    for rev in (False, True):
                        seq = _read_back([it.card for it in items]) if rev else [it.card for it in items]
                        for j in range(n):
                            run = 0
                            while (i + run < len(chain) and j + run < n and chain[i + run] == seq[j + run]
                                   and (n - 1 - j - run if rev else j + run) not in used[k]):
                                run += 1
                            if run >= 2 and (best is None or run > best[0]):
                                best = (run, k, rev, j)
            if best is None:
                out.append(("new", chain[i]))
                i += 1
                continue
            run, k, rev, j = best
            n = len(self.chains[k])
            picked = [n - 1 - (j + r) if rev else j + r for r in range(run)]
            used[k].update(picked)
            items = [self.chains[k][x] for x in picked]
            if rev:
                for it in items:
                    _flip(it)
            out.append(("old", items))
            i += run
        return out

    def apply(self, table: list[list[Card]]) -> Change:
        """Rearrange the film's chains into `table`; return what moved, for animating."""
        change = Change()
        start_pose = {id(it): it.pose for ch in self.chains for it in ch}
        used: list[set[int]] = [set() for _ in self.chains]
        plans = [self._segments(list(chain), used) for chain in table]
        change.removed = [[it for x, it in enumerate(ch) if x not in used[k]] for k, ch in enumerate(self.chains)]
        change.removed = [r for r in change.removed if r]
        gone = {id(it) for r in change.removed for it in r}
        new_chains: list[list[Item]] = []
        for chain, plan in zip(table, plans):
            if not any(seg[0] == "old" for seg in plan):
                items = self._fresh(list(chain), new_chains, gone)
                change.placed.extend(items)
                new_chains.append(items)
                continue
            a = max(range(len(plan)), key=lambda j: len(plan[j][1]) if plan[j][0] == "old" else -1)
            items = list(plan[a][1])
            for seg in plan[a + 1:]:
                items = self._attach(items, seg, change, at_end=True, others=new_chains, gone=gone)
            for seg in reversed(plan[:a]):
                items = self._attach(items, seg, change, at_end=False, others=new_chains, gone=gone)
            self._keep_in_view(items, new_chains, gone)
            new_chains.append(items)
        # what slid, from where it lay before this change to where it lies now
        placed = {id(it) for it in change.placed}
        change.moves = []
        for ch in new_chains:
            slid = [it for it in ch if id(it) not in placed and not _same_place(start_pose[id(it)], it.pose)]
            if slid:
                change.moves.append((slid, [start_pose[id(it)] for it in slid], [it.pose for it in slid]))
        # the contract order: each chain's items in the order of the table given
        self.chains = new_chains
        for chain, items in zip(table, self.chains):
            for it, card in zip(items, chain):
                it.card = card
        return change

    def _turns(self):
        yield float(self.rng.uniform(-0.6, 0.6) * self.max_turn)
        for _ in range(10):
            yield float(self.rng.uniform(-1, 1) * self.max_turn)

    def _occupancy(self, skip: list[Item], others, gone) -> Occupancy:
        occ = Occupancy(self.world.region, cell=self.w / 6)
        skip_ids = {id(it) for it in skip}
        polys = [it.pose.corners() for ch in self.chains for it in ch
                 if id(it) not in skip_ids and id(it) not in gone]
        polys += [it.pose.corners() for ch in others for it in ch if id(it) not in skip_ids]
        polys += self.fixed
        if polys:
            occ.take(polys, grow=0.2 * self.w)
        return occ

    def _attach(self, items, seg, change: Change, at_end: bool, others, gone) -> list[Item]:
        mid, d = outer_edge(items, at_end)
        occ = self._occupancy(items[-2:] if at_end else items[:2], others, gone)
        w, h = self.world.card_mm
        best, best_score = None, np.inf
        centre_of_view = self.world.region.mean(0)
        for turn in self._turns():
            gap = float(self.rng.uniform(*self.gap)) * w
            slip = float(self.rng.uniform(-1, 1) * self.world.tier.lateral_frac) * w
            in_mid, d2 = hinge(mid, d, turn, w, gap, slip)
            probe = Pose(in_mid + d2 * h / 2, d2, w, h)
            if occ.free([probe.corners()], shrink=0.1 * w):
                best = (in_mid, d2)
                break
            # nowhere free: curl back towards the middle of the picture, as players do at the edge
            score = float(np.linalg.norm(probe.centre - centre_of_view))
            if score < best_score:
                best, best_score = (in_mid, d2), score
        in_mid, d2 = best
        if seg[0] == "new":
            card = seg[1]
            centre = in_mid + d2 * h / 2
            if at_end:
                up = d2
            else:
                up = d2 if card.kind.is_end_piece else -d2
            item = Item(Pose(centre, up, w, h), card, "card", shade=float(np.exp(self.rng.normal(0, 0.03))))
            change.placed.append(item)
            return items + [item] if at_end else [item] + items
        # an old chain is nudged over to meet this end
        moving = seg[1]
        src_mid, src_dir = outer_edge(moving, at_end=not at_end)
        after = _rigid(moving, src_mid, src_dir, in_mid, -d2)
        for it, pose in zip(moving, after):
            it.pose = pose
        return items + moving if at_end else moving + items

    def _keep_in_view(self, items: list[Item], others, gone) -> None:
        """A chain that now runs off the picture or over another is slid back, whole."""
        occ = self._occupancy(items, others, gone)
        w = self.w
        polys = [it.pose.corners() for it in items]
        if occ.free(polys, shrink=0.1 * w):
            return
        centre = np.mean([it.pose.centre for it in items], 0)
        # the smallest slide that frees it, as a player nudges a snake back from the edge
        for r in np.arange(1, 13) * (w / 3):
            for a in np.linspace(0, 2 * np.pi, 16, endpoint=False):
                shift = r * np.array([np.cos(a), np.sin(a)])
                if occ.free([it.pose.corners() + shift for it in items], shrink=0.1 * w):
                    for it in items:
                        it.pose = it.pose.moved(shift)
                    return
        # else a free spot anywhere; failing that, at least a spot inside the picture
        for occ in (occ, Occupancy(self.world.region, cell=w / 6)):
            for _ in range(30):
                target = occ.random_point(self.rng)
                if target is None:
                    break
                turn = float(self.rng.uniform(-np.pi, np.pi))
                poses = [it.pose.moved(target - centre, turn, about=centre) for it in items]
                if occ.free([p.corners() for p in poses], shrink=0.1 * w):
                    for it, p in zip(items, poses):
                        it.pose = p
                    return
        # too long to fit as it lies: the players lay it again, bent round, into the picture
        poses = self._lay_across([occ, Occupancy(self.world.region, cell=w / 6)], [it.card for it in items])
        if poses is not None:
            for it, p in zip(items, poses):
                it.pose = p

    def _lay_across(self, occs: list[Occupancy], cards: list[Card]) -> list[Pose] | None:
        """A long chain laid through the middle of the free table, trying every heading and bend."""
        from .layout import ChainStyle, place_chain_cards
        w, h = self.world.card_mm
        centre = self.world.region.mean(0)
        if len(cards) >= self.too_long:
            return None
        spots = [centre] + [centre + w * 2 * np.array([math.cos(a), math.sin(a)]) for a in np.arange(4) * math.pi / 2]
        m = self.max_turn
        # the tier's own bends first; then, for a snake longer than the picture, a U as players bend
        # one round (per-card turns up to the 30 degrees people allow between neighbours)
        bends = [(m, c * m) for c in (0.0, 0.6, -0.6, 1.0, -1.0)]
        for total in (math.pi * 0.8, math.pi, math.pi * 1.25):
            turn = min(math.radians(30), total / max(1, len(cards) - 1))
            bends += [(max(m, turn), turn), (max(m, turn), -turn)]
        for occ in occs:
            for top, curve in bends:
                style = ChainStyle(top, curve, self.gap, 0.0)
                for heading in np.arange(12) * math.pi / 6:
                    poses = place_chain_cards(cards, w, h, style, self.rng, None, float(heading))
                    mid = np.mean([p.centre for p in poses], 0)
                    for spot in spots:
                        moved = [p.moved(spot - mid) for p in poses]
                        polys = [p.corners() for p in moved]
                        if occ.free(polys, shrink=0.1 * w) and occ.disjoint(polys, shrink=0.1 * w):
                            return moved
        self.too_long = len(cards)        # not even alone on the table: longer ones are not tried again
        return None

    def _fresh(self, chain: list[Card], others, gone) -> list[Item]:
        from .layout import ChainStyle, fit_chain
        w, h = self.world.card_mm
        occ = self._occupancy([], others, gone)
        style = ChainStyle(self.max_turn, 0.0, self.gap, self.world.tier.lateral_frac)
        poses = fit_chain(occ, chain, w, h, style, self.rng)
        if poses is None:        # no free place: at least inside the picture
            poses = fit_chain(Occupancy(self.world.region, cell=w / 6), chain, w, h, style, self.rng)
        if poses is None:        # a long chain: through the middle, at whatever heading and bend fits
            poses = self._lay_across([occ, Occupancy(self.world.region, cell=w / 6)], chain)
        if poses is None:        # longer than the picture: the plan is laid again with more room
            from .layout import place_chain_cards
            c = self.world.region.mean(0)
            poses = place_chain_cards(chain, w, h, style, self.rng, c, float(self.rng.uniform(-np.pi, np.pi)))
        return [Item(p, c, "card", shade=float(np.exp(self.rng.normal(0, 0.03)))) for c, p in zip(chain, poses)]

    def items(self) -> list[Item]:
        return [it for ch in self.chains for it in ch]


@dataclass
class Shot:
    """One video frame to draw: item copies frozen at the moment of the shot."""

    items: list[Item]
    chains: list[list[Item]] | None = None   # settled shots: the table's chains, in record order
    settled_frame: int | None = None         # the record frame this still table shows


Snapshot = dict  # id(original item) -> frozen copy, in table order


def snapshot(film: TableFilm) -> Snapshot:
    return {id(it): _at(it, it.pose) for ch in film.chains for it in ch}


class Director:
    """Turns the table's changes into shots: hands, carried cards, nudges, pauses."""

    def __init__(self, world: World, players: list[str], fps: int, rng: np.random.Generator):
        self.world, self.fps, self.rng = world, fps, rng
        self.shots: list[Shot] = []
        centre = world.region.mean(0)
        radius = float(np.max(np.linalg.norm(world.region - centre, axis=1)))
        base = float(rng.uniform(0, 2 * np.pi))
        self.seats = {p: centre + 1.6 * radius * np.array([math.cos(base + 2 * math.pi * i / len(players)),
                                                            math.sin(base + 2 * math.pi * i / len(players))])
                      for i, p in enumerate(players)}
        self.reach_len = 2.6 * radius
        self.hands = {p: P.hand(rng, world.sprite_ppm, length_mm=self.reach_len) for p in players}
        self.pile: list[Item] = []       # the face-down draw pile, spread in a fan (optional)
        self.pile_count = 0

    def _shot(self, items: list[Item], chains=None, settled: int | None = None) -> None:
        self.shots.append(Shot(self.pile[:self.pile_count] + list(items), chains, settled))

    def n(self, seconds: float) -> int:
        return max(1, int(round(seconds * self.fps)))

    def _hand(self, player: str, tip: np.ndarray) -> Item:
        d = tip - self.seats[player]
        up = d / max(1e-9, np.linalg.norm(d))
        sprite = self.hands[player]
        pose = Pose(tip - up * (sprite.size_mm[1] / 2 - 8.0), up, sprite.size_mm[0], sprite.size_mm[1])
        return Item(pose, None, "prop", sprite=sprite)

    def _off(self, player: str, target: np.ndarray) -> np.ndarray:
        d = target - self.seats[player]
        return target - d / max(1e-9, np.linalg.norm(d)) * self.reach_len * 0.55

    def settle(self, film: TableFilm, record_frame: int) -> None:
        chains = [[_at(it, it.pose) for it in ch] for ch in film.chains]
        items = [it for ch in chains for it in ch]
        for _ in range(self.n(SETTLE)):
            self._shot(items, chains, record_frame)

    def lay(self, player: str, change: Change, before: Snapshot, after: Snapshot) -> None:
        """Reach in holding the (first) new card, nudging moved chains meanwhile; lay; withdraw."""
        placed = {id(it) for it in change.placed}
        moved = {id(it): (b, a) for items, bs, as_ in change.moves for it, b, a in zip(items, bs, as_)}
        carried = [after[id(it)] for it in change.placed[:1]]
        target = carried[0].pose.centre if carried else np.mean([it.pose.centre for it in after.values()], 0)
        start = self._off(player, target)
        nr = self.n(REACH)
        for f in range(nr):
            t = _ease((f + 1) / nr)
            tip = start + (target - start) * t
            items = []
            for key, it in after.items():
                if key in placed:
                    continue
                if key in moved:
                    b, a = moved[key]
                    items.append(_at(it, _lerp_pose(b, a, _ease(min(1.0, (f + 1) / max(1, nr - 1))))))
                else:
                    items.append(it)
            items += [_at(c, c.pose.moved(tip - target), lift=25.0 * (1 - t) + 3.0) for c in carried]
            self._shot(items + [self._hand(player, tip)])
        table = list(after.values())
        for _ in range(self.n(PLACE)):
            self._shot(table + [self._hand(player, target)])
        self.withdraw(player, target, table)

    def withdraw(self, player: str, target: np.ndarray, table: list[Item], carrying: list[Item] = ()) -> None:
        end = self._off(player, target)
        nw = self.n(WITHDRAW)
        for f in range(nw):
            tip = target + (end - target) * _ease((f + 1) / nw)
            items = list(table) + [_at(c, c.pose.moved(tip - target), lift=10.0) for c in carrying]
            self._shot(items + [self._hand(player, tip)])

    def take(self, player: str, table: list[Item], gone: list[Item], stay: bool) -> None:
        """A hand takes cards away (a completed snake after a moment on the table)."""
        if not gone:
            return
        target = np.mean([it.pose.centre for it in gone], 0)
        if stay:
            # meanwhile the hand hovers part-way in: never a still, hand-free table
            hover = self._off(player, target) * 0.4 + target * 0.6
            for _ in range(self.n(STAY)):
                self._shot(table + gone + [self._hand(player, hover)])
        start = self._off(player, target)
        nr = self.n(REACH)
        for f in range(nr):
            tip = start + (target - start) * _ease((f + 1) / nr)
            self._shot(table + gone + [self._hand(player, tip)])
        self.withdraw(player, target, table, carrying=gone)


def _at(item: Item, pose: Pose, lift: float = 0.0) -> Item:
    return Item(pose, item.card, item.what, item.sprite, item.chain, item.pos, item.complete, item.z, item.shade, lift)


def _same_place(a: Pose, b: Pose) -> bool:
    """The same rectangle on the table (a face read from its other end has -up)."""
    return bool(np.allclose(a.centre, b.centre, atol=1e-6) and abs(abs(float(np.dot(a.up, b.up))) - 1) < 1e-9)


def _lerp_pose(a: Pose, b: Pose, s: float) -> Pose:
    if float(np.dot(a.up, b.up)) < 0:       # the same card read the other way: do not spin it
        a = Pose(a.centre, -a.up, a.w, a.h)
    ang_a, ang_b = math.atan2(a.up[1], a.up[0]), math.atan2(b.up[1], b.up[0])
    d = (ang_b - ang_a + math.pi) % (2 * math.pi) - math.pi
    ang = ang_a + d * s
    return Pose(a.centre + (b.centre - a.centre) * s, np.array([math.cos(ang), math.sin(ang)]), a.w, a.h)


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
    if not 2 <= len(names) <= 5:
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
        change = film.apply(middle if middle is not None else [list(c) for c in frames[k]])
        after = snapshot(film)
        if change.removed:       # taken late, or (illegally) removed: before the next card
            gone_ids = {id(it) for ch in change.removed for it in ch}
            director.take(collector or player, [v for key, v in before.items() if key not in gone_ids],
                          [before[key] for key in gone_ids if key in before], stay=False)
            before = {key: v for key, v in before.items() if key not in gone_ids}
        if change.placed or change.moves:
            director.lay(player, change, before, after)
        if middle is not None:
            done = film.apply([list(c) for c in frames[k]])
            gone_ids = {id(it) for ch in done.removed for it in ch}
            director.take(collector or player, [v for key, v in after.items() if key not in gone_ids],
                          [after[key] for key in after if key in gone_ids], stay=True)
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


def render_game(out_dir, players: int | list[str], seed: int, tier: str = "medium", style: str | None = None,
                fps: int = 10, size: tuple[int, int] | None = (1280, 720), illegal_rate: float = 0.0,
                max_frames: int | None = None, video: bool = True, draw_pile: bool = False) -> Path:
    """Film a simulated game into out_dir; returns the path of truth.json.

    `draw_pile` lays the face-down draw pile on the table as a fan that thins
    out as cards are drawn (its cards are `back` in the settled truth).

    `max_frames` films only the first record frames (a short sample); the
    truth then covers exactly those frames.
    """
    from companion.game.scoring import rank_winners, score_piles

    plan = plan_game(players, seed, tier, style, fps, size, illegal_rate, max_frames, draw_pile)
    world, director, sim, frames, names = plan.world, plan.director, plan.sim, plan.frames, plan.names
    style, starts, rngs, size = plan.style, plan.starts, plan.rngs, plan.world.size

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("frame_*.jpg"):
        old.unlink()
    shake_rng, sensor = rngs["camera"], rngs["sensor"]
    look = world.look
    writer = None
    frame_info = []
    if video:
        writer = cv2.VideoWriter(str(out / VIDEO_NAME), cv2.VideoWriter_fourcc(*"MJPG"), float(fps), size)
        if not writer.isOpened():
            raise OSError("this OpenCV cannot write Motion-JPEG AVI video")
    shake = np.zeros(2)
    for i, shot in enumerate(director.shots):
        look = look.drifted(sensor)
        shake = shake * 0.7 + shake_rng.normal(0, 0.25, 2)       # a tiny, wandering camera shake
        sh = (float(shake[0]), float(shake[1]))
        name = f"frame_{i:06d}.jpg"
        for c, chain in enumerate(shot.chains or []):
            for pos, it in enumerate(chain):
                it.chain, it.pos = c, pos
        truth, ids = truth_of(world, shot.items, name, shake=sh) if shot.chains is not None else ({}, {})
        frame = draw(world, shot.items, ids, sensor, look=look, shake=sh)
        (out / name).write_bytes(frame.jpeg)
        if writer is not None:
            writer.write(frame.image)
        frame_info.append({"index": i, "file": name, "record_frame": shot.settled_frame,
                           "truth": truth if shot.settled_frame is not None else None})
    if writer is not None:
        writer.release()

    first_settled: dict[int, int] = {}
    for f in frame_info:
        if f["record_frame"] is not None:
            first_settled.setdefault(f["record_frame"], f["index"])
    n = len(frames)
    moves = [dict(m, video_start=starts.get(m["frame"], 0), video_frame=first_settled[m["frame"]])
             for m in sim.truth["moves"] if m["frame"] < n]
    if n == len(sim.frames):
        record, piles, scores, winners = sim.record, sim.truth["piles"], sim.truth["scores"], sim.truth["winners"]
    else:
        record = dict(sim.record, frames=sim.record["frames"][:n], finished=False)
        piles_cards = sim.piles_after[n - 1]
        piles = {p: [[c.code for c in s] for s in snakes] for p, snakes in piles_cards.items()}
        scores = score_piles(piles_cards)
        winners = rank_winners(scores)
    truth = {
        "players": names, "seed": int(seed), "tier": tier, "style": style, "fps": int(fps),
        "size": list(size), "video": VIDEO_NAME if video else None,
        "record": record, "moves": moves, "piles": piles, "scores": scores, "winners": winners,
        "injected": [list(x) for x in sim.injected if x[0] < n],
        "record_frames": [{"record_frame": k, "first_video_frame": first_settled[k],
                           "last_video_frame": max(f["index"] for f in frame_info if f["record_frame"] == k)}
                          for k in range(n)],
        "frames": frame_info,
    }
    path = out / "truth.json"
    path.write_text(json.dumps(truth) + "\n", encoding="utf-8")
    return path
