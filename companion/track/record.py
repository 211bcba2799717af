"""The tracker's record of the game: settled tables, dressed moves, corrections.

Every move the referee returns is "dressed" with what the camera adds (the
cards involved and the frames before and after); a card renamed by later
readings re-judges the whole record.  Mixed into `Tracker`.
"""
from __future__ import annotations

from collections import Counter
from itertools import combinations, permutations, product
from typing import TYPE_CHECKING

from companion.game.cards import Card
from companion.game.chains import is_complete

from .gap import cut_out
from .identity import Track
from .referee_link import SNAKE
from .settings import TrackEvent
from .tables import (chains_from_links, code_of, facing_colours, links_of, neighbour_directions,
                     same_card)

if TYPE_CHECKING:
    from .tracker import _Window


class MoveRecord:
    def _observe_removal(self, late: dict[int, int], taken: list[list[int]]) -> list[TrackEvent]:
        """Cards whose going is confirmed only now left when first missed: the referee sees
        that table first, so a removal is not merged with the move that followed it -- nor
        recorded after a move judged while the going awaited confirmation.  A change judged
        when they were first missed is judged again without them (a snake taken and a card
        laid in one turn: the referee orders them), and the game after it too.

        Followers are told of the judged tables this changes, by their places in the history
        now: a correction {"gone": codes, "gone_at": frame, "inserted": place of the table put
        in (the one before the first table cut, without the cards) or None, "cut": places of
        the later tables now without them, "moves": every move as now judged}, before the
        new moves."""
        first = min(late.values())
        gone = [c for c in taken if all(t in late for t in c)]
        at = max(1, next((k for k, e in enumerate(self.history) if e["frame"] >= first),
                         len(self.history)))
        entry = self.history[at - 1]
        now = cut_out(self.chains, self.chains, {t for c in self.chains for t in c} - set(late))[0]
        self.chains = now
        if at == len(self.history):
            table = [[code_of(entry, t) or self._track(t).identity for t in run] for run in now]
            self.history.append({"frame": first, "table": table, "tracks": now,
                                 "evidence": {"before": entry["evidence"]["after"], "after": first},
                                 "added": [], "taken": gone})
            moves = [self._dress(m, at)[0] for m in self.referee.observe(table, first)]
            self.moves += moves
            return [TrackEvent("table", first, {"frame": first, "table": table})] + \
                [TrackEvent("move", first, move) for move in moves]
        named = self.history[at]     # the first table judged with the cards still there
        codes = [code for ids, chain in zip(named["tracks"], named["table"])
                 for t, code in zip(ids, chain) if t in late]
        cut = []
        for k, later in enumerate(self.history[at:], at):   # judged while the cards were
            was = later["table"]                          # believed still there
            later["tracks"], later["table"] = cut_out(later["tracks"], later["table"],
                                                      _cards(later) - set(late))
            if later["table"] != was:
                cut.append(k)
        inserted = None
        if self.history[at]["frame"] == first:
            self.history[at]["taken"] = self.history[at]["taken"] + gone
        else:
            runs, table = cut_out(entry["tracks"], entry["table"], _cards(entry) - set(late))
            self.history.insert(at, {"frame": first, "table": table, "tracks": runs,
                                     "evidence": {"before": entry["evidence"]["after"],
                                                  "after": first},
                                     "added": [], "taken": gone})
            inserted, cut = at, [k + 1 for k in cut]
            for rejoined in self._rejoined:     # told later by their place in the history
                rejoined["table_number"] += rejoined["table_number"] >= at
        known = {_key(m) for m in self.moves}
        moves = [m for m in self._rejudge()[at] if _key(m) not in known]
        told = [TrackEvent("correction", self.last_frame, {
            "frame": self.last_frame, "gone": codes, "gone_at": first, "inserted": inserted,
            "cut": cut, "moves": list(self.moves)})] if cut else []
        return told + [TrackEvent("move", first, move) for move in moves]

    def _completed_unseen(self, gone: set) -> bool:
        """A snake taken whole now that is not complete as recorded, and snakes gone unseen
        since the table that gave it its last card (their place changed then: moved, not
        merely missed) that complete it, set at its ends: that card was laid to complete it
        -- the unseen pieces, pushed over to meet it and missed by the reader, are its head
        or tail or both -- and the snake was collected whole.  The last judged table is
        corrected to show them joined (the game is judged again), so the completion and the
        collection are reported instead of a card laid and incomplete snakes taken.  True
        when a table was corrected."""
        if not self.history:
            return False
        entry = self.history[-1]
        whole = [c for c in self.chains if all(t in gone for t in c)]
        laid = [c for c in whole if set(c) & set(entry["added"]) and not set(c) & set(self._gone_since)]
        unseen = [c for c in whole if all(self._gone_since.get(t) == entry["frame"] for t in c)]
        for chain in laid:
            joined = None if self._is_complete(chain) else self._completing_join(chain, unseen)
            if joined is None:
                continue
            ids, codes, used = joined
            kept = [k for k, run in enumerate(entry["tracks"]) if run != chain and run not in used]
            entry["tracks"] = [entry["tracks"][k] for k in kept] + [ids]
            entry["table"] = [entry["table"][k] for k in kept] + [codes]
            self.chains = [c for c in self.chains if c is not chain and c not in used] + [ids]
            self._rejudge()
            self._rejoined.append({"table_number": len(self.history) - 1, "joined": codes})
            return True
        return False

    def _found_from_start(self, cards: dict[int, str], start_frame: int | None = None) -> None:
        """Cards (track -> code) that lay alone on the table since the first judged one, missed
        in every reading: every judged table is corrected to hold them and the game is judged
        again; followers are told of each table so corrected.  With `start_frame`, they alone
        were the table play started from, at that frame: the first judged table's cards become
        the first move."""
        if start_frame is not None:
            self.history.insert(0, {"frame": start_frame, "table": [], "tracks": [],
                                    "evidence": {"before": None, "after": start_frame},
                                    "added": [], "taken": []})
        for t, code in cards.items():
            self.codes[t] = code
            self.chains.append([t])
            for entry in self.history:
                entry["tracks"] = entry["tracks"] + [[t]]
                entry["table"] = entry["table"] + [[code]]
        self._rejudge()
        self._rejoined += [{"table_number": k, "found": sorted(cards.values())}
                           for k in range(len(self.history))]

    def _found_since(self, cards: dict[int, str], frame: int) -> bool:
        """Cards (track -> code) laid alone at `frame`, in a turn judged without them, and
        missed since: every table judged from then on is corrected to hold them, the first as
        the change that laid them (a table of their own is put in when none was judged at that
        frame), and the game is judged again; followers are told of each table sent so
        corrected.  False, with nothing changed, when the referee cannot make sense of that or
        they came before the first table (`_found_from_start`'s case)."""
        at = next((k for k, e in enumerate(self.history) if e["frame"] >= frame), len(self.history))
        if at == 0 or at == len(self.history):
            return False
        # (the entries themselves are corrected: followers know the tables sent by them)
        saved = self._saved_history()
        inserted = self.history[at]["frame"] != frame
        if inserted:
            entry = self.history[at - 1]
            self.history.insert(at, {"frame": frame, "table": entry["table"],
                                     "tracks": entry["tracks"], "added": [], "taken": [],
                                     "evidence": {"before": entry["evidence"]["after"], "after": frame}})
        for entry in self.history[at:]:
            entry["tracks"] = entry["tracks"] + [[t] for t in cards]
            entry["table"] = entry["table"] + [[code] for code in cards.values()]
        self.history[at]["added"] = self.history[at]["added"] + sorted(cards)
        if not self._judged_again(saved):
            return False
        self.codes.update(cards)
        self.chains += [[t] for t in cards]
        for rejoined in self._rejoined:
            rejoined["table_number"] += inserted and rejoined["table_number"] >= at
        self._rejoined += [{"table_number": k, "found": sorted(cards.values())}
                           for k in range(at + inserted, len(self.history))]
        return True

    def _came_back(self, added: set, edges: set) -> dict[int, int]:
        """New cards that are a card judged taken off the table in no complete snake (a foul),
        of which the deck holds one, read surely and linked to a card that lay on the table
        when it was last seen or was laid the turn after: it never left.  A reader that misses
        a lone card carried to be joined, table after table, sees it taken; found again where
        it was joined, it says otherwise.  Every judged table holding a card it is linked to
        now, from the one it was laid against on, holds it linked so, and the game is judged
        again (followers are told of each table so corrected).  Returns new -> the card's old
        track."""
        if not added or not self.retired or not self.history:
            return {}
        collected = Counter(self.deck.identity(card) for card in self.referee.collected())
        # (the last judged table each card taken off lay in)
        last = {old: k for k, entry in enumerate(self.history) for old in _cards(entry)
                if old in self.retired}
        back = {}
        for a in sorted(added):
            card = self.deck.identity(Card.parse(self._deck_reading(a)))
            if self.deck.count(card) != 1 or collected[card] or \
                    not self.tracks[a].is_clear(self.settings.doubt_ratio):
                continue
            old = next((t for t in sorted(last, key=last.get, reverse=True)
                        if self.deck.identity(Card.parse(code_of(self.history[last[t]], t))) == card), None)
            partners = {t for e in edges if a in e for t in e} - {a}
            if old is None or not partners or not partners <= set().union(
                    *map(_cards, self.history[last[old]:last[old] + 2])):
                continue
            if self._rejoin(old, partners, last.pop(old), card.code):
                self.tracks[old] = self.retired.pop(old)
                self._merge_track(a, old)
                back[a] = old
        return back

    def _rejoin(self, old: int, partners: set, last: int, code: str) -> bool:
        """`_came_back`'s correction of the judged tables, with the game judged again; False,
        with nothing changed, when a table cannot hold it so or the referee cannot make
        sense of the game so corrected."""
        saved = self._saved_history()
        changed = []
        for j, entry in enumerate(self.history):
            ids = _cards(entry)
            if not partners & ids or (old not in ids and j <= last):
                continue
            if not self._relinked(entry, {old: code}, {frozenset((old, p)) for p in partners & ids}):
                changed = []
                break
            entry["taken"] = [c for c in entry["taken"] if old not in c]
            changed.append(j)
        if not self._judged_again(saved, corrected=bool(changed)):
            return False
        self.codes[old] = code
        self.chains = [list(c) for c in self.history[-1]["tracks"]]
        for j in changed:
            entry = self.history[j]
            joined = next(codes for ids, codes in zip(entry["tracks"], entry["table"]) if old in ids)
            self._rejoined.append({"table_number": j, "joined": joined})
        return True

    def _relinked(self, entry: dict, cards: dict[int, str], links: set) -> bool:
        """Correct a judged table to hold these `cards` (track -> code) too, and these `links`
        besides its own, its middles turned along the chains so formed; False, with the table
        as it was, when the links make no chains."""
        chains = chains_from_links(_cards(entry) | set(cards), links_of(entry["tracks"]) | links)
        if chains is None:
            return False
        entry["table"] = [[self._orient(t, code_of(entry, t) or cards[t], c, i) for i, t in enumerate(c)]
                          for c in chains]
        entry["tracks"] = chains
        return True

    def _saved_history(self) -> tuple[list[dict], list[dict]]:
        """The judged tables as they are, to put back (`_judged_again`) if a correction fails."""
        return list(self.history), [{k: e[k] for k in ("tracks", "table", "added", "taken")}
                                    for e in self.history]

    def _judged_again(self, saved: tuple[list[dict], list[dict]], corrected: bool = True) -> bool:
        """Judge the corrected game again; when it was not `corrected` after all, or the
        referee cannot make sense of it, put back the tables `saved` (the entries themselves:
        followers know the tables sent by them) and judge the game as it was.  Whether the
        correction stands."""
        try:
            if corrected:
                self._rejudge()
                return True
        except Exception:   # the referee cannot make sense of the corrected game: leave it be
            pass
        entries, fields = saved
        self.history = entries
        for entry, was in zip(entries, fields):
            entry.update(was)
        self._rejudge()
        return False

    def _laid_before_judged(self, late: dict[int, int], chains, table, shape) -> set[int]:
        """Cards found late whose place shows they were laid a turn before the one judged last
        (`SettledPictures.there_before_judged`), not linked to its card: that turn's table is
        corrected to hold them, a table of their own is put before it, and the game is judged
        again.  The cards so placed; they are no longer new."""
        if len(self.history) < 2:
            return set()
        last, previous = self.history[-1], self.history[-2]
        linked = {t for e in links_of(chains) if e & set(last["added"]) for t in e}
        cards = {t: self.tracks[t].corners for t, k in late.items() if k == 0 and t not in linked}
        judged = [self._settled_outlines[t] for t in last["added"] if t in self._settled_outlines]
        if not cards or len(last["added"]) != len(judged):
            return set()
        dates = self._pictures.there_before_judged(cards, judged, shape)
        if not dates:
            return set()
        placed = set(dates)
        before, after = self._as_laid(previous, placed, chains, table), self._as_laid(last, placed, chains, table)
        if before is None or after is None:
            return set()
        frame = min(dates.values())
        kept = list(self.history)
        self.history[-1] = {**last, "tracks": after[0], "table": after[1],
                            "evidence": {**last["evidence"], "before": frame}}
        self.history.insert(len(self.history) - 1, {
            "frame": frame, "tracks": before[0], "table": before[1],
            "evidence": {"before": previous["evidence"]["after"], "after": frame},
            "added": sorted(placed), "taken": []})
        try:
            self._rejudge()
        except Exception:   # the referee cannot make sense of the corrected game: leave it be
            self.history = kept
            self._rejudge()
            return set()
        self.chains = [list(c) for c in after[0]]
        self._rejoined.append({"table_number": len(self.history) - 2,
                               "found": sorted(code_of(self.history[-1], t) for t in placed)})
        return placed

    def _joined_unseen(self, edges: set, still: set, missed: set) -> bool:
        """A link read now, between a card laid in the last judged turn and a card that table's
        reading missed (`missed`), both lying as they did then (`still`): the missed card had
        been carried to be joined (its place changed, so it was not taken for lying where it
        was), and the card was laid against it.  The last judged table is corrected to hold
        the link, and the game is judged again: a join, not the extension then judged.  So is
        a link every reading of this table shows (two at least) between that card and a card
        that table held, both lying as they did: the readings then missed it.
        True when a table was corrected."""
        if not self.history:
            return False
        entry = self.history[-1]
        laid = set(entry["added"])
        links = links_of(entry["tracks"])

        def always(e: frozenset) -> bool:   # every reading of this table, two at least, shows it
            shown, seeing = self._link_votes.get(e, (0, 0))
            return shown == seeing >= 2
        found = {e for e in edges - links if e <= still and e & laid and (e & missed or always(e))}
        if not found:
            return False
        joined = sorted(code_of(entry, t) for e in found for t in e)
        if not self._relinked(entry, {}, found):
            return False
        self.chains = [list(c) for c in entry["tracks"]]
        self._rejudge()
        self._rejoined.append({"table_number": len(self.history) - 1, "joined": joined})
        return True

    def _completing_join(self, chain: list[int], pieces: list[list[int]]
                         ) -> tuple[list[int], list[str], list[list[int]]] | None:
        """`chain` with the fewest of `pieces` (at most two: its head's side and its tail's)
        set around it, in any order and either way round, so that the whole is a complete
        snake: its tracks, codes and the pieces used; else None.  (Where a piece lay says
        little: a snake is pushed from anywhere on the table to meet the card that
        completes it.)"""
        def ways(run):
            codes = self._codes(run)
            return (run, codes), (run[::-1], [Card.parse(c).flipped().code for c in codes[::-1]])
        for n in range(1, min(len(pieces), 2) + 1):
            for used in combinations(pieces, n):
                runs = [((chain, self._codes(chain)),)] + [ways(p) for p in used]
                for order in permutations(runs):
                    for way in product(*order):
                        table = [c for _, codes in way for c in codes]
                        if is_complete([Card.parse(c) for c in table]):
                            return [t for ids, _ in way for t in ids], table, list(used)
        return None

    def _is_complete(self, chain: list[int]) -> bool:
        return is_complete([Card.parse(c) for c in self._codes(chain)])

    def _codes(self, run: list[int]) -> list[str]:
        """The cards' codes as the last judged table has them (else as their tracks read)."""
        entry = self.history[-1] if self.history else None
        return [(code_of(entry, t) if entry else None) or self._track(t).identity for t in run]


    def _track(self, t: int) -> Track:
        return self.tracks[t] if t in self.tracks else self.retired[t]

    def _dress(self, move: dict, at: int, at_end: bool = False) -> tuple[dict, list[int], list[int]]:
        """A referee move with what the camera adds: the cards involved and the evidence frames."""
        entry = self.history[at]
        previous = self.history[at - 1] if at > 0 else None
        move = dict(move)
        snake = move.pop(SNAKE, None)
        code = move.get("card")
        laid = [t for t in entry["added"] if code and same_card(code_of(entry, t), code)]
        if at_end:
            # a snake completed and left lying when the game ended: it is on the last table
            after_ids, before_ids = _snake_tracks(entry["tracks"], entry, snake) or [], []
        elif move.get("action") == "collect" or (move.get("collected") and not laid):
            taken = _snake_tracks(entry["taken"], previous, snake)
            after_ids, before_ids = laid, taken or [t for chain in entry["taken"] for t in chain]
        else:
            after_ids, before_ids = laid or list(entry["added"]), []
        move["cards"] = [self._card_json(t, entry) for t in after_ids] + \
            [self._card_json(t, previous) for t in before_ids if previous]
        move["evidence"] = dict(entry["evidence"])
        gap = entry.get("gap")
        if gap:
            # not seen on its own: the table settled again only after several turns
            move["after_gap"] = dict(gap)
            order = ("the order of moves was worked out from the table" if gap["order_sure"] else
                     "the table fits more than one order of moves; this is the likeliest")
            move["reason"] = (f"{move.get('reason', '')} (Seen only after a gap in which "
                              f"{gap['cards']} cards were laid: {order}.)").strip()
        return move, after_ids, before_ids

    def _corrections(self, frame: int) -> list[TrackEvent]:
        """Re-name a settled card whose readings have since clearly outvoted its first name,
        and re-judge the game from the corrected tables (the referee is replayed); also tell
        of judged tables corrected since (`_completed_unseen`), with the moves re-judged."""
        told = [TrackEvent("correction", frame, {"frame": frame, **rejoined, "moves": list(self.moves)})
                for rejoined in self._rejoined]
        self._rejoined = []
        return told + self._renamed(frame)

    def _renamed(self, frame: int) -> list[TrackEvent]:
        """`_corrections`' card renames."""
        changed = []
        held = None
        for t, committed in list(self.codes.items()):
            track = self.tracks[t]
            leader, weight = track.ranked()[0]
            if leader != committed and track.sightings >= 6 and \
                    weight >= self.settings.correction_ratio * track.support(committed):
                # (not to a card whose every copy the game holds already: the deck says one of
                # the readings is wrong, and which one the camera cannot say)
                held = Counter(self._recorded().values()) if held is None else held
                card = self.deck.identity(Card.parse(leader))
                if held[card] - (self.deck.identity(Card.parse(committed)) == card) >= self.deck.count(card):
                    continue
                self.codes[t] = leader
                changed.append((t, committed, leader))
        changed = changed or self._doubt_settled()
        if not changed:
            return []
        for t, _, after in changed:
            if t in self.tracks:        # (a card collected since is renamed in the record only)
                self.codes[t] = after
        renamed = {t: after for t, _, after in changed}
        for entry, table in zip(self.history, self._renamed_tables(renamed)):
            entry["table"] = table
        self._rejudge()
        return [TrackEvent("correction", frame, {
            "frame": frame, "track": t, "from": before, "to": after,
            "since": self._track(t).first_frame, "moves": self.moves}) for t, before, after in changed]

    def _rejudge(self) -> list[list[dict]]:
        """Judge the recorded tables again from the first (the referee is replayed); the
        moves of each table.  Saved evidence stays with its move."""
        stills = {_key(m): m["stills"] for m in self.moves if "stills" in m}
        self.referee.replay([])
        judged = [[self._dress(m, k)[0] for m in self.referee.observe(e["table"], e["frame"])]
                  for k, e in enumerate(self.history)]
        self.moves = [m for moves in judged for m in moves]
        for m in self.moves:
            if _key(m) in stills:
                m["stills"] = stills[_key(m)]
        return judged

    def _doubt_settled(self) -> list[tuple[int, str, str]]:
        """Settled cards whose later readings now rival their committed name (comparable
        weight, neither clear), renamed when the other reading makes the recorded game break
        fewer rules: as for a doubtful new card, the rules only choose among readings the
        camera could not tell apart, and only once the card was seen in two settled tables.
        A card of which the game holds more copies than the deck does may also take a reading
        of `alternative_share` of its leader's weight (as `_resolve` lets a new one).  The
        card whose rival comes nearest its leader is weighed first."""
        recorded = self._recorded()
        held = Counter(recorded.values())
        doubted = []
        for t, card in recorded.items():
            committed = card.code
            ranked = self._track(t).supported()
            if len(ranked) < 2 or self._looks[t] < 2 or committed not in dict(ranked):
                continue
            top = ranked[0][1]
            exceeded = held[card] > self.deck.count(card)
            if not exceeded and (t not in self.codes or top >= self.settings.doubt_ratio * ranked[1][1]):
                continue
            share = self.settings.alternative_share if exceeded else 0.5
            rivals = [code for code, _ in self._track(t).rivals(share) if code != committed
                      and self.deck.count(Card.parse(code))]
            if rivals:
                doubted.append((ranked[1][1] / top, t, committed, rivals))
        now = None
        for _, t, committed, rivals in sorted(doubted, key=lambda d: -d[0]):
            now = self._fouls_with({}) if now is None else now
            fouls, best = min((self._fouls_with({t: code}), code) for code in rivals)
            if fouls < now:
                return [(t, committed, best)]   # one at a time: the next settle weighs the rest
        return []

    def _recorded(self) -> dict[int, Card]:
        """Every card the recorded game holds, on the table or collected since: track -> card."""
        return {t: self.deck.identity(Card.parse(code)) for entry in self.history
                for ids, codes in zip(entry["tracks"], entry["table"])
                for t, code in zip(ids, codes) if code != "unknown"}

    def _renamed_tables(self, renamed: dict[int, str]) -> list[list[list[str]]]:
        """The recorded tables with these cards renamed (oriented along their chains)."""
        tables = []
        for entry in self.history:
            table = []
            for ids, codes in zip(entry["tracks"], entry["table"]):
                table.append([self._track(t).oriented(
                    renamed[t], *neighbour_directions(self._all_tracks(), ids, i))
                    if t in renamed else code for i, (t, code) in enumerate(zip(ids, codes))])
            tables.append(table)
        return tables

    def _fouls_with(self, renamed: dict[int, str]) -> float:
        """How many fouls the recorded game holds with these cards renamed (inf: unreadable)."""
        tables = self._renamed_tables(renamed)
        try:
            judged = self.referee.rejudge([(e["frame"], table) for e, table in zip(self.history, tables)])
        except Exception:
            return float("inf")
        return sum(not m.get("legal", True) for m in judged)

    def _all_tracks(self) -> dict:
        return {**self.retired, **self.tracks}

    def _remember(self, window: _Window, chains: list[list[int]], table: list,
                  frame: int | None = None) -> None:
        """The settled table and its picture; `frame`: the frame it counts as settled at
        (default: the window's last)."""
        for ids, codes in zip(chains, table):
            for i, t in enumerate(ids):
                self._facing[t] = facing_colours(ids, codes, i)
        self._settled_frame = window.frames[-1] if frame is None else frame
        self._settled_image = window.image
        self._settled_small = window.small
        self._settled_outlines = {t: self.tracks[t].corners.tolist()
                                  for c in chains for t in c}

    def _card_json(self, t: int, entry: dict | None) -> dict:
        track = self._track(t)
        ranked = track.ranked()
        total = sum(w for _, w in ranked) or 1.0
        code = code_of(entry, t) if entry else None
        return {"code": code or self.codes.get(t, track.identity), "track": t,
                "confidence": round(ranked[0][1] / total, 3),
                "corners": [[round(x, 1), round(y, 1)] for x, y in track.corners.tolist()]}


def _snake_tracks(chains: list[list[int]], entry: dict | None, snake: list[str] | None) -> list[int] | None:
    """The tracks of the chain that is `snake` (codes as `entry` has them); None when none is,
    or no snake is named."""
    for chain in chains if snake and entry else ():
        codes = [code_of(entry, t) for t in chain]
        if len(codes) == len(snake) and any(all(map(same_card, codes, way)) for way in (snake, snake[::-1])):
            return list(chain)
    return None


def _cards(entry: dict) -> set[int]:
    return {t for ids in entry["tracks"] for t in ids}


def _key(move: dict) -> tuple:
    """A move's place in the record, whatever its card was renamed to."""
    evidence = move.get("evidence", {})
    return move.get("frame"), evidence.get("before"), evidence.get("after"), move.get("action")
