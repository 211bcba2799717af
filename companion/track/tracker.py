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
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import cv2
import numpy as np

from companion.game.cards import Card, Kind
from companion.game.chains import is_complete
from companion.game.deck import Deck, load_deck

from .frames import EncodedFrame, full_image
from .gate import ChangeGate, GateSettings
from .identity import Track, match_sightings
from .reading import AnalyzeFn, Reading, parse_reading
from .referee_link import RefereeLink


@dataclass(frozen=True)
class TrackerSettings:
    # Stillness is what separates a settled table from a hand pausing while it lays a card
    # (a pause of a few tenths of a second); see `for_fps`.
    still_frames: int = 3         # frames equal to their predecessor before the table is read
    readings: int = 3             # readings of one still table voted together, at most
    agree_readings: int = 2       # ... fewer when this many in a row say exactly the same
    min_readings: int = 2         # fewer before motion resumes was a pause, not a settled table
    reading_gap: int = 1          # read every n-th still frame (spreads readings at high fps)
    max_new_cards: int = 2        # more new cards at once cannot be one turn: desync
    max_hidden: float = 0.34      # share of the table that may be hidden before it is a desync
    unmoved_fraction: float = 0.1 # under this share of changed pixels, nothing happened at a card
    confirm_take: int = 2         # settled tables a card must be missed in to count as gone
    accept_after: int = 3         # unexplainable settled readings in a row before taking the table
    doubt_ratio: float = 2.0      # a leading reading weaker than this times the next is doubtful
    correction_ratio: float = 3.0 # a settled card is renamed when another reading outweighs it so
    gate: GateSettings = field(default_factory=GateSettings)

    @classmethod
    def for_fps(cls, fps: float | None, **overrides) -> "TrackerSettings":
        """Settings whose waits last the same time whatever the frame rate (tuned at 10 fps)."""
        fps = fps if fps and 1 <= fps <= 240 else 10.0
        return cls(**{"still_frames": max(2, round(0.3 * fps)),
                      "reading_gap": max(1, round(0.1 * fps)), **overrides})


@dataclass
class TrackEvent:
    kind: str                     # move | table | desync | resync
    frame: int
    data: dict                    # JSON-ready
    stills: tuple = (None, None)  # (before, after) pictures for a move's evidence
    outlines: tuple = ((), ())    # the involved cards' corners in those pictures


@dataclass
class _Window:
    frames: list = field(default_factory=list)
    readings: list = field(default_factory=list)
    image: np.ndarray | None = None
    small: np.ndarray | None = None


class Tracker:
    def __init__(self, analyze: AnalyzeFn, players: Sequence[str], deck: Deck | None = None,
                 settings: TrackerSettings | None = None,
                 referee_factory: Callable[..., Any] | None = None):
        self.analyze = analyze
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
        self.stats: Counter = Counter()
        self.last_frame = -1
        self.last_error: str | None = None
        self.resumed_at = 0
        self._next_id = 0
        self._prev_small: np.ndarray | None = None
        self._reference: np.ndarray | None = None
        self._still = 0
        self._window = _Window()
        self._settled_frame: int | None = None
        self._settled_image: np.ndarray | None = None
        self._settled_small: np.ndarray | None = None
        self._settled_outlines: dict[int, list] = {}
        self._force = False
        self._desync_settles = 0                   # settled readings in a row that were a desync
        self._gone_count: dict[int, int] = {}      # cards seen gone, for how many settled tables
        self._gone_since: dict[int, int] = {}      # ... and the frame they were first missed
        self._late: dict[int, int] = {}            # cards whose going is confirmed this settle
        self.retired: dict[int, Track] = {}        # cards collected or taken, kept for the record
        self._facing: dict[int, dict[int, str]] = {}  # middle -> {neighbour: colour facing it}

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
        moving = self.gate.differs(small, self._prev_small)
        self._prev_small = small
        if moving:
            self.stats["moving"] += 1
            self._still = 0
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
        self.stats["analysed"] += 1
        image = full_image(image)
        try:
            if image is None:
                raise ValueError("the frame does not decode")
            reading = parse_reading(self.analyze(image))
        except Exception as exc:  # any failure to read a frame is that frame's, not the game's
            self.stats["unreadable"] += 1
            self.last_error = f"frame {frame_index}: {exc}"
            return []
        self._window.frames.append(frame_index)
        self._window.readings.append(reading)
        self._window.image, self._window.small = image, small
        if len(self._window.readings) < self.settings.readings and not self._agreed():
            return []
        return self._settle()

    def _agreed(self) -> bool:
        """The last readings say the same thing (cards and chains): no need to read on."""
        k = self.settings.agree_readings
        readings = self._window.readings
        if k < 2 or len(readings) < k:
            return False
        first = _signature(readings[-1], self.deck)
        return all(_signature(r, self.deck) == first for r in readings[-k:-1])

    def annotated(self, image) -> np.ndarray | None:
        """The picture with the settled table drawn on it, and the desync banner when lost."""
        from .evidence import annotate
        image = full_image(image)
        return None if image is None else annotate(image, self)

    def finish(self) -> list[TrackEvent]:
        """The draw pile is empty: the referee closes the game (late collections, winners)."""
        events = self._settle() if self._window.readings else []
        for move in self.referee.finish():
            events.append(self._move_event(move, [], []))
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

    # ------------------------------------------------------------ persistence

    STATE_VERSION = 1

    def state(self) -> dict:
        """Everything needed to go on with this game later (JSON-ready, small)."""
        return {"version": self.STATE_VERSION, "players": self.players,
                "last_frame": self.last_frame, "resume_frame": self.resume_frame,
                "next_id": self._next_id,
                "tracks": [t.to_dict() for t in self.tracks.values()],
                "retired": [t.to_dict() for t in self.retired.values()],
                "facing": {str(t): {str(n): c for n, c in f.items()} for t, f in self._facing.items()},
                "chains": self.chains, "codes": {str(k): v for k, v in self.codes.items()},
                "history": self.history, "moves": self.moves,
                "desync_reason": self.desync_reason, "stats": dict(self.stats),
                "settled_frame": self._settled_frame,
                "gone": [[t, self._gone_count[t], self._gone_since.get(t)] for t in self._gone_count],
                "settled_outlines": {str(k): v for k, v in self._settled_outlines.items()}}

    @property
    def resume_frame(self) -> int:
        """Where a stopped recording should be picked up again: readings not yet settled are
        read again, and the frames before them give the gate its sense of stillness."""
        first = self._window.frames[0] if self._window.frames else self.last_frame + 1
        return max(0, first - self.settings.still_frames)

    def restore(self, state: dict) -> None:
        """Continue the game a `state()` describes; the referee is rebuilt by replaying its tables."""
        if state.get("version") != self.STATE_VERSION:
            raise ValueError(f"tracker state version {state.get('version')!r} is not "
                             f"{self.STATE_VERSION}")
        if list(state["players"]) != self.players:
            raise ValueError(f"the saved game is between {', '.join(state['players'])}, "
                             f"not {', '.join(self.players)}")
        self.tracks = {int(d["id"]): Track.from_dict(d) for d in state["tracks"]}
        self.retired = {int(d["id"]): Track.from_dict(d) for d in state.get("retired", [])}
        self._facing = {int(t): {int(n): c for n, c in f.items()}
                        for t, f in state.get("facing", {}).items()}
        self.chains = [list(map(int, c)) for c in state["chains"]]
        self.codes = {int(k): v for k, v in state["codes"].items()}
        self.history = list(state["history"])
        self.moves = list(state["moves"])
        self.desync_reason = state.get("desync_reason")
        self.stats = Counter(state.get("stats", {}))
        self.last_frame = int(state["last_frame"])
        self.resumed_at = int(state.get("resume_frame", self.last_frame + 1))
        self._next_id = int(state["next_id"])
        self._settled_frame = state.get("settled_frame")
        self._gone_count = {int(t): int(n) for t, n, _ in state.get("gone", [])}
        self._gone_since = {int(t): int(f) for t, _, f in state.get("gone", []) if f is not None}
        self._settled_outlines = {int(k): v for k, v in state.get("settled_outlines", {}).items()}
        self.referee.replay([(h["frame"], h["table"]) for h in self.history])

    # ---------------------------------------------------------------- settling

    def _new_track(self, seen, frame: int) -> Track:
        track = Track(self._next_id, seen.centre, seen.size, np.asarray(seen.corners, float),
                      first_frame=frame)
        self._next_id += 1
        self.tracks[track.id] = track
        return track

    def _settle(self) -> list[TrackEvent]:
        window, self._window = self._window, _Window()
        self.stats["settles"] += 1
        n = len(window.readings)
        known = set(self.tracks)
        presence: Counter = Counter()
        links: Counter = Counter()
        latest_links: set = set()
        pairings: list[dict] = []
        for frame, reading in zip(window.frames, window.readings):
            pairs = match_sightings(list(self.tracks.values()), reading, self.deck, self.chains)
            for seen in reading.cards:
                track = self.tracks[pairs[seen.index]] if seen.index in pairs \
                    else self._new_track(seen, frame)
                pairs[seen.index] = track.id
                track.observe(seen, self.deck, frame)
            presence.update(set(pairs.values()))
            pairings.append(pairs)
            edges = {frozenset((pairs[a], pairs[b])) for chain in reading.chains
                     for a, b in zip(chain, chain[1:])}
            links.update(edges)
            latest_links = edges
        present = {t for t, k in presence.items() if k >= n / 2}
        # A link is judged only by the readings that saw both its cards: a card missed
        # in one reading says nothing about whether it touches its neighbour.
        seen_in = [set(pairs.values()) for pairs in pairings]
        edges = {e for e, k in links.items() if e <= present
                 and k >= sum(e <= seen for seen in seen_in) / 2}
        self._reference = window.small

        events = self._compare(present, edges, latest_links, window)
        for t in list(self.tracks):
            if t not in known and not any(t in chain for chain in self.chains):
                del self.tracks[t]        # a tentative card that did not last
        return events

    def _compare(self, present: set, edges: set, latest: set, window: _Window) -> list[TrackEvent]:
        frame = window.frames[0]
        before = {t for chain in self.chains for t in chain}
        added = present - before
        gone = before - present
        unmoved = self._unmoved(window)
        if unmoved is not None:
            # The pixels have the last word on whether anything happened at a place: a card
            # the analyser lost where nothing changed is still there, and one it found where
            # nothing changed was never laid.
            # (a chain already missing at the last settle is judged by how long it stays gone)
            unseen = {t for t in gone - set(self._gone_since) if unmoved(self._track(t).corners)}
            ghosts = {t for t in added if unmoved(self.tracks[t].corners)}
            self.stats["unseen"] += len(unseen)
            self.stats["ghosts"] += len(ghosts)
            gone -= unseen
            added -= ghosts
            present = (present - ghosts) | unseen
            edges = {e for e in edges if not e & ghosts}
            self._restore_links(unseen, present, edges)
        # A card seen gone (and the pixels agree something happened there) only counts as
        # gone once it stays gone: a hand or a cup resting on it, or a look-alike shadow,
        # pass.  A complete snake is the exception: taking it is the game.
        complete = {t for c in self.chains if all(t in gone for t in c) and self._is_complete(c)
                    for t in c}
        since = {t: self._gone_since.get(t, frame) for t in gone - complete}
        sure = complete | {t for t, first in since.items()
                           if self._gone_count.get(t, 0) + 1 >= self.settings.confirm_take}
        hidden = gone - sure
        late = sure - complete           # gone since an earlier settle: judged as of then
        taken = [c for c in self.chains if all(t in sure for t in c)]
        # Whole chains gone are takes awaiting confirmation; cards missing from chains that
        # are still there are what a covered or moved camera looks like.
        whole = {t for c in self.chains if all(t in gone for t in c) for t in c}
        problem = None
        if self._force or self._desync_settles >= self.settings.accept_after:
            # Told to, or the table has stayed unexplainable for several settled readings:
            # give it to the referee as it is rather than lose the rest of the game.
            self._force = False
        elif len(hidden - whole) > max(2, self.settings.max_hidden * len(before)):
            problem = f"{len(hidden - whole)} cards of the table are hidden or gone"
        elif len(added) > self.settings.max_new_cards and self.history:
            problem = f"{len(added)} new cards at once"
        if problem is None:
            self._gone_count = {t: self._gone_count.get(t, 0) + 1 for t in hidden}
            self._gone_since = {t: since[t] for t in hidden}
            self._late = {t: since[t] for t in late}
        if problem is None and hidden:
            present |= hidden
            self._restore_links(hidden, present, edges)
        chains = _paths(present, edges) if problem is None else None
        if problem is None and chains is None:
            chains = _paths(present, {e for e in latest if e <= present} | set())
            if chains is None:
                problem = "the cards do not form chains"
        if problem is not None:
            return self._enter_desync(problem, frame)

        table = self._codes_for(chains, added)
        old = sorted(_canonical(c) for c in self.table)
        if (self.history or not table) and sorted(_canonical(c) for c in table) == old:
            # Nudged, shadowed, or nothing at all: the same table, no move.
            self.chains = chains
            self._remember(window, chains, table)
            return self._leave_desync(frame) + self._corrections(frame)
        late, self._late = self._late, {}
        try:
            earlier = self._observe_removal(late, taken) if late else []
            moves = self.referee.observe(table, frame)
        except Exception as exc:  # the referee cannot make sense of it: say so, don't guess
            return self._enter_desync(f"table not explainable ({exc})", frame)

        events = self._leave_desync(frame) + earlier
        before_outlines = dict(self._settled_outlines)
        before_image = self._settled_image
        self.chains = chains
        for t in {t for c in chains for t in c}:
            self.codes.setdefault(t, self.deck.identity(Card.parse(
                _code_of({"tracks": chains, "table": table}, t))).code)
        entry = {"frame": frame, "table": table, "tracks": chains,
                 "evidence": {"before": self._settled_frame, "after": window.frames[-1]},
                 "added": sorted(added), "taken": taken}
        self.history.append(entry)
        self._remember(window, chains, table)
        events.append(TrackEvent("table", frame, {"frame": frame, "table": table}))
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

    def _observe_removal(self, late: dict[int, int], taken: list[list[int]]) -> list[TrackEvent]:
        """Cards whose going is confirmed only now left when first missed: the referee sees
        that table first, so a removal is not merged with the move that followed it."""
        first = min(late.values())
        entry = self.history[-1]
        runs: list[list[int]] = []
        for ids in self.chains:
            run: list[int] = []
            for t in list(ids) + [None]:
                if t is None or t in late:
                    if run:
                        runs.append(run)
                    run = []
                else:
                    run.append(t)
        table = [[_code_of(entry, t) or self._track(t).identity for t in run] for run in runs]
        moves = self.referee.observe(table, first)
        self.history.append({"frame": first, "table": table, "tracks": runs,
                             "evidence": {"before": entry["evidence"]["after"], "after": first},
                             "added": [], "taken": [c for c in taken if all(t in late for t in c)]})
        self.chains = runs
        events = [TrackEvent("table", first, {"frame": first, "table": table})]
        for move in moves:
            move, _, before_ids = self._dress(move, len(self.history) - 1)
            self.moves.append(move)
            events.append(TrackEvent("move", first, move))
        return events

    def _is_complete(self, chain: list[int]) -> bool:
        entry = self.history[-1] if self.history else None
        codes = [(_code_of(entry, t) if entry else None) or self._track(t).identity for t in chain]
        return is_complete([Card.parse(c) for c in codes])

    def _restore_links(self, kept: set, present: set, edges: set) -> None:
        """Give cards kept in place though unseen the links they had in the settled table."""
        for chain in self.chains:
            for a, b in zip(chain, chain[1:]):
                if (a in kept or b in kept) and a in present and b in present:
                    edges.add(frozenset((a, b)))

    def _unmoved(self, window: _Window):
        """A test `corners -> bool`: did the pixels under that outline stay as they were when
        the table last settled?  None when there is no settled picture to compare with."""
        before, now, image = self._settled_small, window.small, window.image
        if before is None or now is None or image is None or before.shape != now.shape:
            return None
        changed = self.gate.changed_mask(now, before)
        scale = np.array([now.shape[1] / image.shape[1], now.shape[0] / image.shape[0]])

        def unmoved(corners) -> bool:
            region = np.zeros(changed.shape, np.uint8)
            pts = np.round(np.asarray(corners, float) * scale).astype(np.int32)
            cv2.fillConvexPoly(region, pts, 1)
            inside = region.astype(bool)
            return inside.sum() > 0 and changed[inside].mean() < self.settings.unmoved_fraction
        return unmoved

    def _track(self, t: int) -> Track:
        return self.tracks[t] if t in self.tracks else self.retired[t]

    def _dress(self, move: dict, at: int) -> tuple[dict, list[int], list[int]]:
        """A referee move with what the camera adds: the cards involved and the evidence frames."""
        entry = self.history[at]
        previous = self.history[at - 1] if at > 0 else None
        move = dict(move)
        code = move.get("card")
        laid = [t for t in entry["added"] if code and _same(_code_of(entry, t), code)]
        if move.get("action") == "collect" or (move.get("collected") and not laid):
            after_ids, before_ids = laid, [t for chain in entry["taken"] for t in chain]
        else:
            after_ids, before_ids = laid or list(entry["added"]), []
        move["cards"] = [self._card_json(t, entry) for t in after_ids] + \
            [self._card_json(t, previous) for t in before_ids if previous]
        move["evidence"] = dict(entry["evidence"])
        return move, after_ids, before_ids

    def _corrections(self, frame: int) -> list[TrackEvent]:
        """Re-name a settled card whose readings have since clearly outvoted its first name,
        and re-judge the game from the corrected tables (the referee is replayed)."""
        changed = []
        for t, committed in list(self.codes.items()):
            track = self.tracks[t]
            leader, weight = track.ranked()[0]
            if leader != committed and track.sightings >= 6 and \
                    weight >= self.settings.correction_ratio * track.votes.get(committed, 0.0):
                self.codes[t] = leader
                changed.append((t, committed, leader))
        if not changed:
            return []
        for entry in self.history:
            for ids, codes in zip(entry["tracks"], entry["table"]):
                for i, t in enumerate(ids):
                    if any(t == c[0] for c in changed):
                        codes[i] = self._track(t).oriented(
                            self.codes[t], *_neighbours(self._all_tracks(), ids, i))
        old_moves = self.moves
        frames = {e["frame"]: k for k, e in enumerate(self.history)}
        replayed = self.referee.replay([(e["frame"], e["table"]) for e in self.history])
        self.moves = [self._dress(m, frames[m["frame"]])[0] for m in replayed]
        for new, old in zip(self.moves, old_moves):
            if "stills" in old:
                new["stills"] = old["stills"]
        return [TrackEvent("correction", frame, {
            "frame": frame, "track": t, "from": before, "to": after,
            "since": self._track(t).first_frame, "moves": self.moves}) for t, before, after in changed]

    def _all_tracks(self) -> dict:
        return {**self.retired, **self.tracks}

    def _remember(self, window: _Window, chains: list[list[int]], table: list) -> None:
        for ids, codes in zip(chains, table):
            for i, t in enumerate(ids):
                self._facing[t] = _facing(ids, codes, i)
        self._settled_frame = window.frames[-1]
        self._settled_image = window.image
        self._settled_small = window.small
        self._settled_outlines = {t: self.tracks[t].corners.tolist()
                                  for c in chains for t in c}

    def _card_json(self, t: int, entry: dict | None) -> dict:
        track = self._track(t)
        ranked = track.ranked()
        total = sum(w for _, w in ranked) or 1.0
        code = _code_of(entry, t) if entry else None
        return {"code": code or self.codes.get(t, track.identity), "track": t,
                "confidence": round(ranked[0][1] / total, 3),
                "corners": [[round(x, 1), round(y, 1)] for x, y in track.corners.tolist()]}

    def _codes_for(self, chains: list[list[int]], added: set) -> list[list[str]]:
        """Card codes for the chains: committed identities for known cards, resolved ones for new."""
        identity = {t: self.codes.get(t) or self.tracks[t].identity for c in chains for t in c}
        doubtful = [t for t in added if not self.tracks[t].is_clear(self.settings.doubt_ratio)]
        if doubtful:
            identity.update(self._resolve(chains, identity, doubtful))
        out = []
        for chain in chains:
            codes = []
            for i, t in enumerate(chain):
                codes.append(self._orient(t, identity[t], chain, i))
            out.append(codes)
        return out

    def _orient(self, t: int, code: str, chain: list[int], i: int) -> str:
        """A middle's colours in chain order.  The end that touched a neighbour before still
        touches it (cards do not turn over on the table); otherwise the card's geometry says."""
        card = Card.parse(code)
        if card.kind is Kind.MIDDLE:
            facing = self._facing.get(t, {})
            prev = facing.get(chain[i - 1]) if i > 0 else None
            nxt = facing.get(chain[i + 1]) if i + 1 < len(chain) else None
            if prev in card.colours:
                return card.code if card.colours[0] == prev else card.flipped().code
            if nxt in card.colours:
                return card.code if card.colours[1] == nxt else card.flipped().code
        return self._track(t).oriented(code, *_neighbours(self._all_tracks(), chain, i))

    def _resolve(self, chains, identity: dict, doubtful: list[int]) -> dict[int, str]:
        """Settle doubtful new cards with what is known.

        Only readings of comparable weight (at least half the leader's) are
        candidates, so the rules never overrule clear evidence; among them a card
        the deck still holds comes first, then one whose placement is legal,
        then the heavier reading.
        """
        choice: dict[int, str] = {}
        for t in doubtful:
            ranked = self.tracks[t].ranked()
            top = ranked[0][1]
            others = [Card.parse(identity[u]) for c in chains for u in c if u != t]
            others += [Card.parse(code) for pile in self.referee.piles().values()
                       for snake in pile for code in snake if code != "unknown"]
            left = self.deck.remaining(others)

            def rank(option):
                code, weight = option
                trial = {**identity, **choice, t: code}
                table = [[self._orient(u, trial[u], c, i) for i, u in enumerate(c)] for c in chains]
                available = left[self.deck.identity(Card.parse(code))] > 0
                return (available, self.referee.would_be_legal(table), weight)
            options = [(code, w) for code, w in ranked[:3] if w >= 0.5 * top]
            choice[t] = max(options, key=rank)[0]
        return choice

    def _enter_desync(self, reason: str, frame: int) -> list[TrackEvent]:
        was = self.desync
        self.desync_reason = reason
        self.stats["desync_settles"] += 1
        self._desync_settles += 1
        if was:
            return []
        return [TrackEvent("desync", frame, {"frame": frame, "desync": True, "reason": reason})]

    def _leave_desync(self, frame: int) -> list[TrackEvent]:
        self._desync_settles = 0
        if not self.desync:
            return []
        self.desync_reason = None
        return [TrackEvent("resync", frame, {"frame": frame, "desync": False})]


def _canonical(chain: Sequence[str]) -> tuple:
    forward = tuple(chain)
    backward = tuple(Card.parse(c).flipped().code for c in reversed(chain))
    return min(forward, backward)


def _signature(reading: Reading, deck: Deck) -> list:
    """What a reading says, independent of card ids and listing order."""
    by_id = reading.by_id()
    chains = []
    for chain in reading.chains:
        codes = tuple(deck.identity(by_id[i].card).code for i in chain)
        chains.append(min(codes, codes[::-1]))
    return sorted(chains)


def _neighbours(tracks: dict, chain: list[int], i: int):
    """Directions from a chain's i-th card to the cards before and after it (None at an end)."""
    here = tracks[chain[i]].centre
    prev = tracks[chain[i - 1]].centre - here if i > 0 else None
    nxt = tracks[chain[i + 1]].centre - here if i + 1 < len(chain) else None
    return prev, nxt


def _facing(ids: list[int], codes: list[str], i: int) -> dict[int, str]:
    card = Card.parse(codes[i])
    if card.kind is not Kind.MIDDLE:
        return {}
    out = {}
    if i > 0:
        out[ids[i - 1]] = card.colours[0]
    if i + 1 < len(ids):
        out[ids[i + 1]] = card.colours[1]
    return out


def _same(a: str | None, b: str) -> bool:
    if a is None:
        return False
    return a == b or Card.parse(a).flipped().code == b


def _code_of(entry: dict, track: int) -> str | None:
    for ids, codes in zip(entry["tracks"], entry["table"]):
        for t, code in zip(ids, codes):
            if t == track:
                return code
    return None


def _paths(nodes: set, edges: set) -> list[list[int]] | None:
    """Chains from links: every node has at most two neighbours and there is no loop; else None."""
    neighbours: dict[int, list[int]] = {t: [] for t in nodes}
    for edge in edges:
        a, b = tuple(edge)
        neighbours[a].append(b)
        neighbours[b].append(a)
    if any(len(v) > 2 for v in neighbours.values()):
        return None
    seen: set = set()
    chains = []
    for start in sorted(nodes):
        if start in seen or len(neighbours[start]) == 2:
            continue
        chain, prev, here = [], None, start
        while here is not None:
            chain.append(here)
            seen.add(here)
            nxt = [n for n in neighbours[here] if n != prev]
            prev, here = here, (nxt[0] if nxt else None)
        chains.append(chain)
    if len(seen) != len(nodes):
        return None  # a loop
    return chains
