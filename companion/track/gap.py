"""Several moves in one settled change: working out the order they were made in.

When the camera drops out, the table may settle again only after two or more
turns.  (While it watches, two cards at once are one player's foul, and the
referee says so; this is only for a drop-out.)  The tables before and after
are known; the order the new cards came in is not.  Each order gives
a sequence of tables -- the final chains with the cards not yet laid cut out --
and the referee judges each sequence on a throw-away copy.

A sequence explains the change when every step is one card laid (nothing
pushed together or split, nothing taken back) and it breaks the rules at most
`max_illegal` times, each time with a card that was read clearly: an illegal
move the camera clearly saw is still reported, but a pile of fouls is far
likelier a misreading than a game.  Among explaining sequences the fewest
illegal moves win, then the fewest cards laid alone (players extend and join
far more than they start snakes), then the first order by card id (when orders that
explain the change equally well give different moves, the steps say the order
was not sure).  When no
sequence explains the change, `gap_steps` says so (None) and the tracker goes
to "desync, waiting for the table" rather than guess.

Cards the reader missed in the turn they were laid, found only later, are steps of their
own as well, in the order of the settled pictures that first showed them (`dating`).
`OrderedSteps`, mixed into `Tracker`, turns each settled change into its steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Callable

from .referee_link import RefereeLink
from .tables import canonical_chain, chains_from_links, code_of, links_of

# verdicts that mean a step is not one card laid: the order does not explain the table
NOT_ONE_CARD = {"two_cards", "rearranged", "card_removed"}


@dataclass(frozen=True)
class GapStep:
    tracks: list[list[int]]      # the table after this step, as track ids
    table: list[list[str]]       # ... and as card codes
    added: list[int]             # the card laid in this step
    taken: list[list[int]]       # chains taken off the table (the last step only)
    order_sure: bool = True      # no other order explains the change as well with other moves
    frame: int | None = None     # when it was seen, if earlier than the settle that judges it


def cut_out(tracks: list[list[int]], table: list[list[str]], keep: set[int]
            ) -> tuple[list[list[int]], list[list[str]]]:
    """The chains with only the cards in `keep`; a chain is broken where a card is cut out."""
    out_tracks, out_table = [], []
    for ids, codes in zip(tracks, table):
        run_ids: list[int] = []
        run_codes: list[str] = []
        for t, code in list(zip(ids, codes)) + [(None, None)]:
            if t is not None and t in keep:
                run_ids.append(t)
                run_codes.append(code)
            elif run_ids:
                out_tracks.append(run_ids)
                out_table.append(run_codes)
                run_ids, run_codes = [], []
    return out_tracks, out_table


def gap_steps(referee: RefereeLink, tracks: list[list[int]], table: list[list[str]],
              added: set[int], taken: list[list[int]], taken_table: list[list[str]],
              clear: Callable[[int], bool], max_illegal: int = 1) -> list[GapStep] | None:
    """One step per new card, in the order that best explains the change; None if none does.

    `taken` are the chains (track ids, codes in `taken_table`) of the table before
    that are gone now: they stay on the table until the last step, where whatever
    took them (a collection) is judged with the last card.
    """
    old = {t for chain in tracks for t in chain} - set(added)
    best = None
    outcomes = {}   # (fouls, cards laid alone) -> the different move sequences so ranked
    for order in permutations(sorted(added)):
        steps = []
        for i, t in enumerate(order):
            if i + 1 == len(order):
                steps.append(GapStep(tracks, table, [t], taken))
            else:
                ids, codes = cut_out(tracks, table, old | set(order[:i + 1]))
                steps.append(GapStep(ids + taken, codes + taken_table, [t], []))
        judged = referee.try_tables([s.table for s in steps])
        if judged is None:
            continue
        rank = _rank(judged, order, clear, max_illegal)
        if rank is None:
            continue
        outcomes.setdefault(rank[:2], set()).add(tuple(
            (m.get("card"), m.get("action"), m.get("legal"), m.get("code")) for moves in judged for m in moves))
        if best is None or rank < best[0]:
            best = (rank, steps)
    if best is None:
        return None
    # Orders as good as the chosen one by the rules but giving other moves: the camera
    # cannot tell them apart, and the moves say so.
    sure = len(outcomes[best[0][:2]]) == 1
    return [GapStep(s.tracks, s.table, s.added, s.taken, sure) for s in best[1]]


def _rank(judged: list[list[dict]], order: tuple[int, ...], clear: Callable[[int], bool],
          max_illegal: int) -> tuple | None:
    illegal = alone = 0
    for moves, t in zip(judged, order):
        placed = [m for m in moves if m.get("card") and m.get("action") != "collect"]
        if len(placed) != 1 or any(m.get("code") in NOT_ONE_CARD for m in moves):
            return None
        for move in moves:
            if not move.get("legal", True):
                illegal += 1
                if move is placed[0] and not clear(t):
                    return None   # a foul is only believed when the card was read clearly
        alone += placed[0].get("action") == "new"
    if illegal > max_illegal:
        return None
    return (illegal, alone, order)


class OrderedSteps:
    """A settled change as the referee is to hear it: the steps of one card each it was made
    in.  Mixed into `Tracker`; it uses the tracker's history, chains, tracks, settings,
    pictures and referee."""

    def _steps(self, chains, table, added: set, taken: list, gone: set, forced: bool,
               late: dict[int, int]):
        """The settled change as steps of one card each (`gap_steps`) when the source dropped
        out since the last settle; None when several new cards cannot be ordered into moves
        then, unless the table is being taken as it is.  Cards found late (`late`: card ->
        the settled picture that first showed it) come first, in the order they were laid."""
        last = GapStep(chains, table, sorted(added), taken)
        if late and not (self.source_gap and len(added) >= 2):
            return self._late_steps(chains, table, added, taken, gone, late)
        if len(added) < 2 or not self.history or not (self.source_gap or self.unread_turn):
            return [last]   # the camera watched: two cards at once are one player's foul
        if len(added) > self.settings.max_gap_cards:
            # a table taken as it is after a long gap: ordering would try every permutation
            return [last] if forced else None
        entry = self.history[-1]
        gone_chains = [c for c in self.chains if all(t in gone for t in c)]
        steps = gap_steps(self.referee, chains, table, added, gone_chains,
                          [[code_of(entry, t) or self._track(t).identity for t in c]
                           for c in gone_chains],
                          lambda t: self.tracks[t].is_clear(self.settings.doubt_ratio),
                          self.settings.gap_illegal)
        if steps is not None:
            steps[-1] = GapStep(steps[-1].tracks, steps[-1].table, steps[-1].added, taken,
                                steps[-1].order_sure)
            return steps
        # (after a card laid unread, cards no order explains were laid at once after all)
        return [last] if forced or not self.source_gap else None

    def _late_steps(self, chains, table, added: set, taken: list, gone: set,
                    late: dict[int, int]) -> list[GapStep]:
        """One step per settled picture that showed cards first found only now, then this one.
        The chains taken now were still there in the earlier steps.  The earlier steps are the
        table last judged with the late cards laid in it, linked as they are now: what changed
        between the old cards since (a snake pushed to another) is this one's."""
        entry = self.history[-1] if self.history else None
        gone_chains = [c for c in self.chains if all(t in gone for t in c)]
        gone_table = [[(code_of(entry, t) if entry else None) or self._track(t).identity for t in c]
                      for c in gone_chains]
        old = {t for c in chains for t in c} - added
        steps = []
        for k in sorted(set(late.values())):
            cards = {t for t, j in late.items() if j <= k}
            laid = self._as_laid(entry, cards, chains, table) if entry else None
            if laid is None:
                ids, codes = cut_out(chains, table, old | cards)
                laid = ids + gone_chains, codes + gone_table
            steps.append(GapStep(*laid,
                                 sorted(t for t, j in late.items() if j == k), [],
                                 frame=self._pictures.frame(k)))
        now = sorted(added - set(late))
        if now or taken or sorted(map(canonical_chain, table)) != sorted(
                map(canonical_chain, steps[-1].table)):
            steps.append(GapStep(chains, table, now, taken))
        else:
            steps[-1] = GapStep(chains, table, steps[-1].added, taken, frame=steps[-1].frame)
        return steps

    def _as_laid(self, entry: dict, cards: set, chains, table):
        """The judged table `entry` with `cards` laid in it, linked as they are in `chains`:
        (chains as ids, as codes), or None when those links make no chains."""
        ids = {t for c in entry["tracks"] for t in c} | cards
        links = links_of(entry["tracks"]) | {e for e in links_of(chains) if e & cards and e <= ids}
        laid = chains_from_links(ids, links)
        if laid is None:
            return None
        now = {t: code for c, codes in zip(chains, table) for t, code in zip(c, codes)}
        identity = {t: code_of(entry, t) or now[t] for t in ids}
        return laid, [[self._orient(t, identity[t], c, i) for i, t in enumerate(c)] for c in laid]
