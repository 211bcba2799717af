"""Frames over time to settled tables and the referee's moves.

`Tracker.feed(frame_index, image)` is the whole interface: it returns the
events that frame caused (usually none).  Inside, each frame goes through:

1. the change gate (a ~100 px copy): while anything moves (a hand, its
   shadow, a card in flight, blur) nothing is read;
2. once the picture has been still for a few frames and differs from the one
   the current table was read from, a few consecutive frames are analysed;
3. their readings are matched to the cards already known (`identity`), voted
   together (presence, chain links, identity), and compared with the settled
   table: a change the game can explain goes to the referee, one it cannot
   puts the tracker in "desync, waiting for the table" until it can.

What the analyser says is weighed against what else is known: the pixels (a
card lost or found where nothing changed is a misreading), time (a card must
stay gone before it is taken; a settled card outvoted later is renamed and
the game re-judged), the deck and, for doubtful readings only, the rules.

Every settled change goes through `companion.game.referee.Referee`, the same
referee as `judge`; nothing here knows the rules beyond asking it.

This module holds the frames-to-settled-tables part; the rest of `Tracker` lives
beside it by concern: what the pixels say about a reading (`pixels`), naming
cards (`naming`), doubtful new cards (`doubt`), dating cards found late
(`dating`), ordering the moves of one change (`gap`), the record of tables,
moves and corrections (`record`), saving and resuming (`persistence`), which links
between cards are believed (`links`), and pure helpers over tables (`tables`).
Settings and `TrackEvent` are in `settings`.
"""
from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from companion.game.cards import Card
from companion.game.deck import Deck, load_deck

from .dating import PlaceTest, SettledPictures
from .doubt import DoubtfulCards
from .frames import EncodedFrame, full_image
from .gap import OrderedSteps, cut_out
from .gate import ChangeGate
from .identity import Track, match_sightings, same_cards_apart
from .links import TableLinks
from .naming import CardNaming
from .persistence import SavedState
from .pixels import SAME_PLACE, Change, MissedSighting, PixelEvidence
from .reading import AnalyzeFn, Reading, SeenCard, parse_reading, takes_known, without_cards
from .record import MoveRecord
from .referee_link import SNAKE, RefereeLink
from .regions import Box, RegionFn, changed_box, grown, only_in
from .settings import TrackerSettings, TrackEvent
from .tables import canonical_chain, code_of, outline_share, reading_signature

__all__ = ["Tracker", "TrackerSettings", "TrackEvent"]

# of a settled card's outline, what a new card never seen in the same reading must cover to be
# that card read otherwise
OTHER_READING_SHARE = 0.25


@dataclass
class _Window:
    frames: list = field(default_factory=list)
    readings: list = field(default_factory=list)
    image: np.ndarray | None = None
    small: np.ndarray | None = None
    focus: Box | None = None      # around what changed since the table was last judged (None:
                                  # not known; the whole picture counts)
    partial: bool = False         # the readings are of the part around `focus` only

    @property
    def shape(self) -> tuple[int, ...] | None:
        return None if self.image is None else self.image.shape


class Tracker(CardNaming, DoubtfulCards, MoveRecord, SavedState, PixelEvidence, OrderedSteps, TableLinks):
    def __init__(self, analyze: AnalyzeFn, players: Sequence[str], deck: Deck | None = None,
                 settings: TrackerSettings | None = None,
                 referee_factory: Callable[..., Any] | None = None,
                 read_region: RegionFn | None = None):
        self.analyze = analyze
        self._tells_known = takes_known(analyze)
        # reads only the part of a picture around a change (`regions`); None: whole pictures
        self.read_region = read_region
        self.players = list(players)
        self.deck = deck or load_deck()
        self.settings = settings or TrackerSettings()
        self.gate = ChangeGate(self.settings.gate)
        self.referee = RefereeLink(self.players, self.deck, referee_factory)
        self.tracks: dict[int, Track] = {}
        self.chains: list[list[int]] = []          # the settled table, as track ids
        self.codes: dict[int, str] = {}            # each settled track's committed identity
        self.history: list[dict] = []              # settled tables given to the referee
        self.moves: list[dict] = []
        self.desync_reason: str | None = None
        self.source_gap = False                    # the source dropped out since the last settle
        self.unread_turn = False                   # a card was laid unread since (`_unread_change`)
        self.stats: Counter = Counter()
        self.last_frame = -1
        self.last_error: str | None = None
        self.resumed_at = 0
        self._saved_through = -1                   # a resumed game: the last frame its saved state saw
        self._next_id = 0
        self._prev_small: np.ndarray | None = None
        self._reference: np.ndarray | None = None
        self._still = 0
        self._window = _Window()
        self._pending: tuple | None = None         # a still frame left for a later reading
        self._settled_frame: int | None = None
        self._settled_image: np.ndarray | None = None
        self._settled_small: np.ndarray | None = None
        self._settled_outlines: dict[int, list] = {}
        self._force = False
        self._desync_settles = 0                   # settled readings in a row that were a desync
        self._gone_count: dict[int, int] = {}      # cards seen gone, for how many settled tables
        self._gone_since: dict[int, int] = {}      # ... and the frame they were first missed
        self._taken_waiting: dict[int, int] = {}   # complete snakes' cards gone while a change waited
        self._before_waiting: dict | None = None   # the saved game while a change waits (`state`)
        self._reread = False                       # this settle may read the last one's picture
        self._late: dict[int, int] = {}            # cards whose going is confirmed this settle
        self._rejoined: list[dict] = []            # judged tables corrected since, not yet told
        self.retired: dict[int, Track] = {}        # cards collected or taken, kept for the record
        self._facing: dict[int, dict[int, str]] = {}  # middle -> {neighbour: colour facing it}
        # the settled pictures since the table was last given to the referee, that one first:
        # when a card found late was laid is read from where its place changed among them
        self._pictures = SettledPictures(self.gate, self.settings.unmoved_fraction)
        self._deferred = 0                          # settled readings in a row left unjudged
        self._waiting: dict[int, int] = {}          # new cards of a change left unjudged -> the
                                                    # frame of the picture that first showed them
        self._waiting_links: set = set()            # ... and the links read to them then
        self._waiting_votes: dict = {}              # ... and every reading's votes on those
        self._link_votes: dict = {}                 # link -> (readings showing it, seeing both)
        self._waiting_unseen: dict[int, int] = {}   # ... and those the last reading missed
        self._waited_window: _Window | None = None  # ... and the window read then
        self._looks: Counter = Counter()            # settled tables each card was found in
        self._first_small: np.ndarray | None = None  # the picture the first table was judged from
        self._read_empty: tuple | None = None        # (frame, picture) read empty before it, when
                                                    # all its cards were laid since
        self._alone_since_first: list[tuple[np.ndarray, int]] = []  # such cards found once: where,
                                                    # and how many tables were judged then
        self._missed_sightings: list[MissedSighting] = []   # new cards that waited, then were
                                                    # missed and judged without (`_laid_while_missed`)

    # ----------------------------------------------------------------- public

    @property
    def desync(self) -> bool:
        return self.desync_reason is not None

    @property
    def table(self) -> list[list[str]]:
        """The settled table as chains of card codes."""
        return self.history[-1]["table"] if self.history else []

    def feed(self, frame_index: int, image: np.ndarray | EncodedFrame | None) -> list[TrackEvent]:
        """One frame (BGR, or JPEG bytes decoded only as far as needed; None = undecodable)."""
        fresh = frame_index > self.last_frame   # after --resume a few frames are fed again
        self.last_frame = max(self.last_frame, frame_index)
        self.stats["frames"] += fresh
        base = image.small(self.settings.gate.height) if isinstance(image, EncodedFrame) else image
        if base is None or base.ndim != 3 or base.shape[0] < 8 or base.shape[1] < 8:
            self.stats["unreadable"] += fresh
            return []
        small = self.gate.shrink(base)
        moving = self.gate.moving(small, self._prev_small)
        self._prev_small = small
        if moving:
            self.stats["moving"] += 1
            self._still = 0
            self._pending = None
            if len(self._window.readings) >= self.settings.min_readings:
                return self._settle()   # motion came back before all readings: enough were made
            if self._window.readings:
                self.stats["pauses"] += 1
                self._window = _Window()
            return []
        self._still += 1
        wait = self._still - self.settings.still_frames
        if wait < 0 or wait % self.settings.reading_gap:
            return []
        if not self._window.readings and not self.gate.differs(small, self._reference):
            self.stats["unchanged"] += 1
            return []
        image = full_image(image)
        if image is not None and not self._window.readings:
            self._window.focus = self._focus(small, image.shape)
            if self._reads_part() and wait < self.settings.reading_gap * (
                    self.settings.min_readings - self.settings.region_readings):
                # fewer readings of the part around the change are made, the last of them when
                # the last of the fewest readings of a whole picture would be: as still as long
                # (a recording that ends first has it read then, see `finish`)
                self._pending = (frame_index, image, small)
                return []
        return self._take_reading(frame_index, image, small)

    def _take_reading(self, frame_index: int, image: np.ndarray | None, small: np.ndarray
                      ) -> list[TrackEvent]:
        """Read a still frame into the window; settle it once it holds enough readings."""
        self._pending = None
        self.stats["analysed"] += 1
        try:
            if image is None:
                raise ValueError("the frame does not decode")
            reading = self._read(image, self._window.focus, small)
        except Exception as exc:  # any failure to read a frame is that frame's, not the game's
            self.stats["unreadable"] += 1
            self.last_error = f"frame {frame_index}: {exc}"
            return []
        self._window.frames.append(frame_index)
        self._window.readings.append(reading)
        self._window.image, self._window.small = image, small
        if self._window.partial:
            if len(self._window.readings) < self.settings.region_readings:
                return []
        elif len(self._window.readings) < self.settings.readings and not self._agreed():
            return []
        return self._settle()

    def _reads_part(self) -> bool:
        """The next reading is of the part around the change only (see `_read`)."""
        return self._window.focus is not None and self.read_region is not None

    def _read(self, image: np.ndarray, focus: Box, small: np.ndarray) -> Reading:
        """The analyser's reading of a picture: with a region reader and the change known
        (`_focus`), of the part around the change only -- the cards outside it are the settled
        table's, which the pixels say did not change -- else of the whole picture, told where
        the settled cards whose pixels did not change lie (`_unchanged_cards`)."""
        if not self._reads_part():
            if self._tells_known:
                return parse_reading(self.analyze(image, known=self._unchanged_cards(small, image.shape)))
            return parse_reading(self.analyze(image))
        self.stats["region_reads"] += 1
        self._window.partial = True
        part = grown(focus, self._longest_card(), image.shape)
        return only_in(parse_reading(self.read_region(image, part)), focus)

    def _unchanged_cards(self, small: np.ndarray, shape: tuple[int, ...]) -> list[np.ndarray]:
        """The outlines of the settled table's cards whose pixels did not change since it settled.

        A card laid against one of a row is often cut wrongly from it: the finder sees one
        region of paper, and an outline across the seam takes half of each card, the old one's
        reading is lost and the new card missed.  Where the pixels did not change the old card
        lies as it lay, so the reader is told so, and looks for new cards only around it."""
        test = self._unmoved_in(small, shape) if self.chains else None
        if test is None:
            return []
        return [self.tracks[t].corners for chain in self.chains for t in chain
                if test(self.tracks[t].corners)]

    def _in_place(self, reading: Reading, window: _Window) -> Reading:
        """A reading of the part around a change, with the settled cards outside that part
        seen where they lay (ids below 0, linked as they were): they did not move, as their
        pixels say.  So no card read in the part is taken for one of them (a copy of it laid
        now), and they hold their snakes where they are (a snake's cards in the part, one of
        them missed, are not pushed onto a look-alike just laid)."""
        if not window.partial:
            return reading
        x0, y0, x1, y1 = window.focus
        ids, cards = {}, list(reading.cards)
        for t in (t for chain in self.chains for t in chain):
            track = self.tracks[t]
            if not (x0 <= track.centre[0] < x1 and y0 <= track.centre[1] < y1):
                ids[t] = -1 - len(ids)
                cards.append(SeenCard(ids[t], Card.parse(self.codes.get(t) or track.identity), (),
                                      tuple(map(tuple, track.corners)), 0.0))
        chains = [tuple(ids[t] for t in run) for run in cut_out(self.chains, self.chains, set(ids))[0]]
        return Reading(tuple(cards), reading.chains + tuple(chains), reading.foreign)

    def _agreed(self) -> bool:
        """The last readings say the same thing (cards and chains) where the picture changed:
        no need to read on.  (Elsewhere the pixels say nothing happened, and a card read
        differently there is judged by them, not by another reading.)"""
        k = self.settings.agree_readings
        readings = self._window.readings
        if k < 2 or len(readings) < k:
            return False
        focus = self._window.focus
        signatures = [reading_signature(r if focus is None else only_in(r, focus), self.deck)
                      for r in readings[-k:]]
        return all(s == signatures[-1] for s in signatures)

    def annotated(self, image) -> np.ndarray | None:
        """The picture with the settled table drawn on it, and the desync banner when lost."""
        from .evidence import annotate
        image = full_image(image)
        return None if image is None else annotate(image, self)

    def end_of_source(self) -> list[TrackEvent]:
        """The recording ended while the table was still: a table read as often as a pause
        must be (`min_readings`) is settled, as if motion had come back, and a change left
        to wait for the next table is judged, so the last turn of a recording is not lost.
        (Fewer readings say too little: that table waits, and `finish` takes it as it is if
        the game is over.)"""
        events = []
        if self._pending is not None and not self._window.readings:
            events += self._take_reading(*self._pending)
        enough = self.settings.region_readings if self._window.partial else self.settings.min_readings
        if len(self._window.readings) >= enough:
            events += self._settle()
        if self._waiting and self._waited_window is not None and not self._window.readings:
            # a change left to wait for another table, which no table will follow: judged
            # now, with what its own readings said (as after the most waits allowed)
            self._window, self._waited_window = self._waited_window, None
            self._deferred = self.settings.max_deferred
            events += self._settle()
        return events

    def finish(self) -> list[TrackEvent]:
        """The draw pile is empty: the referee closes the game (late collections, winners)."""
        events = []
        if self._pending is not None and not self._window.readings:
            events += self._take_reading(*self._pending)
        events += self._settle() if self._window.readings else []
        for move in self.referee.finish():
            # the evidence of a snake collected at the end: the last judged table
            move = self._dress(move, len(self.history) - 1, at_end=True)[0] if self.history \
                else {k: v for k, v in move.items() if k != SNAKE}
            self.moves.append(move)
            events.append(TrackEvent("move", self.last_frame, move))
        return events

    def account(self) -> dict:
        """The final account in the `judge` format, with frames and counters."""
        out = {"moves": list(self.moves), **self.referee.summary()}
        out["frames"] = {"seen": self.stats["frames"], "analysed": self.stats["analysed"],
                         "unreadable": self.stats["unreadable"]}
        out["desync"] = self.desync
        return out

    def accept_table(self) -> None:
        """Leave a desync by giving the next reading to the referee as it is (a human's call)."""
        self._force = True
        self._reference = None

    # ---------------------------------------------------------------- settling

    def _new_track(self, seen, frame: int) -> Track:
        track = Track(self._next_id, seen.centre, seen.size, np.asarray(seen.corners, float),
                      first_frame=frame)
        self._next_id += 1
        self.tracks[track.id] = track
        return track

    def _settle(self) -> list[TrackEvent]:
        # the game before this table, kept for a stop while a change of it waits (`state`)
        before = copy.deepcopy(self._state_now()) if self._before_waiting is None else None
        window, self._window = self._window, _Window()
        self.stats["settles"] += 1
        n = len(window.readings)
        known = set(self.tracks)
        presence: Counter = Counter()
        links: Counter = Counter()
        latest_links: set = set()
        pairings: list[dict] = []
        readings: list[Reading] = []
        attached = self._attached()
        for frame, reading in zip(window.frames, window.readings):
            # a card the deck does not have (one colour at both ends of a middle) is a misreading
            # of something: the card is as good as not seen
            reading = without_cards(reading, {c.index for c in reading.cards
                                              if not self.deck.count(self.deck.identity(c.card))})
            pairs = match_sightings(list(self.tracks.values()), self._in_place(reading, window),
                                    self.deck, self.chains, attached, frozenset(self._gone_count),
                                    names=self.codes)
            pairs = {i: t for i, t in pairs.items() if i >= 0}
            for seen in reading.cards:
                track = self.tracks[pairs[seen.index]] if seen.index in pairs \
                    else self._new_track(seen, frame)
                pairs[seen.index] = track.id
                track.observe(seen, self.deck, frame)
            pairings.append(pairs)
            readings.append(reading)
        for new, old in same_cards_apart(pairings, self.tracks, known).items():
            self._merge_track(new, old)
            for pairs in pairings:
                pairs.update({i: old for i, t in pairs.items() if t == new})
        for pairs, reading in zip(pairings, readings):
            presence.update(set(pairs.values()))
            edges = {frozenset((pairs[a], pairs[b])) for chain in reading.chains
                     for a, b in zip(chain, chain[1:])}
            links.update(edges)
            latest_links = edges
        present = {t for t, k in presence.items() if k >= n / 2}
        # A card first seen now, in fewer of the readings than a settled card it mostly lies
        # on, is that card misread where a reading missed it: cards are laid beside cards.  So
        # is one seen as often, lying over a good part of it, but never in a reading that saw
        # it: the two are one card read two ways (an outline cut across it, read as another).
        placed = {t for chain in self.chains for t in chain}
        seen_in = [set(pairs.values()) for pairs in pairings]

        def read_otherwise(t: int, u: int) -> bool:
            share = outline_share(self.tracks[u].corners, self.tracks[t].corners)
            if presence[u] > presence[t]:
                return share >= SAME_PLACE
            return presence[u] == presence[t] and share >= OTHER_READING_SHARE \
                and not any({t, u} <= seen for seen in seen_in)

        present -= {t for t in present - known if any(read_otherwise(t, u) for u in present & placed)}
        self._looks.update(present)
        waited, self._waiting = {**self._waiting_unseen, **self._waiting}, {}   # with their votes
        self._waited_window = None
        self._waiting_links = set()
        # A link is judged only by the readings that saw both its cards: a card missed
        # in one reading says nothing about whether it touches its neighbour.  The readings
        # of the tables a waiting card was left unjudged in vote on its links too: one still
        # picture misses or misreads a card's link the same way in every frame.
        carried, self._waiting_votes = self._waiting_votes, {}
        self._link_votes = {e: (links[e] + carried.get(e, (0, 0))[0],
                                sum(e <= seen for seen in seen_in) + carried.get(e, (0, 0))[1])
                            for e in set(links) | set(carried)}
        share = {e: k / both for e, (k, both) in self._link_votes.items()
                 if e <= present and k and k >= both / 2}
        edges = self._believed_links(share)
        self._reference = window.small

        events = self._compare(present, edges, latest_links, window, waited)
        self._keep_state_while_waiting(before)
        self._reread = False
        if any(len(c) > 1 and all(t in self._gone_count for t in c) for c in self.chains):
            # a snake gone at once counts as taken only at the next settled table; the gate
            # must not call that table unchanged, or a table left still never confirms it
            self._reference = None
            self._reread = True
        placed = {t for chain in self.chains for t in chain}
        self._waiting_unseen = self._still_waiting(waited, present, placed)
        for t in list(self.tracks):
            if (t not in known or t in waited) and t not in placed | set(self._waiting) \
                    | set(self._waiting_unseen) \
                    and t not in self.codes:
                if t in waited:
                    self._remember_missed(t, waited[t], window)
                del self.tracks[t]        # a tentative card that did not last
                self._looks.pop(t, None)
        return events

    def _still_waiting(self, waited: dict[int, int], present: set, placed: set) -> dict[int, int]:
        """Of the cards that waited (card -> frame first showing it), those this reading missed
        that wait on.  A waiting card missed is not forgotten at once: the reader misses a card
        in every frame of a still picture, and the next one may show it again (then it is dated
        by when it was first seen, not taken for a card that was never laid).  One that lies
        where a placed card lies is forgotten: the reader took it there for a new card, judged
        so, and kept it would be a second card on the same place."""
        return {t: f for t, f in waited.items() if t not in present | placed
                and t not in self._waiting and t not in self._waiting_unseen
                and not any(outline_share(self._track(u).corners, self._track(t).corners) >= SAME_PLACE
                            for u in placed)}

    def _first_table_apart(self, change: Change, window: _Window, waited: dict[int, int],
                           unmoved: PlaceTest, forced: bool) -> list[TrackEvent] | None:
        """The first table after one read empty, judged as two when it can be: the cards whose
        places have not changed since lay there already (play starts with a card on the table;
        the reader missed it), and the others were laid since, in turn.  None: one table."""
        present, edges, latest = change.present, change.edges, change.latest
        there = {t for t in present if unmoved(self.tracks[t].corners)}
        if not there:
            # (a card laid against it may nudge it: a single card only nudged lay there)
            moved_a_little = self._nudged(window)
            nudged = {t for t in present if moved_a_little(self.tracks[t].corners)}
            there = nudged if len(nudged) == 1 else there
        if there and there != present and not forced:
            start = _Window([self._settled_frame], image=self._settled_image,
                            small=self._settled_small)
            return self._compare(there, {e for e in edges if e <= there},
                                 {e for e in latest if e <= there}, start, {}) \
                + self._compare(present, edges, latest, window, waited)
        # (every card of it laid since the empty picture, unless the reader missed the card
        # play started with there too; `_there_from_start`)
        self._read_empty = None if there else (self._settled_frame, self._settled_small)
        return None

    def _compare(self, present: set, edges: set, latest: set, window: _Window,
                 waited: dict[int, int]) -> list[TrackEvent]:
        frame = window.frames[0]
        before = {t for chain in self.chains for t in chain}
        change = Change(present, edges, latest, before, present - before, before - present)
        unmoved = self._unmoved(window)
        forced = self._force or self._desync_settles >= self.settings.accept_after
        if not self.history and unmoved is not None:
            events = self._first_table_apart(change, window, waited, unmoved, forced)
            if events is not None:
                return events
        # Before the first table is judged every card found is part of where play starts; a
        # table taken as it is keeps what the reader found.
        if unmoved is not None and self.history and not forced:
            change = self._weigh_pixels(change, window, waited, unmoved)
        elif forced and self.history:
            # A table taken as it is after a desync is still dated by the pictures kept
            # while lost: each card laid meanwhile was laid by the first one that shows its
            # place as it is now, not all at once (which the referee calls a foul).
            change.late_found = self._pictures.laid_unseen(
                {t: self.tracks[t].corners for t in change.added}, window.small, window.shape)
        present, edges, latest, before = change.present, change.edges, change.latest, change.before
        if self.history and not forced:
            # (a card just laid, read touching nothing, a little short of a snake's end)
            edges = edges | self._links_to_laid(change.added, present, edges)
        added, gone, unseen, late_found = change.added, change.gone, change.unseen, change.late_found
        ghost_links = change.ghost_links
        # A card seen gone (and the pixels agree something happened there) only counts as
        # gone once it stays gone: a hand or a cup resting on it, or a look-alike shadow,
        # pass.  A complete snake is the exception: taking it is the game.
        if not forced and self._completed_unseen(gone):
            self.stats["completed_unseen"] += 1
        complete = {t for c in self.chains if all(t in gone for t in c) and self._is_complete(c)
                    for t in c}
        # Whole chains gone are takes awaiting confirmation; cards missing from chains that
        # are still there are what a covered or moved camera looks like.
        whole = {t for c in self.chains if all(t in gone for t in c) for t in c}
        # Reading the same still picture again (to confirm a snake taken) is no new evidence
        # that a single card is gone: the reader misses it there the same way.
        counted = gone if not self._reread else gone & whole
        # (a complete snake is taken once gone; gone while a change waited, it went then)
        taken_then = {t: f for t, f in self._taken_waiting.items() if t in complete}
        since = {t: self._gone_since.get(t, frame) for t in gone - complete} | taken_then
        sure = complete | {t for t, first in since.items()
                           if self._gone_count.get(t, 0) + (t in counted) >= self.settings.confirm_take}
        hidden = gone - sure
        late = (sure - complete) | set(taken_then)   # gone since an earlier settle: judged as of then
        taken = [c for c in self.chains if all(t in sure for t in c)]
        problem = None
        if forced:
            # Told to, or the table has stayed unexplainable for several settled readings:
            # give it to the referee as it is rather than lose the rest of the game.
            self._force = False
        elif len(hidden - whole) > max(2, self.settings.max_hidden * len(before)):
            problem = f"{len(hidden - whole)} cards of the table are hidden or gone"
        elif len(added) > (self.settings.max_gap_cards if self.source_gap
                           else self.settings.max_new_cards + len(late_found) + self.unread_turn) \
                and self.history:
            problem = f"{len(added)} new cards at once"
        # A new card beside a card no reading of this table saw, or linked only to a card
        # not believed laid, cannot be judged: which cards it touches was not read.  The
        # change waits for the next settled table (its cards are then found late, in order);
        # the game is never told a guess.
        # (a chain of several cards gone at once is a taking awaiting confirmation, not cards
        # the reader missed, unless the new card lies on its place: then it was pushed aside
        # to make room, and the reader missed it where it lies now; one card gone may be either,
        # unless a snake went with it: a card completing two chains joins them, and both go)
        gone_whole = [c for c in self.chains if all(t in gone for t in c)]
        taking = {t for c in gone_whole if len(c) > 1 or any(len(o) > 1 for o in gone_whole) for t in c}
        # (a card missed in a snake pushed or carried to make room for a join went with it)
        pushed = self._pushed_places(hidden - taking, present - unseen)
        # (one whose every end was read touching a card cannot touch an unseen one as well)
        blind = {t for t in added if any(t in e for e in ghost_links)
                 or (not self._ends_taken(t, edges)
                     and any(self._beside(t, u, pushed.get(u)) for u in unseen | (hidden - taking)))
                 or any(self._on_place_of(t, u) for u in hidden & taking)}
        # Nor is a new card read doubtfully: a still picture is misread the same way in every
        # frame, and the next settled table is read afresh.  It waits, as above.
        unsure = self._doubtful(added - set(waited), present, window) if self.history else set()
        # (unless it closes a snake: the snake is collected before another table is read)
        unread = self._closing(unsure, present, edges)
        unsure -= unread
        # Nor can a change be judged while a card left waiting is missed: judged now, this
        # change would come before that card's.  (It is missed the same way in every frame
        # of a still picture; the next table may show it.)
        lost = set(waited) - present - set(self._waiting_unseen)
        # (but one read weakly across two settled cards was the seam between them misread)
        lost -= {t for t in self._read_weakly(lost, window) if self._over_settled(t, present - added)}
        if problem is None and (blind or unsure or lost) and not forced:
            if self._deferred < self.settings.max_deferred:
                # (a card missed before and found in this table is not going, though the change
                # waits: missed again later, it is not gone twice)
                for t in present & set(self._gone_count):
                    del self._gone_count[t]
                    self._gone_since.pop(t, None)
                # (only a fresh picture counts here: a card waits on the place of that snake,
                # and a snake the reader lost in one picture is lost again in a re-reading)
                return self._defer(window, added, late_found, hidden,
                                   counted & taking if blind and not self._reread else set(), edges,
                                   complete)
            if blind:
                problem = f"{len(blind)} new cards lie beside cards the camera cannot see"
        if problem is None and self.history and not forced:
            # A new card still read weakly, as a card whose every copy is out, once its change
            # has waited for fresh tables, is a misreading (of a cloth's pattern, a hand's
            # shadow), not a move: it is left out, and found again it is new again.
            misread = self._misread(added, present, window)
            self.stats["misread"] += len(misread)
            present -= misread
            added -= misread
            unread -= misread
            edges = {e for e in edges if not e & misread}
            for t in misread:
                late_found.pop(t, None)
        if problem is None:
            self._gone_count = {t: self._gone_count.get(t, 0) + (t in counted) for t in hidden}
            self._gone_since = {t: since[t] for t in hidden}
            self._taken_waiting = {}
            self._late = {t: since[t] for t in late}
        if problem is None and hidden:
            present |= hidden
            self._restore_links(hidden, present, edges)
        chains = self._chains_of(present, edges, latest, before) if problem is None else None
        if problem is None and chains is None:
            problem = "the cards do not form chains"
        if problem is not None:
            return self._enter_desync(problem, frame, window)

        table = self._codes_for(chains, added, unread)
        old = sorted(canonical_chain(c) for c in self.table)
        if (self.history or not table) and sorted(canonical_chain(c) for c in table) == old:
            # Nudged, shadowed, or nothing at all: the same table, no move.
            self.chains = chains
            # (a resumed game reading again the table last judged: that table's picture, its
            # settled frame the one its moves give as their evidence before)
            self._remember(window, chains, table,
                           frame=self._settled_frame if self._reread_judged(window) else None)
            self._picture(window)
            events = self._leave_desync(frame) + self._corrections(frame)
            self.unread_turn = self.unread_turn or self._unread_change(window)
            return events
        return self._judge(change, chains, table, taken, hidden, forced, window)

    def _judge(self, change: Change, chains: list[list[int]], table: list[list[str]],
               taken: list[list[int]], hidden: set, forced: bool, window: _Window
               ) -> list[TrackEvent]:
        """Give a changed table to the referee, as one move or, when cards were found late
        or the camera dropped out, as several in the order they were made (`_steps`), and
        record it.  `hidden` cards are gone for now but not yet taken."""
        frame = window.frames[0]
        added, gone, late_found = change.added, change.gone, change.late_found
        late, self._late = self._late, {}
        earlier: list[TrackEvent] = []   # re-judged already: followers hear of it whatever follows
        try:
            earlier = self._observe_removal(late, taken) if late else []
            placed = self._laid_before_judged(late_found, chains, table, window.shape) \
                if late_found and not self.source_gap else set()
            added = added - placed
            late_found = {t: k for t, k in late_found.items() if t not in placed}
            steps = self._steps(chains, table, added, taken, gone - hidden, forced, late_found)
            if steps is None:
                return earlier + self._enter_desync(
                    f"{len(added)} new cards at once, and no order of moves explains them", frame)
            judged = [self.referee.observe(step.table, frame if step.frame is None else step.frame)
                      for step in steps]
        except Exception as exc:  # the referee cannot make sense of it: say so, don't guess
            return earlier + self._enter_desync(f"table not explainable ({exc})", frame, window)

        events = self._leave_desync(frame) + earlier
        before_outlines = dict(self._settled_outlines)
        before_image, before_frame = self._settled_image, self._settled_frame
        self.chains = chains
        for t in {t for c in chains for t in c}:
            self.codes.setdefault(t, self.deck.identity(Card.parse(
                code_of({"tracks": chains, "table": table}, t))).code)
        self._remember(window, chains, table)
        self._pictures.restart(window.frames[-1], window.small)
        if not self.history:
            self._first_small = window.small
        for step, moves in zip(steps, judged):
            entry = {"frame": step.frame if step.frame is not None else frame,
                     "table": step.table, "tracks": step.tracks,
                     "evidence": {"before": before_frame, "after": window.frames[-1]},
                     "added": sorted(step.added), "taken": step.taken}
            if len(steps) > 1:
                entry["gap"] = {"cards": len(steps), "order_sure": step.order_sure}
            self.history.append(entry)
            events.append(TrackEvent("table", frame, {"frame": frame, "table": step.table}))
            for move in moves:
                move, after_ids, before_ids = self._dress(move, len(self.history) - 1)
                self.moves.append(move)
                events.append(TrackEvent(
                    "move", frame, move, (before_image, window.image),
                    ([before_outlines[t] for t in before_ids if t in before_outlines],
                     [self._settled_outlines[t] for t in after_ids if t in self._settled_outlines])))
        for t in gone - hidden:
            self.codes.pop(t, None)
            self.retired[t] = self.tracks.pop(t)
        return events + self._corrections(frame)

    def source_offline(self) -> None:
        """The source dropped out: turns may pass unseen until the table settles again."""
        self.source_gap = True

    def on_source_status(self, status) -> None:
        """`watch`'s status callback: a source going offline is a drop-out."""
        if not status.online:
            self.source_offline()

    def _focus(self, small: np.ndarray, shape: tuple[int, ...]) -> Box | None:
        """The box around what changed since the table was last judged, grown by more than a
        card's length, when that table is known well enough to stand for the rest of the
        picture: no change waits, no card awaits confirmation of its going, the camera did not
        drop out.  None: the whole picture counts.  (Changes since the last judged picture, not
        the last settled one: a card the reader missed when laid is looked for again.)
        (Measured: a box also grown around the cards waiting or awaiting confirmation, read
        instead of the whole picture, made a phantom move with a fallible reader.)"""
        judged = self._pictures.judged
        if not self.chains or self.desync or self._waiting or self._waiting_unseen \
                or self._gone_since or self.source_gap \
                or self._force or self._deferred or judged is None or self._settled_image is None \
                or self._settled_image.shape != shape:
            return None
        return changed_box(self.gate, small, judged, shape,
                           self.settings.region_reach * self._longest_card())

    def _longest_card(self) -> float:
        """The longest side of a settled card's outline, in pixels."""
        return max(float(np.linalg.norm(np.diff(self.tracks[t].corners, axis=0), axis=1).max())
                   for chain in self.chains for t in chain)

    def _defer(self, window: _Window, added: set, late_found: dict[int, int],
               missing: set, counted: set, edges: set, taken: set) -> list[TrackEvent]:
        """Leave this change unjudged: its new cards (and their readings) wait for the next
        settled table, where they are found late and judged in order; meanwhile they move
        with the snakes they were read linked to (`edges`, see `_attached`).  Cards seen gone
        in it (`missing`) are gone since its picture if they stay gone: a snake taken in the
        turn whose card waits is judged with that card, not with the next turn's.  A new card
        on the place of a snake gone whole waits for its taking to be confirmed, which must
        not wait for the card in turn: this table counts towards it (`counted`).  (Nothing
        else does: a lone card missed stays unconfirmed, so a card beside it is never judged
        on a guess, and a misread card waiting is no evidence that its neighbours went.)
        A complete snake gone whole (`taken`) needs no confirming, but it too went here: taken
        in the turn of the waiting card, before it is laid."""
        for t in missing:
            self._gone_since.setdefault(t, window.frames[-1])
            self._gone_count[t] = self._gone_count.get(t, 0) + (t in counted)
        for t in taken:
            self._taken_waiting.setdefault(t, window.frames[-1])
        self._waiting_links = {e for e in edges if e & added}
        self._waiting_votes = {e: v for e, v in self._link_votes.items() if e & added}
        self._deferred += 1
        self.stats["deferred"] += 1
        dated = {t: self._pictures.frame(k) for t, k in late_found.items()}
        self._picture(window)
        self._waiting = {t: dated.get(t, window.frames[-1]) for t in added}
        self._waited_window = window
        return []

    def _attached(self) -> dict[int, int]:
        """Cards of a change left to wait -> a settled card they were read linked to: a card
        whose reading differs from its last one is only recognised where its snake went, so
        it moves with that snake (a push moves the waiting card too)."""
        placed = {t for c in self.chains for t in c}
        out = {}
        for edge in self._waiting_links:
            for a, b in (tuple(edge), tuple(edge)[::-1]):
                if a in self._waiting and b in placed:
                    out[a] = b
        return out

    def _reread_judged(self, window: _Window) -> bool:
        """Whether a resumed game is reading again the table it was last judged from, on frames
        its saved state had seen (`resume_frame`), for want of that table's picture."""
        return not len(self._pictures) and window.frames[-1] <= self._saved_through

    def _picture(self, window: _Window) -> None:
        """Keep a settled picture: a card found later is dated by where its place changed."""
        self._pictures.keep(window.frames[-1], window.small)

    def _enter_desync(self, reason: str, frame: int, window: _Window | None = None
                      ) -> list[TrackEvent]:
        was = self.desync
        if window is not None:   # cards laid while lost are dated by where their place changed
            self._picture(window)
        self.desync_reason = reason
        self.stats["desync_settles"] += 1
        self._desync_settles += 1
        if was:
            return []
        return [TrackEvent("desync", frame, {"frame": frame, "desync": True, "reason": reason})]

    def _leave_desync(self, frame: int) -> list[TrackEvent]:
        self._desync_settles = 0
        self._deferred = 0
        self.source_gap = self.unread_turn = False
        if not self.desync:
            return []
        self.desync_reason = None
        return [TrackEvent("resync", frame, {"frame": frame, "desync": False})]
