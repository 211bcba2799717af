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
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Callable

from .referee_link import RefereeLink

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
