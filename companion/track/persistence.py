"""Saving and restoring a game in progress (`--resume`, the dashboard's restarts)."""
from __future__ import annotations

from collections import Counter

from .identity import Track


class SavedState:
    STATE_VERSION = 1

    def state(self) -> dict:
        """Everything needed to go on with this game later (JSON-ready, small).  While a change
        waits for the next table (`Tracker._defer`), the game as it was before that change's
        table settled: what the tracker holds of a waiting change (its cards, the pictures that
        date them) lives only in memory, so a game stopped then reads that table again."""
        if self._before_waiting is not None:
            return self._before_waiting
        return self._state_now()

    def _keep_state_while_waiting(self, before: dict | None) -> None:
        """After a settle: `before` (the game before it) is what `state` gives while a change of
        it waits, from the first table it waited at until a table is judged."""
        if not self._waiting:
            self._before_waiting = None
        elif self._before_waiting is None:
            self._before_waiting = before

    def _state_now(self) -> dict:
        return {"version": self.STATE_VERSION, "players": self.players,
                "last_frame": self.last_frame, "resume_frame": self.resume_frame,
                "next_id": self._next_id,
                "tracks": [t.to_dict() for t in self.tracks.values()],
                "retired": [t.to_dict() for t in self.retired.values()],
                "facing": {str(t): {str(n): c for n, c in f.items()} for t, f in self._facing.items()},
                "chains": self.chains, "codes": {str(k): v for k, v in self.codes.items()},
                "history": self.history, "moves": self.moves,
                "desync_reason": self.desync_reason, "source_gap": self.source_gap,
                "unread_turn": self.unread_turn,
                "stats": dict(self.stats),
                "settled_frame": self._settled_frame,
                "gone": [[t, self._gone_count[t], self._gone_since.get(t)] for t in self._gone_count],
                "settled_outlines": {str(k): v for k, v in self._settled_outlines.items()}}

    @property
    def resume_frame(self) -> int:
        """Where a stopped recording should be picked up again: readings not yet settled are
        read again, and the frames before them give the gate its sense of stillness.  So is
        the last judged table, whose picture (which cards found later are dated against) the
        saved state does not hold: read again, it is that table's picture (`_reread_judged`)."""
        first = self._window.frames[0] if self._window.frames else self.last_frame + 1
        if self._settled_frame is not None:
            first = min(first, self._settled_frame)
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
        if not all(isinstance(entry, dict) for entry in self.history + self.moves):
            raise ValueError("its history and moves are not lists of objects")
        self.desync_reason = state.get("desync_reason")
        self.source_gap = bool(state.get("source_gap", False))
        self.unread_turn = bool(state.get("unread_turn", False))
        self.stats = Counter(state.get("stats", {}))
        self.last_frame = int(state["last_frame"])
        self.resumed_at = max(0, int(state.get("resume_frame", self.last_frame + 1)))
        self._saved_through = self.last_frame
        self._next_id = int(state["next_id"])
        self._settled_frame = state.get("settled_frame")
        self._gone_count = {int(t): int(n) for t, n, _ in state.get("gone", [])}
        self._gone_since = {int(t): int(f) for t, _, f in state.get("gone", []) if f is not None}
        self._settled_outlines = {int(k): v for k, v in state.get("settled_outlines", {}).items()}
        self.referee.replay([(h["frame"], h["table"]) for h in self.history])
