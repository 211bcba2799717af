"""Shots of a filmed game: for each change of the table a hand reaches in from the
player's seat holding the card (its shadow on the table), lays it, withdraws;
a snake completed out of the camera's sight is swept up by the hand that laid
its last card, which never leaves the picture in between.  Between changes the
table lies still for a while: those *settled* shots carry truth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import props as P
from .film import Change, TableFilm
from .layout import Item, Pose
from .world import World

# How long each part of a turn takes, in seconds.
REACH, PLACE, WITHDRAW, SETTLE, STAY = 0.5, 0.2, 0.4, 0.8, 0.4


def _ease(t: float) -> float:
    return t * t * (3 - 2 * t)


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
        pose = Pose(tip - up * (sprite.size_mm[1] / 2 - _TIP_INSET), up, sprite.size_mm[0], sprite.size_mm[1])
        return Item(pose, None, "prop", sprite=sprite)

    def _off(self, player: str, target: np.ndarray) -> np.ndarray:
        d = target - self.seats[player]
        return target - d / max(1e-9, np.linalg.norm(d)) * self.reach_len * 0.55

    def settle(self, film: TableFilm, record_frame: int) -> None:
        chains = [[_at(it, it.pose) for it in ch] for ch in film.chains]
        items = [it for ch in chains for it in ch]
        for _ in range(self.n(SETTLE)):
            self._shot(items, chains, record_frame)

    def lay(self, player: str, change: Change, before: Snapshot, after: Snapshot,
            stay: bool = False) -> np.ndarray:
        """Reach in holding the (first) new card, nudging moved chains meanwhile; lay; withdraw,
        unless the hand is to `stay` for what it completed (`take`).  Returns where it laid."""
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
        if not stay:
            self.withdraw(player, target, table)
        return target

    def withdraw(self, player: str, target: np.ndarray, table: list[Item], carrying: list[Item] = ()) -> None:
        end = self._off(player, target)
        nw = self.n(WITHDRAW)
        for f in range(nw):
            tip = target + (end - target) * _ease((f + 1) / nw)
            items = list(table) + [_at(c, c.pose.moved(tip - target), lift=10.0) for c in carrying]
            self._shot(items + [self._hand(player, tip)])

    def take(self, player: str, table: list[Item], gone: list[Item], laid: np.ndarray | None = None) -> None:
        """A hand takes cards away: reaching in from the player's seat or, when it has just
        `laid` the card that completed them there, moving straight on from that card.  The
        truth then says the camera never saw the completed snake, so the hand stays over the
        table and sways as it goes: a hand out of the picture, or at rest, leaves a still table
        a tracker would read."""
        if not gone:
            return
        target = np.mean([it.pose.centre for it in gone], 0)
        if laid is not None:
            d = target - self.seats[player]
            across = np.array([-d[1], d[0]]) / max(1e-9, float(np.linalg.norm(d)))
            sway = 0.5 * self.world.card_mm[0]
            ns = self.n(STAY)
            for f in range(ns):
                s = (f + 1) / ns
                tip = laid + (target - laid) * _ease(s) + across * sway * math.sin(2 * math.pi * s)
                self._shot(table + gone + [self._hand(player, tip)])
        else:
            start = self._off(player, target)
            nr = self.n(REACH)
            for f in range(nr):
                tip = start + (target - start) * _ease((f + 1) / nr)
                self._shot(table + gone + [self._hand(player, tip)])
        self.withdraw(player, target, table, carrying=gone)


_TIP_INSET = 8.0   # mm from a hand sprite's far edge to its fingertip


def hand_tip(hand: Item) -> np.ndarray:
    """Where a hand's fingertip is on the table (mm): the point its shot reaches for."""
    return hand.pose.centre + hand.pose.up * (hand.pose.h / 2 - _TIP_INSET)


def _at(item: Item, pose: Pose, lift: float = 0.0) -> Item:
    return Item(pose, item.card, item.what, item.sprite, item.chain, item.pos, item.complete, item.z, item.shade, lift)


def _lerp_pose(a: Pose, b: Pose, s: float) -> Pose:
    if float(np.dot(a.up, b.up)) < 0:       # the same card read the other way: do not spin it
        a = Pose(a.centre, -a.up, a.w, a.h)
    ang_a, ang_b = math.atan2(a.up[1], a.up[0]), math.atan2(b.up[1], b.up[0])
    d = (ang_b - ang_a + math.pi) % (2 * math.pi) - math.pi
    ang = ang_a + d * s
    return Pose(a.centre + (b.centre - a.centre) * s, np.array([math.cos(ang), math.sin(ang)]), a.w, a.h)
