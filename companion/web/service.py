"""The live game behind the dashboard: the log, the replay, the feed loop, the fan-out.

Every change goes the same way: validate, append one event to the store (one
transaction), replay the log, publish the new state to every viewer.  Pages and
the JSON API only ever read replayed views, so what a viewer sees is always
what the log says.
"""
from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from pathlib import Path
from typing import Callable

from companion.game.cards import Card
from companion.game.deck import Deck, load_deck
from companion.game.history import Frame, GameView, Replay
from companion.store.db import Game, Store, StoreError, UnknownGame

from .advice import UNCOUNTED, DashboardAdvisor, DrawPileCounts
from .broadcast import Broadcaster, PictureBuffer
from .calibrate import calibrate_from_photos
from .feed import FeedUnavailable, TableFeed
from .picture import draw_table_jpeg, encode_jpeg, placeholder_jpeg

log = logging.getLogger(__name__)
BADGE_WAIT_SECONDS = 0.03   # an event waits this long for the snake badges, then goes without
# the log's changes to what was seen, listed with the overrides (`GET /api/moves`)
REFEREE_CHANGES = ("override", "correction", "retable", "undo")


class ActionError(ValueError):
    """A referee action that cannot be carried out; the message says why."""


def validate_table(table, deck: Deck) -> list[list[str]]:
    """A table as chains of this deck's card codes; raise ActionError on anything else."""
    if not isinstance(table, list) or not all(isinstance(c, list) and c for c in table):
        raise ActionError("a table is a list of chains, each a non-empty list of card codes")
    try:
        return [[deck.parse(code).code for code in chain] for chain in table]
    except ValueError as exc:
        raise ActionError(str(exc)) from None


class GameService:
    """One store of games, the current game's live feed, and everyone watching."""

    def __init__(self, store: Store, evidence_dir: str | Path, deck: Deck | None = None):
        self.store = store
        self.evidence_dir = Path(evidence_dir)
        self.deck = deck or load_deck()
        self.bus = Broadcaster()
        self.video = PictureBuffer(placeholder_jpeg("Waiting for the first picture..."))
        self.tracker_desync = False
        self.feed_error: str | None = None
        self._lock = threading.RLock()
        self._closed = False
        self._views: dict[str, tuple[int, GameView]] = {}
        self._counts: dict[str, tuple[int, DrawPileCounts]] = {}
        self.advisor = DashboardAdvisor(self.deck)
        self._replays: dict[str, Replay] = {}
        self._feed: TableFeed | None = None
        self._feed_thread: threading.Thread | None = None
        # The set-up page's calibration step and the photo upload's reader; both
        # replaceable (tests, a calibration profile chosen later).
        self.calibrate: Callable = calibrate_from_photos
        self.read_photo: Callable = PhotoReader()

    # -- reading

    def game(self, game_id: str | None = None) -> Game:
        if game_id:
            return self.store.game(game_id)
        game = self.store.current_game()
        if game is None:
            raise UnknownGame("no game yet: start one on the set-up page")
        return game

    def view(self, game: Game) -> GameView:
        """The game as its log says now; a new table costs one referee step, not a replay."""
        with self._lock:
            last = self.store.last_seq(game.id)
            cached = self._views.get(game.id)
            if cached and cached[0] == last:
                return cached[1]
            replayer = self._replays.get(game.id)
            if replayer is None:
                replayer = self._replays[game.id] = Replay(game.players, self.deck)
            view = replayer.view(self.store.events(game.id))
            self._views[game.id] = (view.last_seq, view)
            # the draw pile is what the referee has not accounted for: read it now,
            # while the replay's referee is at this very view
            readable = bool(view.frames) and view.frames[-1].explained
            self._counts[game.id] = (view.last_seq, self.advisor.count(
                view.table, replayer.referee.accounted(), readable, view.finished))
            return view

    def counts(self, game: Game, view: GameView | None = None) -> DrawPileCounts:
        """The draw pile and each snake's badge numbers for the game's latest view."""
        with self._lock:
            view = view or self.view(game)
            cached = self._counts.get(game.id)
            return cached[1] if cached and cached[0] == view.last_seq else UNCOUNTED

    def hint_panel(self, game: Game, lang: str, view: GameView | None = None) -> dict | None:
        """The optional hint panel (see `advice.DashboardAdvisor`); None when the table cannot be counted."""
        view = view or self.view(game)
        if view.finished:
            return None
        return self.advisor.panel(view.table, self.counts(game, view), lang)

    def drawn_card(self, game: Game, code: str, lang: str, view: GameView | None = None) -> dict | None:
        """The hint panel's advice on the card just drawn; None if it cannot be in the pile."""
        view = view or self.view(game)
        if view.finished:
            return None
        return self.advisor.drawn_card(view.table, self.counts(game, view), code, lang)

    def state_json(self, game: Game, view: GameView | None = None,
                   badge_wait: float | None = 10.0) -> dict:
        view = view or self.view(game)
        counts = self.counts(game, view)
        placed = [m for m in view.moves if m.get("action") != "none"]
        return {
            "game": game.id,
            "players": list(game.players),
            "turn": None if view.finished else view.turn,
            "table": view.table,
            "cards_left": view.cards_left,
            "desync": view.desync or (self.tracker_desync and game.id == self._current_id()),
            "finished": view.finished,
            "frame": view.frames[-1].index if view.frames else None,
            "moves": len(view.moves),
            "last_move": self.move_json(game, view.moves[-1], view) if view.moves else None,
            "placed": len(placed),
            "seq": view.last_seq,
            "source": game.source,
            "cards_left_by_colour": counts.by_colour,
            "completable_by": counts.completable_by(badge_wait),
        }

    def move_json(self, game: Game, move: dict, view: GameView | None = None) -> dict:
        out = {k: v for k, v in move.items() if k not in ("evidence", "void")}
        pictures = {}
        frames = (view or self.view(game)).frames if move.get("evidence") else []
        for side, index in (move.get("evidence") or {}).items():
            frame = frames[index] if index is not None and index < len(frames) else None
            pictures[side] = (f"/evidence/{game.id}/{frame.picture}"
                              if frame is not None and frame.picture else None)
        out["evidence"] = {"frames": move.get("evidence"), "pictures": pictures}
        out["void"] = bool(move.get("void"))
        return out

    def moves_json(self, game: Game) -> dict:
        view = self.view(game)
        return {"game": game.id,
                "moves": [self.move_json(game, m, view) for m in view.moves],
                "overrides": [e for e in view.log if e["kind"] in REFEREE_CHANGES]}

    def scores_json(self, game: Game) -> dict:
        view = self.view(game)
        return {"game": game.id, "scores": view.scores, "winners": view.winners,
                "piles": view.piles, "finished": view.finished,
                "tiebreak": explain_winners(view.scores, view.winners)}

    def _current_id(self) -> str | None:
        return self.store.setting("current_game")

    # -- changing: every change is one appended event, then a replay and a broadcast

    def _append(self, game: Game, kind: str, data: dict, settled_at: float | None = None):
        with self._lock:
            event = self.store.append(game.id, kind, data)
            view = self.view(game)
            # the moves this event made or changed, for viewers that want each one
            touched = [m for m in view.moves
                       if m["seq"] == event.seq or (m["override"] or {}).get("seq") == event.seq]
            self.publish(game, kind, view, settled_at=settled_at, moves=touched)
            return event, view

    def publish(self, game: Game, kind: str, view: GameView | None = None,
                settled_at: float | None = None, moves: list[dict] = ()) -> None:
        view = view or self.view(game)
        counts = self.counts(game, view)
        message = {"type": kind, "game": game.id, "at": time.time(),
                   "settled_at": settled_at,
                   "state": self.state_json(game, view, badge_wait=BADGE_WAIT_SECONDS),
                   "moves": [self.move_json(game, m, view) for m in moves],
                   "scores": {"scores": view.scores, "winners": view.winners,
                              "tiebreak": explain_winners(view.scores, view.winners)}}
        self.bus.publish(json.dumps(message))
        if message["state"]["completable_by"] is None and counts.countable:
            # a crowded table's badges were not ready in time: they follow on their own
            # (from a thread of its own: the badge worker must never wait for the service lock)
            counts.when_counted(lambda: threading.Thread(
                target=self._publish_advice, args=(game, view.last_seq), daemon=True).start())
        # the hint panel is worked out after the change went out, never before it
        self.advisor.prefetch(view.table, counts)

    def _publish_advice(self, game: Game, seq: int) -> None:
        with self._lock:
            if self._closed:    # badges that came after the service was closed tell no one
                return
            view = self.view(game)
            # a newer event carries newer badges anyway; a table the rules cannot read has none
            if view.last_seq == seq and self.counts(game, view).completable_by(0) is not None:
                self.publish(game, "advice", view)

    def connect_message(self) -> str:
        """What a viewer gets first on the event stream: the whole current state."""
        try:
            game = self.game()
        except UnknownGame:
            return json.dumps({"type": "hello", "game": None, "at": time.time(), "state": None})
        view = self.view(game)
        return json.dumps({"type": "hello", "game": game.id, "at": time.time(),
                           "state": self.state_json(game, view),
                           "scores": {"scores": view.scores, "winners": view.winners,
                                      "tiebreak": explain_winners(view.scores, view.winners)}})

    def new_game(self, players: list[str], source: str = "", feed: TableFeed | None = None) -> Game:
        players = [" ".join(str(p).split()) for p in players if str(p).strip()]
        if any(len(p) > 40 for p in players):
            raise ActionError("player names are at most 40 characters")
        self.stop_feed()
        try:
            game = self.store.create_game(players, source)
        except StoreError as exc:
            raise ActionError(str(exc)) from None
        self.tracker_desync = False
        self.publish(game, "new_game")
        if feed is not None:
            self.start_feed(game, feed)
        return game

    def save_picture(self, game: Game, jpeg: bytes) -> str:
        """Keep an evidence still; written before the event that names it."""
        folder = self.evidence_dir / game.id
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{int(time.time() * 1000)}-{secrets.token_hex(3)}.jpg"
        tmp = folder / (name + ".part")
        tmp.write_bytes(jpeg)
        tmp.replace(folder / name)
        return name

    def observe(self, game: Game, table, *, source_frame: int | None = None,
                jpeg: bytes | None = None, desync: bool = False, finished: bool = False,
                settled_at: float | None = None) -> GameView:
        return self._observe(game, table, source_frame, jpeg, desync, finished, settled_at)[1]

    def _observe(self, game: Game, table, source_frame: int | None, jpeg: bytes | None,
                 desync: bool, finished: bool, settled_at: float | None) -> tuple[int, GameView]:
        """`observe`, also giving the seq of the stored table event."""
        if self.view(game).finished:
            raise ActionError("this game is over: start a new one on the set-up page")
        table = validate_table(table, self.deck)
        if jpeg is None:
            # no camera picture of this table: the evidence still is the table drawn
            jpeg = draw_table_jpeg(table)
            self.video.put(jpeg)
        picture = self.save_picture(game, jpeg)
        # the end of the game is its own "finish" event, written by finish() below
        data = {"table": table, "frame": source_frame, "desync": bool(desync), "picture": picture}
        event, view = self._append(game, "table", data, settled_at=settled_at or time.time())
        if finished:
            view = self.finish(game)
        return event.seq, view

    def _find_move(self, game: Game, frame, index) -> tuple[GameView, dict]:
        view = self.view(game)
        try:
            return view, view.move_at(int(frame), int(index or 0))
        except (TypeError, ValueError):
            raise ActionError("frame and index must be whole numbers") from None
        except LookupError as exc:
            raise ActionError(str(exc)) from None

    def _frame(self, game: Game, frame) -> Frame:
        try:
            return self.view(game).frames[int(frame)]
        except (TypeError, ValueError, IndexError):
            raise ActionError(f"no frame {frame!r} in this game") from None

    @staticmethod
    def _reason(reason) -> str:
        reason = " ".join(str(reason or "").split())
        if not reason:
            raise ActionError("every override needs a reason")
        if len(reason) > 500:
            raise ActionError("a reason is at most 500 characters")
        return reason

    def override(self, game: Game, frame, index=0, *, legal=None, stands=None,
                 player=None, reason="") -> GameView:
        reason = self._reason(reason)
        _, move = self._find_move(game, frame, index)
        if legal is not None and not isinstance(legal, bool):
            raise ActionError("legal must be true or false")
        if player and player not in game.players:
            raise ActionError(f"{player!r} does not play in this game")
        if legal is None and stands is None and not player:
            raise ActionError("an override changes the verdict, whether it stands, or the player")
        final_legal = move["legal"] if legal is None else legal
        data = {"target": move["seq"], "index": move["index"], "legal": legal,
                "stands": bool(final_legal if stands is None else stands),
                "player": player or None, "reason": reason}
        return self._append(game, "override", data)[1]

    def correct(self, game: Game, frame, wrong: str, right: str, reason="") -> GameView:
        reason = self._reason(reason)
        target = self._frame(game, frame)
        try:
            wrong_card, right_card = Card.parse(wrong), self.deck.parse(right)
        except ValueError as exc:
            raise ActionError(str(exc)) from None
        if not any(Card.parse(c) in (wrong_card, wrong_card.flipped())
                   for chain in target.table for c in chain):
            raise ActionError(f"{wrong} is not on the table at frame {frame}")
        data = {"target": target.seq, "from": wrong_card.code, "to": right_card.code,
                "reason": reason}
        return self._append(game, "correction", data)[1]

    def retable(self, game: Game, frame, table, reason="", before=None,
                before_frame: int | None = None) -> GameView:
        """Judge the table at `frame` as `table` instead of what the camera read (e.g. two
        snakes that were one), and with `before` (a table) judge that table just before it
        (e.g. cards that left the table a turn earlier than the camera could tell); what was
        read stays in the log, and every move is judged again from there."""
        return self._retable(game, frame, table, reason, before, before_frame)[1]

    def _retable(self, game: Game, frame, table, reason, before, before_frame):
        """`retable`, also giving the stored event."""
        reason = self._reason(reason)
        target = self._frame(game, frame)
        data = {"target": target.seq, "table": validate_table(table, self.deck), "reason": reason}
        if before is not None:
            data["before"] = validate_table(before, self.deck)
            if isinstance(before_frame, int):
                data["before_frame"] = before_frame
        return self._append(game, "retable", data)

    def undo(self, game: Game, seq, reason="") -> GameView:
        reason = self._reason(reason)
        known = {e["seq"]: e for e in self.view(game).log}
        try:
            seq = int(seq)
        except (TypeError, ValueError):
            raise ActionError("seq must be a whole number") from None
        if seq not in known:
            raise ActionError(f"no event {seq} that can be undone")
        view = self._append(game, "undo", {"target": seq, "reason": reason})[1]
        self.store.mark_finished(game.id, view.finished)   # undoing the end reopens the game
        return view

    def finish(self, game: Game) -> GameView:
        view = self.view(game)
        if not view.finished or not any(e["kind"] == "finish" for e in view.log):
            _, view = self._append(game, "finish", {})
        self.store.mark_finished(game.id)
        return view

    # -- the live source

    def show_last_picture(self, game: Game) -> None:
        """Put the game's latest still on the video, e.g. after a restart before the camera is back."""
        pictures = [f.picture for f in self.view(game).frames if f.picture]
        if pictures:
            path = self.evidence_dir / game.id / pictures[-1]
            if path.exists():
                self.video.put(path.read_bytes())

    def start_feed(self, game: Game, feed: TableFeed) -> None:
        self.stop_feed()
        self.feed_error = None
        self._feed = feed
        self._feed_thread = threading.Thread(target=self._run_feed, args=(game.id, feed),
                                             name="table-feed", daemon=True)
        self._feed_thread.start()

    def wait_for_feed(self, timeout: float | None = None) -> None:
        """Return once the running feed has ended (its source ran out or it was stopped)."""
        thread = self._feed_thread
        if thread is not None:
            thread.join(timeout)

    def close(self) -> None:
        """Stop the feed and the advisor's workers and close the store, for good."""
        self.stop_feed()
        self.advisor.close()
        with self._lock:
            self._closed = True
            self.store.close()

    def stop_feed(self) -> None:
        feed, thread = self._feed, self._feed_thread
        self._feed = self._feed_thread = None
        if feed is not None:
            feed.close()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _run_feed(self, game_id: str, feed: TableFeed) -> None:
        game = self.store.game(game_id)
        seen = [e.data.get("frame") for e in self.store.events(game_id) if e.kind == "table"]
        start_after = max((f for f in seen if isinstance(f, int)), default=-1)
        picture = None   # the latest camera picture: the evidence of the next settled table
        # the feed's table numbers -> the seqs of the tables stored; a refused table has none.
        # It holds for this run of the feed only: a restarted feed numbers its tables afresh
        # (the tracker starts again), so a correction naming a table from before is not in it.
        accepted: dict[int, int] = {}
        try:
            for event in feed.events(start_after):
                if self._feed is not feed:
                    return
                if event.jpeg:
                    picture = event.jpeg
                    self.video.put(event.jpeg)
                if event.table is not None:
                    try:
                        seq, _ = self._observe(self.store.game(game_id), event.table, event.index,
                                               event.jpeg or picture, event.desync,
                                               event.finished, time.time())
                    except ActionError as exc:
                        # one unreadable table must not stop the game: flag it and go on
                        log.warning("frame %s refused: %s", event.index, exc)
                        self.tracker_desync = True
                        self.publish(game, "desync")
                        continue
                    if event.table_number is not None:
                        accepted[event.table_number] = seq
                    self.tracker_desync = event.desync
                elif event.correction is not None:
                    self._camera_correction(self.store.game(game_id), event.correction, accepted)
                elif event.desync != self.tracker_desync:
                    self.tracker_desync = event.desync
                    self.publish(game, "desync")
        except (FeedUnavailable, OSError, ValueError) as exc:
            # the game so far is safe in the log; say what stopped the source
            self.feed_error = str(exc)
            log.warning("table feed stopped: %s", exc)
            self.publish(game, "feed_error")
        except Exception as exc:   # a bug in a source must not die silently in its thread
            self.feed_error = f"{type(exc).__name__}: {exc}"
            log.exception("table feed failed")
            self.publish(game, "feed_error")

    def _camera_correction(self, game: Game, correction: dict, accepted: dict[int, int]) -> None:
        """The tracker corrected a table it had settled: it outvoted its first reading of a
        card (rename the card from the table it was laid in), or it judged that table again
        with two of its snakes joined, or without cards whose going it confirmed only later
        and perhaps with the table of when they went just before it (retable it).

        That table is the one the feed numbered `table_number`, or none: a table this
        service refused (or one from before the feed restarted) is not stored under that
        number, and correcting any other table would rewrite the wrong move.
        """
        number = correction.get("table_number")
        try:
            seq = accepted.get(number) if isinstance(number, int) else None
            frame = next((f for f in self.view(game).frames if f.seq == seq), None)
            if frame is None:
                raise ActionError(
                    f"table {number!r} of the feed (camera frame {correction.get('since')}) "
                    "is not in this game's history: it was refused, undone or sent before a restart")
            if "table" in correction:
                before = correction.get("before")
                event, _ = self._retable(game, frame.index, correction["table"],
                                         _camera_retable_reason(correction), before,
                                         correction.get("before_frame"))
                if before is not None and isinstance(correction.get("before_number"), int):
                    # the table put in is the feed's table too from now on
                    accepted[correction["before_number"]] = event.seq
                return
            self.correct(game, frame.index, correction["from"], correction["to"],
                         f"camera: later readings of this card say {correction['to']}, "
                         f"not {correction['from']}")
        except (ActionError, KeyError) as exc:
            log.warning("camera correction not applied: %s", exc)

    def upload_photo(self, game: Game, data: bytes, filename: str, table=None,
                     read_table: Callable | None = None) -> GameView:
        """A phone photo of the table for the current turn; the photo is kept as evidence."""
        from companion.vision.imageio import decode_image
        image = decode_image(data, filename or "upload")
        if table is None:
            table = (read_table or self.read_photo)(image.pixels)
        jpeg = encode_jpeg(_shrink(image.pixels))
        self.video.put(jpeg)
        return self.observe(game, table, jpeg=jpeg, settled_at=time.time())


def _camera_retable_reason(correction: dict) -> str:
    """Why the camera had a table judged again, for the log."""
    def cards(codes: list, many: str) -> str:
        return " ".join(codes) if len(codes) <= 12 else many.format(len(codes))
    if "found" in correction:
        return (f"camera: {cards(correction['found'], '{} cards')} lay on the table from the "
                "start (missed in every reading until now); the table is judged again with it")
    if "gone" not in correction:
        joined = correction.get("joined") or []
        return (f"camera: {cards(joined, 'a snake of {} cards')} was one snake, completed "
                "with an end the camera missed; the table is judged again")
    gone = cards(correction["gone"], "{} cards")
    if correction.get("before") is None:
        return (f"camera: {gone} had already left the table (its going was confirmed only "
                "later); the table is judged again without it")
    return (f"camera: {gone} left the table before this move (missed from camera frame "
            f"{correction.get('before_frame')}, its going confirmed only later): that table is "
            "judged just before it, and this one again without it")


def _shrink(pixels, max_width: int = 1280):
    import cv2
    if pixels.shape[1] <= max_width:
        return pixels
    scale = max_width / pixels.shape[1]
    return cv2.resize(pixels, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


class PhotoReader:
    """A phone photo to a table, by the vision pipeline; its models load on first use.

    With a calibration profile the calibrated analyzer reads the photo, so the
    deck learned on the set-up page is the deck recognised.
    """

    def __init__(self, profile: str | None = None):
        self.profile = profile
        self._analyzer = None

    def __call__(self, pixels) -> list[list[str]]:
        try:
            from companion.vision.analyze import Analyzer, assemble_readings
            if self._analyzer is None:
                if self.profile:
                    from companion.calibrate.adapt import calibrated_analyzer
                    self._analyzer = calibrated_analyzer(self.profile)
                else:
                    self._analyzer = Analyzer()
            snakes, _ = assemble_readings(self._analyzer.read(pixels))
        except (ImportError, ValueError, OSError) as exc:
            raise ActionError(f"cannot read the photo ({exc}); send the table's cards with it") from None
        return [[card.code for card in snake.chain] for snake in snakes]


def explain_winners(scores: dict, winners: list) -> dict | None:
    """Why the winners won, in the rules' order: most cards, then longest snake, else shared."""
    if not winners or not scores:
        return None
    best = max(s["cards"] for s in scores.values())
    tied = sorted(p for p, s in scores.items() if s["cards"] == best)
    if len(tied) == 1:
        return {"rule": "most_cards", "cards": best, "tied": tied}
    longest = max(scores[p]["longest"] for p in tied)
    if len(winners) == 1:
        return {"rule": "longest", "cards": best, "tied": tied, "longest": longest}
    return {"rule": "shared", "cards": best, "tied": tied, "longest": longest}
