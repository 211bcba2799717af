"""What the pixels say about a settled reading.

The analyser misses cards and invents some; the change gate's small pictures
do neither.  Where the pixels under a card's outline did not change since the
table last settled, nothing happened there: a card the analyser lost there is
still there, and one it found there was not laid this turn -- it was laid in an
earlier turn whose reading missed it (dated by `dating`), lay there since play
started, or is the analyser's invention.  Snakes pushed aside to make room move
every card, so there the distances between cards and the picture at the
snake's new place speak instead.

`PixelEvidence` is the part of `Tracker` that weighs this; `Change` is what a
settled reading says changed, before and after the weighing.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cv2
import numpy as np

from .dating import PlaceTest, carried_test, nudged_test, unmoved_test
from .identity import RIGID_SLACK
from .pushes import MIN_PUSH, chain_motion, components
from .tables import covered, links_of, outline_share

if TYPE_CHECKING:
    from .tracker import _Window

SAME_PLACE = 0.5   # of a card's outline, what another card must cover to lie on its place
UNREAD_CARD = 0.2  # of a card's area: a change this large away from every card is a card laid unread
CARD_MARGIN = 0.2  # of a card's sides: the band about a card in which a change is that card's


@dataclass
class Change:
    """The cards (track ids) of a settled reading set against the settled table."""
    present: set                  # on the table now
    edges: set                    # links between them (frozensets of two)
    latest: set                   # links the last reading of the window saw
    before: set                   # on the settled table
    added: set                    # present, not before
    gone: set                     # before, not present
    unseen: set = field(default_factory=set)         # lost by the reader where nothing changed
    late_found: dict = field(default_factory=dict)   # laid in an earlier turn: card -> picture
    ghost_links: set = field(default_factory=set)    # links read to cards that were never laid


@dataclass(eq=False)
class MissedSighting:
    """A new card a settled table read doubtfully, left waiting, then missed and judged
    without: where it lay, what it was read as, the frame of the picture that first showed
    it, and a picture taken after (`small`) to tell whether its place changed since."""
    corners: np.ndarray
    code: str
    frame: int
    small: np.ndarray


MISSED_KEPT = 8    # missed sightings remembered, the latest


class PixelEvidence:
    def _weigh_pixels(self, change: Change, window: _Window, waited: dict[int, int],
                      unmoved: PlaceTest) -> Change:
        """The change as the pixels tell it: they have the last word on whether anything
        happened at a place.  A card the analyser lost where nothing changed is still there,
        and one it found where nothing changed was never laid (or was laid earlier, unseen:
        `late_found`)."""
        present, edges, latest, before = change.present, change.edges, change.latest, change.before
        added, gone = change.added, change.gone
        # (a chain already missing at the last settle is judged by how long it stays gone)
        # (as the picture that last showed it has it: a snake pushed in a change left waiting
        # lies elsewhere than in the picture last judged, where its new place was bare table)
        unseen = {t for t in gone - set(self._gone_since)
                  if self._unmoved_since_seen(t, window)}
        # (as is one of a snake carried along, where the picture shows the card carried)
        carried_unseen = self._carried_unseen(gone - set(self._gone_since) - unseen, present, window)
        for t, place in carried_unseen.items():
            self.tracks[t].corners, self.tracks[t].centre = place, place.mean(axis=0)
        self.stats["carried_unseen"] += len(carried_unseen)
        unseen |= set(carried_unseen)
        # A card found where nothing changed since the last settle was not laid this turn:
        # if its place changed since the table was last judged, it was laid then and the
        # reader missed it (`SettledPictures.laid_unseen`); otherwise it was never laid.
        last_seen = self._unmoved(window, self._pictures.last) if len(self._pictures) else None
        stale = {t for t in added if (last_seen or unmoved)(self.tracks[t].corners)}
        # A card judged taken, found again where it was joined, was carried there and missed
        # (`_came_back`): it never left.
        back = self._came_back(added, edges)
        if back:
            self.stats["came_back"] += len(back)
            present, edges, latest = (_renamed(present, back), _renamed(edges, back),
                                      _renamed(latest, back))
            added -= set(back)
            stale -= set(back)
            before |= set(back.values())
        # (one seen there before, in a change judged without it, was laid when first seen)
        missed = self._laid_while_missed(stale - self._none_left(stale, present), edges, window)
        self.stats["laid_while_missed"] += len(missed)
        stale -= missed
        added -= missed
        before |= missed
        # One only nudged since then (by a card laid against it) lay there already: if its
        # place changed in an earlier picture, it was laid then.
        moved_a_little = self._nudged(window, self._pictures.last) if len(self._pictures) else None
        nudged = {t for t in added - stale if moved_a_little and moved_a_little(self.tracks[t].corners)}
        # (a card that waited was laid by the picture that first showed it, whatever its
        # place did after: a card laid against it changes the pixels there too)
        late_found = {**self._pictures.laid_unseen({t: self.tracks[t].corners for t in stale},
                                                   window.small, window.shape),
                      **self._pictures.laid_unseen({t: self.tracks[t].corners for t in nudged},
                                                   self._pictures.last, window.shape),
                      **self._laid_before_push(added - stale - nudged, present, edges, window),
                      **self._pictures.seen_before(added, waited)}
        ghosts = stale - set(late_found)
        start = self._there_from_start(ghosts, present, edges, window)
        if start:
            self.stats["from_start"] += len(start)
            ghosts -= start
            added -= start
            before |= start
        ghost_links = {e for e in edges if e & ghosts}
        self.stats["unseen"] += len(unseen)
        self.stats["ghosts"] += len(ghosts)
        gone -= unseen
        added -= ghosts
        present = (present - ghosts) | unseen
        edges = {e for e in edges if not e & ghosts}
        self._restore_links(unseen, present, edges)
        # A card leaves the table only in a taken snake: one gone from its place while a
        # new card that may be it misread, read doubtfully, turned up is that card carried
        # (to be joined) -- not a card taken and another laid.
        carried = self._carried(gone, added - set(late_found), present, edges, window)
        if carried:
            self.stats["carried"] += len(carried)
            present, edges, latest = (_renamed(present, carried), _renamed(edges, carried),
                                      _renamed(latest, carried))
            gone -= set(carried.values())
            added -= set(carried)
        # Nor is one read nearly like a card left waiting that is gone from its place: that
        # card was carried (for a join) and read afresh.
        moved = self._moved_waiting(set(waited) - present, added - set(waited), window)
        if moved:
            self.stats["moved_waiting"] += len(moved)
            present, edges, latest = (_renamed(present, moved), _renamed(edges, moved),
                                      _renamed(latest, moved))
            added = (added - set(moved)) | set(moved.values())
            late_found.update(self._pictures.seen_before(set(moved.values()), waited))
        # Nor can two settled cards that both stayed where they were have let go of each
        # other or come to touch: between them the settled links stand, whatever the
        # reader made of them (a misread or missed card read there broke a snake into
        # pieces, and the referee called every later move a rearrangement).
        lying = {t for t in present & before if unmoved(self._track(t).corners)}
        if self._joined_unseen(edges, lying, set(self._gone_since)):
            self.stats["joined_unseen"] += 1
        # (a card the last settled table missed may have been moved before it: its links
        # then were not read)
        still = lying - set(self._gone_since)
        settled = links_of(self.chains)
        edges = {e for e in edges if not e <= still} | {e for e in settled if e <= still}
        edges |= self._held_together(settled - edges, present & before, edges)
        return Change(present, edges, latest, before, added, gone, unseen, late_found, ghost_links)

    def _held_together(self, links: set, present: set, edges: set) -> set:
        """Of settled `links` the reader did not read, those between two present cards that
        lie as far apart as they did, each with an end free: a snake pushed to make room
        moves every card, so the pixels cannot vouch for the links, but the distances can
        (snakes are never split in play; a reader misses a link on a dim picture)."""
        ends = Counter(t for e in edges for t in e)
        held = set()
        for e in links:
            a, b = sorted(e)
            if not e <= present or ends[a] > 1 or ends[b] > 1 \
                    or a not in self._settled_outlines or b not in self._settled_outlines:
                continue
            then = _centre_shift(self._settled_outlines[a], self._settled_outlines[b])
            now = _centre_shift(self._track(a).corners, self._track(b).corners)
            if abs(now - then) <= RIGID_SLACK * min(self._track(a).size, self._track(b).size):
                held.add(e)
                ends.update(e)
        return held

    def _there_from_start(self, ghosts: set, present: set, edges: set, window: _Window) -> set:
        """Cards found where nothing changed since the first table was judged, alone and read
        surely, and found there again after another table was judged: missed in every reading
        until then, they lay there all along.  They join every judged table (the game is judged
        again, see `_found_from_start`).  (Found once, a card may be the reader's invention: a
        still picture is misread the same way in every frame.  Found where nothing changed
        only since a later table, it may have been laid in a turn whose reading missed it, which
        no picture can date: it stays unexplained.)"""
        since_first = None if self._first_small is None else self._unmoved(window, self._first_small)
        if since_first is None:
            return set()
        alone = {t for t in ghosts if not any(t in e for e in edges)}
        seen = {t for t in alone - self._doubtful(alone, present, window)
                if since_first(self.tracks[t].corners)}
        start = {t for t in seen if any(
            judged < len(self.history) and outline_share(self.tracks[t].corners, corners) >= SAME_PLACE
            for corners, judged in self._alone_since_first)}
        self._alone_since_first = \
            [(self.tracks[t].corners, len(self.history)) for t in seen - start] + \
            [(c, j) for c, j in self._alone_since_first if j == len(self.history)]
        if start:
            # (and where nothing changed since the picture read empty before the first table,
            # they are the table play started from: the first table's cards were moves)
            empty = self._read_empty
            since_empty = None if empty is None else self._unmoved(window, empty[1])
            first = since_empty is not None and all(since_empty(self.tracks[t].corners)
                                                    for t in start)
            self._found_from_start({t: self._deck_reading(t) for t in start},
                                   empty[0] if first else None)
            self._read_empty = None
        return start

    def _remember_missed(self, t: int, frame: int, window: _Window) -> None:
        """Card `t` waited from `frame` on and is forgotten now, never judged (see
        `_laid_while_missed`)."""
        sighting = MissedSighting(self.tracks[t].corners.copy(), self._deck_reading(t), frame,
                                  window.small)
        self._missed_sightings = self._missed_sightings[1 - MISSED_KEPT:] + [sighting]

    def _laid_while_missed(self, stale: set, edges: set, window: _Window) -> set:
        """Cards found where nothing changed since the last settle, alone, that a
        settled table before it read as new on the same place as the same card, left waiting
        (its reading was in doubt) and then missed (`MissedSighting`), where nothing changed
        since: a card the reader finds and loses in turn.  Read alike in two pictures a judged
        table apart, it is no invention of one still picture; it was laid when first seen,
        and every table judged since is corrected to hold it (`_found_since`)."""
        alone = {t for t in stale if not any(t in e for e in edges)}
        matched: dict[int, list[MissedSighting]] = {}
        for sighting in self._missed_sightings if alone else ():
            unmoved = self._unmoved(window, sighting.small)
            for t in alone:
                corners = self.tracks[t].corners
                if sighting.code == self._deck_reading(t) and unmoved is not None \
                        and unmoved(corners) and outline_share(corners, sighting.corners) >= SAME_PLACE:
                    matched.setdefault(t, []).append(sighting)
        first = {t: min(s.frame for s in sightings) for t, sightings in matched.items()}
        placed = set()
        for frame in sorted(set(first.values())):
            cards = {t: self._deck_reading(t) for t, f in first.items() if f == frame}
            if self._found_since(cards, frame):
                placed |= set(cards)
        used = [s for t in placed for s in matched[t]]
        self._missed_sightings = [s for s in self._missed_sightings if s not in used]
        return placed

    def _carried_places(self, cards: set, seen: set) -> dict[int, np.ndarray]:
        """Where settled cards not seen now lie if their chain was carried as its cards that
        were seen were since the table last settled (`chain_motion`); cards of chains with
        no card seen are left out."""
        out = {}
        for chain in self.chains:
            missing = [t for t in chain if t in cards and t in self._settled_outlines]
            now = {t: self.tracks[t].corners for t in chain if t in seen}
            motion = chain_motion(now, now, self._settled_outlines, self._track(missing[0]).size) \
                if missing else None
            for t in missing if motion is not None else ():
                out[t] = np.asarray(motion(self._settled_outlines[t]), float)
        return out

    def _pushed_places(self, cards: set, seen: set) -> dict[int, np.ndarray]:
        """`_carried_places` of the cards last seen where they settled whose chain moved."""
        return {t: place for t, place in self._carried_places(
                    {t for t in cards if t in self._settled_outlines
                     and _centre_shift(self._track(t).corners, self._settled_outlines[t])
                     < MIN_PUSH * self._track(t).size}, seen).items()
                if _centre_shift(place, self._settled_outlines[t]) >= MIN_PUSH * self._track(t).size}

    def _carried_unseen(self, cards: set, present: set, window: _Window) -> dict[int, np.ndarray]:
        """Of settled cards the reader missed now, those whose snake was carried (by the
        cards of it seen) and which the picture shows carried with it: card -> its outline
        now.  (A snake pushed to make room moves every card, so the pixels at a card's old
        place cannot say it is still there; its new place can.)"""
        test = carried_test(self.gate, self._settled_small, window.small, window.shape,
                            self.settings.unmoved_fraction)
        if test is None:
            return {}
        # (a card read there now is this one read afresh as another, or one laid on it)
        return {t: place for t, place in self._carried_places(cards, present).items()
                if not any(outline_share(self.tracks[u].corners, place) >= SAME_PLACE for u in present)
                and test(self._settled_outlines[t], place)}

    def _restore_links(self, kept: set, present: set, edges: set) -> None:
        """Give cards kept in place though unseen the links they had in the settled table.
        Its two neighbours read as touching each other is the reader closing the gap the
        missed card left: that link goes."""
        for chain in self.chains:
            for a, b in zip(chain, chain[1:]):
                if (a in kept or b in kept) and a in present and b in present:
                    edges.add(frozenset((a, b)))
            for a, k, b in zip(chain, chain[1:], chain[2:]):
                if k in kept and k in present:
                    edges.discard(frozenset((a, b)))

    def _laid_before_push(self, cards: set, present: set, edges: set, window: _Window
                          ) -> dict[int, int]:
        """Of new cards, those the reader missed in the last settled picture though their
        chain was pushed since (see `SettledPictures.laid_before_push`)."""
        if not cards:
            return {}
        now = {t: self.tracks[t].corners for t in present if t in self._settled_outlines}
        return self._pictures.laid_before_push(
            {t: (self.tracks[t].corners, self.tracks[t].size) for t in cards},
            components(present, edges), now, self._settled_outlines, self._settled_frame,
            window.shape)

    def _unread_change(self, window: _Window) -> bool:
        """Whether the picture changed since the table was last judged over a card's area
        (`UNREAD_CARD`) away from every card lying there now or then: a card was laid there
        that no reading saw.  Carried off later to make room for a join, it cannot be dated by
        its place (`SettledPictures.laid_unseen`), but a turn passed unseen all the same."""
        judged = self._pictures.judged if len(self._pictures) else None
        if judged is None or window.small is None or judged.shape != window.small.shape \
                or not self.chains:
            return False
        changed = self.gate.changed_mask(window.small, judged)
        scale = np.array([changed.shape[1] / window.shape[1], changed.shape[0] / window.shape[0]])
        cards = [self.tracks[t].corners * scale for chain in self.chains for t in chain]
        cards += [np.asarray(c, float) * scale for c in self._settled_outlines.values()]
        away = (changed & ~covered(changed.shape, cards, CARD_MARGIN)).astype(np.uint8)
        count, _, stats, _ = cv2.connectedComponentsWithStats(away, connectivity=8)
        if count < 2:
            return False
        card = float(np.median([abs(cv2.contourArea(np.float32(q))) for q in cards]))
        return int(stats[1:, cv2.CC_STAT_AREA].max()) >= UNREAD_CARD * card

    def _unmoved(self, window: _Window, before: np.ndarray | None = None) -> PlaceTest | None:
        """A test `corners -> bool`: did the pixels under that outline stay as they were when
        the table last settled (or in `before`)?  (Under `unmoved_fraction` of them changed.)
        None when there is no picture to compare with."""
        return self._unmoved_in(window.small, window.shape, before)

    def _unmoved_in(self, small: np.ndarray, shape: tuple[int, ...],
                    before: np.ndarray | None = None) -> PlaceTest | None:
        """`_unmoved` for any picture (its `small` copy and its shape), one not yet in the window too."""
        return unmoved_test(self.gate, self._settled_small if before is None else before,
                            small, shape, self.settings.unmoved_fraction)

    def _nudged(self, window: _Window, before: np.ndarray | None = None) -> PlaceTest | None:
        """A test `corners -> bool`: does the picture show under that outline what the last
        settled one (or `before`) showed there, moved a little (`dating.nudged_test`)?"""
        return nudged_test(self.gate, self._settled_small if before is None else before,
                           window.small, window.shape, self.settings.nudged_fraction,
                           self.settings.nudge_reach)

    def _unmoved_since_seen(self, t: int, window: _Window) -> bool:
        """The pixels under a card's outline are as they were in the settled picture that
        last showed it there (the last settled table's when none kept is later)."""
        seen_in = self._pictures.showing(self._track(t).last_frame)
        test = self._unmoved(window, seen_in)
        return test is not None and test(self._track(t).corners)


def _centre_shift(a, b) -> float:
    """How far apart two outlines' centres lie, in pixels."""
    return float(np.linalg.norm(np.mean(np.asarray(a, float), axis=0)
                                - np.mean(np.asarray(b, float), axis=0)))


def _renamed(items: set, renamed: dict[int, int]) -> set:
    """Card ids (or links: frozensets of two) with some cards renamed."""
    return {frozenset(renamed.get(t, t) for t in x) if isinstance(x, frozenset)
            else renamed.get(x, x) for x in items}
