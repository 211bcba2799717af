"""Cards over time: which card seen now is which card seen before.

A `Track` is one physical card on the table.  Every sighting is matched to a
track by position, so a card (or a whole chain) nudged a little stays the same
card, and every sighting adds a confidence-weighted vote for what the card is:
a card misread in one frame is outvoted by the frames around it instead of
becoming a phantom move.  Cards do not change on the table, so the votes of a
card's whole life count.

Matching first moves each old chain by the push or turn most of its cards agree
on (players shove snakes aside, or swing them round, to make room), then pairs
cards with tracks in one assignment where a differing reading costs more than
any plausible move.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy.optimize import linear_sum_assignment

from companion.game.cards import Card, Kind
from companion.game.deck import Deck

from .pushes import Motion, rigid_fit, shifted
from .reading import Reading, SeenCard
from .tables import misread_of, outline_share

SAME_CARD_REACH = 4.0   # card sizes (short sides) a card read the same may have been pushed
ANY_CARD_REACH = 0.6    # card sizes within which a differently read card is the same one
SAME_PLACE_SHARE = 0.5  # of the smaller outline, what a differently read card must share with it
RIGID_SLACK = 0.3       # card sizes two cards' distance may change as their snake is carried
SAME_CARD_SLACK = 1.5   # card sizes a card read the same may lie from where its chain went
TURNED_DEGREES = 25.0   # a card's outline turned further than this was turned on the table
RUN_CARDS_PER_SLIP = 4  # a chain carried far is recognised with one card in so many read otherwise
RUN_CARDS_PER_MISREAD = 3   # ... or in so many, read as a misreading could make it (`misread_of`)
# card sizes from where a push puts a card that a card read the same may lie: of two pushes
# landing as many cards, the one that brings more near a look-alike (a snake squeezed as it
# was pushed) wins before the one that moves less
NEAR_LANDING = 0.75
PUSH_COST = 0.1        # per card size a card's snake is pushed: breaks ties towards stillness
_FAR = 1e6


@dataclass
class Track:
    id: int
    centre: np.ndarray
    size: float
    corners: np.ndarray
    votes: Counter = field(default_factory=Counter)        # identity code -> weight
    colour_dirs: dict = field(default_factory=dict)        # colour -> summed unit vector centre->end
    sightings: int = 0
    first_frame: int = -1
    last_frame: int = -1
    surest: float = 0.0                                    # the most confident reading's confidence
    # identity code -> weight of the readings the analyser ranked next (its "alternatives")
    alternatives: Counter = field(default_factory=Counter)

    def observe(self, seen: SeenCard, deck: Deck, frame: int) -> None:
        if self.sightings and _turned(self.corners, np.asarray(seen.corners, float)):
            # where its colours pointed says nothing once the card was turned (a snake swung
            # round to make room): the new sighting alone says it (with one reading per still
            # table, the old directions outweighed it)
            self.colour_dirs = {}
        self.centre = seen.centre
        self.size = seen.size
        self.corners = np.asarray(seen.corners, float)
        weight = 0.05 + max(0.0, min(1.0, seen.confidence))
        self.votes[deck.identity(seen.card).code] += weight
        for card, confidence in seen.alternatives:
            # weighed as the reading is, scaled by how much less likely the analyser found it
            self.alternatives[deck.identity(card).code] += weight * min(1.0, confidence / max(seen.confidence, 1e-6))
        for colour, end in zip(seen.card.colours, seen.ends):
            direction = np.asarray(end, float) - self.centre
            norm = np.linalg.norm(direction)
            if norm > 0:
                old = self.colour_dirs.get(colour, np.zeros(2))
                self.colour_dirs[colour] = 0.7 * old + weight * direction / norm
        self.sightings += 1
        self.surest = max(self.surest, seen.confidence)
        self.last_frame = frame

    def absorb(self, other: "Track") -> None:
        """Take in the sightings of a track that was this card all along, seen last as `other`
        (its place and where its colours point are other's)."""
        self.votes.update(other.votes)
        self.alternatives.update(other.alternatives)
        self.centre, self.size, self.corners = other.centre, other.size, other.corners
        self.colour_dirs = {**self.colour_dirs, **other.colour_dirs}
        self.sightings += other.sightings
        self.surest = max(self.surest, other.surest)
        self.last_frame = other.last_frame

    @property
    def identity(self) -> str:
        return self.ranked()[0][0]

    def ranked(self) -> list[tuple[str, float]]:
        return sorted(self.votes.items(), key=lambda kv: (-kv[1], kv[0]))

    def support(self, code: str) -> float:
        """The weight of the readings that named it `code`, first or (`alternatives`) next."""
        return self.votes.get(code, 0.0) + self.alternatives.get(code, 0.0)

    def supported(self) -> list[tuple[str, float]]:
        """Every code read of it, first or next, heaviest support first."""
        return sorted(((code, self.support(code)) for code in set(self.votes) | set(self.alternatives)),
                      key=lambda kv: (-kv[1], kv[0]))

    def rivals(self, share: float = 0.5) -> list[tuple[str, float]]:
        """The readings of comparable support: the leader, and among the next two those of
        at least `share` times its support (`supported` order)."""
        ranked = self.supported()
        return [(code, w) for code, w in ranked[:3] if w >= share * ranked[0][1]]

    def is_clear(self, ratio: float = 2.0) -> bool:
        """The leading reading outweighs the next one by `ratio` (or stands alone)."""
        ranked = self.ranked()
        return len(ranked) == 1 or ranked[0][1] >= ratio * ranked[1][1]

    def oriented(self, code: str, towards_previous: np.ndarray | None,
                 towards_next: np.ndarray | None) -> str:
        """The code with a middle's colours ordered along the chain (the first faces the previous card)."""
        card = Card.parse(code)
        if card.kind is not Kind.MIDDLE:
            return code
        a, b = card.colours
        da, db = self.colour_dirs.get(a), self.colour_dirs.get(b)
        if da is None and db is None:
            return code
        # where colour a points minus where colour b points: that axis runs b -> a
        axis = (da if da is not None else np.zeros(2)) - (db if db is not None else np.zeros(2))
        if towards_previous is not None:
            facing_a = float(np.dot(axis, towards_previous)) >= 0
        elif towards_next is not None:
            facing_a = float(np.dot(axis, towards_next)) < 0
        else:
            return code
        return card.code if facing_a else card.flipped().code

    def to_dict(self) -> dict:
        return {"id": self.id, "centre": self.centre.tolist(), "size": self.size,
                "corners": self.corners.tolist(), "votes": dict(self.votes),
                "colour_dirs": {k: v.tolist() for k, v in self.colour_dirs.items()},
                "sightings": self.sightings, "first_frame": self.first_frame,
                "last_frame": self.last_frame, "surest": self.surest,
                "alternatives": dict(self.alternatives)}

    @classmethod
    def from_dict(cls, data: dict) -> "Track":
        return cls(int(data["id"]), np.asarray(data["centre"], float), float(data["size"]),
                   np.asarray(data["corners"], float), Counter(data["votes"]),
                   {k: np.asarray(v, float) for k, v in data["colour_dirs"].items()},
                   int(data["sightings"]), int(data["first_frame"]), int(data["last_frame"]),
                   float(data.get("surest", 1.0)), Counter(data.get("alternatives", {})))


def _assign(cost: np.ndarray) -> list[tuple[int, int]]:
    if cost.size == 0:
        return []
    rows, cols = linear_sum_assignment(cost)
    return [(r, c) for r, c in zip(rows, cols) if cost[r, c] < _FAR]


def _chain_motions(tracks: list[Track], seen: list[SeenCard], same: np.ndarray, dist: np.ndarray,
                   chains: list[list[int]]) -> dict[int, Motion]:
    """How each old chain was moved, agreed by most of its cards.

    Each card proposes the push to the nearest card read the same, and each two
    cards the turn and shift that lay them on two cards read like them as far
    apart (a snake carried and laid back to front to make room: no push carries
    it there).  The proposal that puts most of the chain's cards on a card read
    the same wins (ties: the least movement, cards mostly lie still), so one card
    matched to a look-alike elsewhere cannot drag its chain along.  (Counting the
    cards that land, not the proposals that agree: a snake pushed one card along
    to make room for a copy of its end card has that copy where the end lay, and
    the end's own proposal, to stay put, would otherwise tie with the rest's.)
    """
    index = {t.id: i for i, t in enumerate(tracks)}
    centres_t = np.array([t.centre for t in tracks])
    centres_s = np.array([s.centre for s in seen])
    motions: dict[int, Motion] = {}
    for chain in chains:
        members = [index[t] for t in chain if t in index]
        if not members:
            continue
        size = float(np.median([tracks[i].size for i in members]))
        proposals = []
        for i in members:
            near = np.where(same[i] & (dist[i] < SAME_CARD_REACH))[0]
            if near.size:
                j = near[np.argmin(dist[i, near])]
                proposals.append(shifted(seen[j].centre - tracks[i].centre))
        chain_centre = centres_t[members].mean(axis=0)
        for a, b in combinations(members, 2):
            apart = np.linalg.norm(centres_t[a] - centres_t[b])
            for ja in np.nonzero(same[a])[0]:
                for jb in np.nonzero(same[b])[0]:
                    if ja == jb or abs(np.linalg.norm(centres_s[ja] - centres_s[jb]) - apart) \
                            > RIGID_SLACK * size:
                        continue
                    motion = rigid_fit(centres_t[[a, b]], centres_s[[ja, jb]])
                    if np.linalg.norm(motion(chain_centre) - chain_centre) < SAME_CARD_REACH * size:
                        proposals.append(motion)
        if not proposals:
            continue

        def rank(motion: Motion) -> tuple[int, int, float]:
            moved = motion(centres_t[members])
            off = np.linalg.norm(centres_s[None, :, :] - moved[:, None, :], axis=2)
            movement = float(np.linalg.norm(moved - centres_t[members], axis=1).sum())
            return int(((off < 0.3 * size) & same[members]).any(axis=1).sum()), \
                int(((off < NEAR_LANDING * size) & same[members]).any(axis=1).sum()), -movement
        best = max(proposals, key=rank)
        for t in chain:
            motions[t] = best
    return motions


def _turned(before: np.ndarray, after: np.ndarray) -> bool:
    """A card's outline turned by more than TURNED_DEGREES (long axes compared, either way),
    or its centre moved further than its long side (a snake carried may be swung round
    end for end without its cards' axes turning)."""
    def long_axis(c: np.ndarray) -> np.ndarray:
        sides = np.roll(c, -1, axis=0) - c
        return sides[int(np.argmax(np.linalg.norm(sides, axis=1)))]
    a, b = long_axis(before), long_axis(after)
    cos = abs(float(np.dot(a, b))) / max(1e-9, float(np.linalg.norm(a) * np.linalg.norm(b)))
    moved = float(np.linalg.norm(after.mean(axis=0) - before.mean(axis=0)))
    return cos < np.cos(np.radians(TURNED_DEGREES)) or moved > float(np.linalg.norm(a))


def match_sightings(tracks: list[Track], reading: Reading, deck: Deck,
                    chains: list[list[int]], attached: dict[int, int] | None = None,
                    missing: frozenset[int] = frozenset(),
                    names: dict[int, str] | None = None) -> dict[int, int]:
    """Map each seen card id to a track id (cards left out are new).

    Every old chain is first moved by the push or turn its cards agree on
    (`_chain_motions`), and with it the cards `attached` to one of its cards
    (track -> track: a card not yet part of the settled chains, read linked to
    it); then one assignment pairs cards with where their tracks
    should now be: a card read the same may be a little off, a card read
    differently must be right there (and costs more, so a misreading never
    outbids a card that was read right).  A card `missing` (not found at the last
    settled table) comes back read otherwise only as a misreading could make it
    (`misread_of`): another kind read where it lay is another card, laid on its place
    after it was taken away.  `names`: what the game holds settled cards to be (track ->
    code); a settled card counts as read the same by a sighting of that code, the others by
    their readings' leading vote.  (A snake carried far, `_moved_far`, and a card rejoining
    its neighbours, `_kept_together`, are still looked for by their cards' votes.)
    """
    seen = list(reading.cards)
    if not tracks or not seen:
        return {}
    centres_t = np.array([t.centre for t in tracks])
    centres_s = np.array([s.centre for s in seen])
    # (sizes and identities once per card: both are computed, and a table has many cards)
    size = np.maximum(np.array([t.size for t in tracks])[:, None],
                      np.array([s.size for s in seen])[None, :])
    dist = np.linalg.norm(centres_t[:, None, :] - centres_s[None, :, :], axis=2) / size
    codes = [deck.identity(s.card).code for s in seen]
    names = names or {}
    same = np.array([names.get(t.id) or t.identity for t in tracks])[:, None] == np.array(codes)[None, :]
    motions = _chain_motions(tracks, seen, same, dist, chains)
    for t, anchor in (attached or {}).items():
        if anchor in motions:
            motions[t] = motions[anchor]
    moved = np.array([motions[t.id](t.centre) if t.id in motions else t.centre for t in tracks])
    residual = np.linalg.norm(moved[:, None, :] - centres_s[None, :, :], axis=2) / size
    # (of two cards that fit a sighting equally well, the one that lies still takes it, not
    # the one whose snake had to be pushed there: cards mostly lie still)
    pushed = np.linalg.norm(moved - centres_t, axis=1)[:, None] / size
    cost = np.where(same & (residual < SAME_CARD_SLACK), residual + PUSH_COST * pushed, _FAR)
    may_be = _may_be(tracks, seen, codes, missing)
    on_place = _on_the_place(~same & may_be & (residual < ANY_CARD_REACH), tracks, seen, motions)
    cost = np.where(on_place, residual + 1.0, cost)
    # a card read the same but not where its chain went (pushed on its own, e.g. by a hand)
    cost = np.where(same & (cost >= _FAR) & (dist < SAME_CARD_REACH), dist + 1.0, cost)
    pairs = {seen[c].index: tracks[r].id for r, c in _assign(cost)}
    pairs = _moved_far(tracks, reading, codes, chains, pairs,
                       {(tracks[r].id, seen[c].index) for r, c in zip(*np.nonzero(~may_be))})
    return _kept_together(pairs, reading, chains, tracks, codes,
                          {t.id: (m, t.size) for t, m in zip(tracks, moved)})


def same_cards_apart(pairings: list[dict[int, int]], tracks: dict[int, Track],
                     known: set[int]) -> dict[int, int]:
    """Tracks born in a still window that are a known card seen in its other pictures: new -> old.

    The table does not change while it is still, so a card first seen in one
    picture of the window, on the place of a known card that picture missed
    (read otherwise, or its snake carried where matching did not follow it) while
    another picture of the window saw that card there, is that card, not a second
    one: the two were never seen together.
    """
    seen_with: dict[int, set[int]] = {}
    for pairs in pairings:
        present = set(pairs.values())
        for t in present:
            seen_with.setdefault(t, set()).update(present)
    places = {new: [old for old in seen_with if old in known and old not in seen_with[new]
                    and outline_share(tracks[old].corners, tracks[new].corners) >= SAME_PLACE_SHARE]
              for new in seen_with if new not in known}
    # (one to one only: two new tracks on one known card's place leave it in doubt)
    claims = Counter(old for olds in places.values() for old in olds)
    return {new: olds[0] for new, olds in places.items() if len(olds) == 1 and claims[olds[0]] == 1}


def _on_the_place(near: np.ndarray, tracks: list[Track], seen: list[SeenCard],
                  motions: dict[int, Motion]) -> np.ndarray:
    """Of the (track, sighting) pairs `near`, those whose outlines share most of the smaller one.

    A card read otherwise is the same card only where it covers the card's own place:
    a card laid where the end of a snake lay, just pushed aside while the reader missed
    the snake in that still picture, lies within reach of the old centre but on
    barely a third of the old outline (a same card read again shares nearly all of it).
    """
    near = near.copy()
    for r, c in zip(*np.nonzero(near)):
        motion = motions.get(tracks[r].id)
        track = motion(tracks[r].corners) if motion else tracks[r].corners
        near[r, c] = outline_share(track, np.asarray(seen[c].corners, float)) >= SAME_PLACE_SHARE
    return near


def _may_be(tracks: list[Track], seen: list[SeenCard], codes: list[str],
            missing: frozenset[int]) -> np.ndarray:
    """(tracks, seen cards): whether the seen card may be the track's card.  Any may, but a
    card `missing` at the last settled table only returns as itself or misread
    (`misread_of`): a card of another kind where it lay was laid after it was taken."""
    may = np.ones((len(tracks), len(seen)), bool)
    for r, track in enumerate(tracks):
        if track.id in missing:
            may[r] = [misread_of(track.identity, code) for code in codes]
    return may


def _kept_together(pairs: dict[int, int], reading: Reading, chains: list[list[int]],
                   tracks: list[Track], codes: list[str],
                   where: dict[int, tuple[np.ndarray, float]]) -> dict[int, int]:
    """Cards stay in their snake: a card is not torn from a neighbour on its own, and a card
    read like it linked to its neighbours' sightings is that card.

    A card matched to a sighting away from where its chain went (more than
    `ANY_CARD_REACH`) while a neighbour of its chain was matched, where the reading
    does not link the two sightings, was not carried off alone: the sighting is a card
    read like it nearby -- a look-alike just laid beside it, or a look-alike neighbour --
    while the reader missed the card itself.  The pair is dropped, and the card is then
    given the one free sighting read like it that is linked to all its matched
    neighbours' sightings (its chain moved, turned, with it), if there is one; otherwise
    it stays unmatched and is judged by the pixels at its place (missed, or really gone).
    A card matched where its chain went but cut off from its neighbours the same way (a
    push proposed by one card alone put it on a look-alike or a card read otherwise) is
    given such a sighting too, when there is one.  Nor does the only card seen of a snake
    walk off alone: that is a look-alike near a snake gone or unseen.
    """
    by_track = {t.id: t for t in tracks}
    centre = {c.index: c.centre for c in reading.cards}
    code_of_seen = {c.index: code for c, code in zip(reading.cards, codes)}
    beside = _linked(reading)
    seen_of = {t: i for i, t in pairs.items()}

    def neighbours(chain: list[int], k: int) -> list[int]:
        return [n for n in chain[k - 1:k] + chain[k + 1:k + 2] if n in seen_of]

    torn, isolated = set(), set()
    settled = {t for chain in chains for t in chain}
    for chain in chains:
        alone = len(chain) > 1 and sum(t in seen_of for t in chain) == 1
        for k, t in enumerate(chain):
            i = seen_of.get(t)
            near = neighbours(chain, k)
            if i is None or t not in where or not (near or alone) \
                    or any(seen_of[n] in beside.get(i, ()) for n in near):
                continue
            place, size = where[t]
            if alone and any(pairs.get(j) in settled - set(chain) for j in beside.get(i, ())):
                # (the only card seen of a snake, now read linked to another snake's card:
                # the push that put it there was its own proposal and cannot vouch for it;
                # measured from where it lay, it is a copy laid there as its snake was taken)
                place = by_track[t].centre
            if np.linalg.norm(centre[i] - place) < ANY_CARD_REACH * size:
                isolated.add(t)
            else:
                # (nor does one card of a snake no other card of which was seen walk off
                # alone: a look-alike laid near a snake that is gone or unseen)
                torn.add(t)
    pairs = {i: t for i, t in pairs.items() if t not in torn}
    for t in torn:
        del seen_of[t]

    def rejoined(chain: list[int], k: int, t: int) -> int | None:
        """The one free sighting read like t linked to all its matched neighbours'."""
        options = None
        for n in neighbours(chain, k):
            free = {i for i in beside.get(seen_of[n], ()) if i not in pairs
                    and code_of_seen[i] == by_track[t].identity}
            if len(chain) == 2:
                # a neighbour with a free end: a look-alike laid there is not this card,
                # unless it lies where this card lay beside it
                was = by_track[t].centre - by_track[n].centre
                free = {i for i in free if np.linalg.norm(centre[i] - centre[seen_of[n]] - was)
                        < ANY_CARD_REACH * by_track[t].size}
            options = free if options is None else options & free
        return next(iter(options)) if options is not None and len(options) == 1 else None

    for chain in chains:
        for k, t in enumerate(chain):
            if t in by_track and (t not in seen_of or t in isolated) and neighbours(chain, k):
                i = rejoined(chain, k, t)
                if i is None:
                    continue
                # (a card matched where its chain went but cut off from its neighbours, while
                # a card read like it lies linked to them, is that card: the other was a
                # card read otherwise, or a look-alike, where a wrong push put it)
                pairs.pop(seen_of.get(t), None)
                pairs[i], seen_of[t] = t, i
    return pairs


def _moved_far(tracks: list[Track], reading: Reading, codes: list[str], chains: list[list[int]],
               pairs: dict[int, int], never: set[tuple[int, int]] = frozenset()) -> dict[int, int]:
    """Follow whole chains carried further than a nudge (room made on a crowded table).

    An old chain that position alone did not find intact (a card unmatched, or
    its cards scattered over several seen chains) is looked for by its cards'
    names, in order, inside the chains seen now: a run of the same cards in the
    same order is that chain moved, however far (a card cannot leave the table
    and an identical one arrive in the same turn).  A lone card only takes a
    card nobody else claimed; a longer run outweighs positions, but only with more of its
    cards read as they are than the places found.  No (track, seen card) pair in `never` is
    made (`_may_be`).
    """
    by_track = {t.id: t for t in tracks}
    centre_of_seen = {c.index: c.centre for c in reading.cards}
    code_of_seen = {c.index: code for c, code in zip(reading.cards, codes)}
    track_of = dict(pairs)                      # seen id -> track id
    seen_of = {t: i for i, t in pairs.items()}  # track id -> seen id
    # (a chain found whole where it lay keeps its cards from any chain no longer than itself
    # that reads like part of it: that one is looked for elsewhere)
    whole = {seen_of[t]: len(chain) for chain in chains if all(t in seen_of for t in chain)
             and _contiguous([seen_of[t] for t in chain], reading) for t in chain}

    def read_alike(chain: list[int], ids: list[int | None]) -> int:
        return sum(i is not None and code_of_seen[i] in _read_as(by_track[t], len(chain) == 1)
                   for t, i in zip(chain, ids))

    for chain in sorted(chains, key=len, reverse=True):
        if any(t not in by_track for t in chain):
            continue
        if all(t in seen_of for t in chain) and _contiguous([seen_of[t] for t in chain], reading):
            continue
        lone = len(chain) == 1
        # (a long chain is itself though one of its cards is misread as it moves)
        best = _find_run(list(chain), by_track, reading, code_of_seen, centre_of_seen,
                         lambda i: (not lone or i not in track_of or track_of[i] == chain[0])
                         and whole.get(i, 0) < len(chain),
                         slips=len(chain) // RUN_CARDS_PER_SLIP,
                         misreads=len(chain) // RUN_CARDS_PER_MISREAD, never=never, lone=lone)
        # (nor does a run with fewer cards read as they are outweigh the places: a chain
        # found where it lay but for one card the reader merged with its neighbour fits,
        # one card along, a run with the rest read as misreadings)
        if best is None or read_alike(chain, best) <= read_alike(chain, [seen_of.get(t) for t in chain]):
            continue
        for t, i in zip(chain, best):
            if i in track_of:
                seen_of.pop(track_of[i], None)
            if t in seen_of:
                track_of.pop(seen_of[t], None)
            track_of[i], seen_of[t] = t, i
    # What is left of a chain that lost cards may have been moved too: its remaining
    # runs take cards nobody claimed, read the same, in the same order, nearest first.
    for chain in chains:
        runs, run = [], []
        for t in list(chain) + [None]:
            if t is not None and t in by_track and t not in seen_of:
                run.append(t)
            elif run:
                runs.append(run)
                run = []
        pieces = [run[a:a + n] for run in runs for n in range(len(run), 0, -1)
                  for a in range(len(run) - n + 1)]
        found_pieces: dict[int, int] = {}
        for piece in pieces:                      # longest first
            if any(t in seen_of or t in found_pieces.values() for t in piece):
                continue
            found = _find_run(piece, by_track, reading, code_of_seen, centre_of_seen,
                              lambda i: i not in track_of and i not in found_pieces)
            if found is not None:
                found_pieces.update(zip(found, piece))
        # Only when most of the chain is still there: the remnant of a snake that was
        # taken must not claim a look-alike card laid elsewhere.
        if 2 * (sum(t in seen_of for t in chain) + len(found_pieces)) >= len(chain):
            for i, t in found_pieces.items():
                track_of[i], seen_of[t] = t, i
    _fill_gaps(chains, reading, by_track, centre_of_seen, track_of, seen_of, never)
    return track_of


def _fill_gaps(chains: list[list[int]], reading: Reading, by_track: dict, centre_of_seen: dict,
               track_of: dict, seen_of: dict, never: set[tuple[int, int]] = frozenset()) -> None:
    """A card of an old chain still unmatched, next to a matched neighbour whose seen card
    has exactly one unclaimed neighbour, is that card (read differently in a moved chain) --
    if that neighbour lies on the same side of it as before: a card the reader missed at
    one end of its neighbour is not the new card just laid at the neighbour's other end.
    No (track, seen card) pair in `never` is made."""
    beside = _linked(reading)
    changed = True
    while changed:
        changed = False
        for chain in chains:
            for k, t in enumerate(chain):
                if t in seen_of:
                    continue
                options = None
                for n in (chain[k - 1] if k else None, chain[k + 1] if k + 1 < len(chain) else None):
                    if n is None or n not in seen_of:
                        continue
                    was = by_track[t].centre - by_track[n].centre
                    free = {i for i in beside.get(seen_of[n], []) if i not in track_of
                            and (t, i) not in never
                            and np.linalg.norm(centre_of_seen[i] - centre_of_seen[seen_of[n]] - was)
                            < ANY_CARD_REACH * by_track[t].size}
                    options = free if options is None else options & free
                if options is not None and len(options) == 1:
                    i = options.pop()
                    track_of[i], seen_of[t] = t, i
                    changed = True


def _linked(reading: Reading) -> dict[int, set[int]]:
    """Each seen card's neighbours in the reading's chains."""
    beside: dict[int, set[int]] = {}
    for chain in reading.chains:
        for a, b in zip(chain, chain[1:]):
            beside.setdefault(a, set()).add(b)
            beside.setdefault(b, set()).add(a)
    return beside


def _find_run(run: list[int], by_track: dict, reading: Reading, code_of_seen: dict,
              centre_of_seen: dict, free, slips: int = 0, misreads: int = 0,
              never: set[tuple[int, int]] = frozenset(), lone: bool = False) -> list[int] | None:
    """The seen run reading like these tracks in order (either way round), at most
    max(`slips`, `misreads`) of its cards read otherwise and at most `slips` of those not as a
    misreading could make them (`misread_of`), no pair in `never`; nearest to them (fewest
    cards read otherwise first).  A `lone` card is read right as anything it was read as
    (`_read_as`)."""
    want = [by_track[t].identity for t in run]
    names = [_read_as(by_track[t], lone) for t in run]
    where = np.mean([by_track[t].centre for t in run], axis=0)
    best, best_rank = None, (np.inf, np.inf)
    for seen_chain in reading.chains:
        for start in range(len(seen_chain) - len(want) + 1):
            forward = list(seen_chain[start:start + len(want)])
            for ids in (forward, forward[::-1]):
                read = [code_of_seen[i] for i in ids]
                wrong = [code not in n for code, n in zip(read, names)]
                unlike = [x and not misread_of(w, code) for x, code, w in zip(wrong, read, want)]
                if sum(unlike) > slips or sum(wrong) > max(slips, misreads) \
                        or any((t, i) in never for t, i in zip(run, ids)) or not all(free(i) for i in ids):
                    continue
                d = float(np.linalg.norm(np.mean([centre_of_seen[i] for i in ids], axis=0) - where))
                if (sum(wrong), d) < best_rank:
                    best, best_rank = ids, (sum(wrong), d)
    return best


def _read_as(track: Track, lone: bool) -> set[str]:
    """What a card counts as read right as when looked for by name: its identity; a lone
    card, also anything it was read as before, first or next (carried to a join, a card
    read doubtfully once is read anew)."""
    return {code for code, _ in track.supported()} if lone else {track.identity}


def _contiguous(ids: list[int], reading: Reading) -> bool:
    """The seen cards lie one after another (either way round) in one seen chain."""
    for chain in reading.chains:
        if ids[0] in chain:
            pos = [chain.index(i) if i in chain else -1 for i in ids]
            if -1 in pos:
                return False
            steps = {b - a for a, b in zip(pos, pos[1:])}
            return len(ids) == 1 or steps in ({1}, {-1})
    return False
