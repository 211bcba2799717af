"""A filmed game's table: cards keep their place from one turn to the next.

A new card is hinged onto the end it extends, a join nudges the second chain
over to meet it, a chain that does not fit the picture is laid again bent
round; `TableFilm.apply` turns each new table of the game into a `Change`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from companion.game.cards import Card, Kind

from .layout import Item, Occupancy, Pose, hinge
from .world import World


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
    def _segments(self, chain: list[Card], used: list[set[int]], shortest_run: int):
        """Split a new chain into runs of old cards (Items, read in the new direction) and new cards.

        A whole old chain is preferred; failing that, a run of `shortest_run` or more
        cards out of an old chain (a card was taken out of it against the rules).
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
                            if run >= shortest_run and (best is None or run > best[0]):
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

    def apply(self, table: list[list[Card]], lays: bool = True) -> Change:
        """Rearrange the film's chains into `table`; return what moved, for animating.

        When the change `lays` no card, every card of `table` already lies on the
        table, so even a lone card left of a chain stays where it lay. Otherwise a
        lone card is taken for a new one: matched to an old card, a card laid in the
        same change as its twin's snake is collected would take the twin's place.
        """
        change = Change()
        start_pose = {id(it): it.pose for ch in self.chains for it in ch}
        used: list[set[int]] = [set() for _ in self.chains]
        plans = [self._segments(list(chain), used, 2 if lays else 1) for chain in table]
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


def _same_place(a: Pose, b: Pose) -> bool:
    """The same rectangle on the table (a face read from its other end has -up)."""
    return bool(np.allclose(a.centre, b.centre, atol=1e-6) and abs(abs(float(np.dot(a.up, b.up))) - 1) < 1e-9)
