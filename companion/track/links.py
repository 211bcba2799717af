"""Links between cards: which the readings of a still table are believed to show, which
a card just laid makes with the snake it extends, and which cards touch.

The readings of a table vote on each link (`Tracker._settle`); these rules weigh the votes
against what a link means: a head or tail joins one card, two cards sharing no colour meet
only as a foul, a card in a snake's middle has no end left to touch.  Mixed into `Tracker`;
it uses the tracker's tracks, settled chains, codes and settings.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from companion.game.cards import Card, Kind

from .tables import chains_from_links, links_of, outline_gap, outline_share

TOUCH_GAP = 0.35   # card widths between two outlines that still count as touching
PUSHED_SHARE = 0.25  # of a card's outline, what a new card must cover to have pushed it away


class TableLinks:
    def _believed_links(self, share: dict[frozenset, float]) -> set:
        """The links voted for (link -> share of the readings seeing both its cards that showed
        it) that are believed.  Not those of a head or tail that has a link shown by a larger
        share: it has one connecting end, and two readings that put different cards beside it
        -- one a card matched to the wrong sighting -- would make it join two snakes.  Links
        shown as surely stand: a card laid against a head's nose is the foul the camera saw.
        Nor a link between two cards that share no colour (neither a rainbow card) that some
        reading seeing both did not show: that is a foul, and a foul is reported only when the
        camera saw it clearly.  The links of the settled table stand (such a foul, judged
        already)."""
        settled = links_of(self.chains)
        cards = {t: Card.parse(self._track(t).identity) for e in share for t in e}
        ends = {t for t, card in cards.items() if card.kind.is_end_piece}
        best: dict[int, float] = {}
        for e in share:
            for t in e & ends:
                best[t] = max(best.get(t, 0.0), share[e])

        def believed(e: frozenset) -> bool:
            a, b = (cards[t].colours for t in e)
            foul = bool(a and b) and not set(a) & set(b)
            return all(share[e] >= best[t] for t in e & ends) and (share[e] >= 1.0 or not foul)
        return {e for e in share if e in settled or believed(e)}

    def _links_to_laid(self, added: set, present: set, edges: set) -> set:
        """Links the reader did not read between a card just laid alone and the open end of a
        settled snake that its end of the same colour lies within `laid_reach` card widths of.
        On a patterned cloth a card's outline often falls a fifth short of its end, and the
        analyser, linking ends up to half a card width apart, reads the card alone beside the
        snake it extends; widening that reach in every reading joined snakes that only lie
        near each other.  Here only a card just laid is linked, and only to one open end."""
        linked = Counter(t for e in edges for t in e)
        out = set()
        for t in added:
            if linked[t] or t not in present:
                continue
            for colour in set(Card.parse(self._deck_reading(t)).colours):
                end = self._end_of(t, colour)
                if end is None:
                    continue
                ends = {u: self._end_of(u, colour) for chain in self.chains for u in {chain[0], chain[-1]}
                        if u in present and u not in added and colour in self._open_colours(u, chain)}
                near = [u for u, other in ends.items() if other is not None and np.linalg.norm(end - other)
                        <= self.settings.laid_reach * min(self._track(t).size, self._track(u).size)]
                if len(near) == 1:
                    out.add(frozenset((t, near[0])))
        return out

    def _end_of(self, t: int, colour: str) -> np.ndarray | None:
        """Where card t's end of that colour lies: the middle of the outline's side its readings
        saw the colour point to."""
        track = self._track(t)
        direction = track.colour_dirs.get(colour)
        if direction is None or not np.any(direction):
            return None
        c = np.asarray(track.corners, float)
        sides = (c + np.roll(c, -1, axis=0)) / 2.0
        return sides[int(np.argmax((sides - track.centre) @ direction))]

    def _open_colours(self, u: int, chain: list[int]) -> set[str]:
        """The colours of settled card u's ends that no card of its chain meets."""
        card = Card.parse(self.codes.get(u) or self._track(u).identity)
        if len(chain) == 1:
            return set(card.colours)
        if card.kind is not Kind.MIDDLE:
            return set()
        neighbour = chain[1] if chain[0] == u else chain[-2]
        facing = self._facing.get(u, {}).get(neighbour)
        return set(card.colours) - {facing} if facing in card.colours else set()

    def _chains_of(self, present: set, edges: set, latest: set, before: set) -> list | None:
        """The chains the links make; when the links read do not (a card with three
        neighbours, a loop), the settled links stand between settled cards and the new cards
        take the links read to them -- or, when those are too many, only those to the ends of
        settled snakes (a card in a snake's middle has no end left to touch); failing that,
        the last reading alone.  Links read between the end cards of two settled snakes stand
        with the settled ones where they can: a snake pushed against another without a card
        laid is a foul the camera saw, whatever else its readings garbled (against a head's
        nose too: the referee judges what touches).  None: no chains."""
        chains = chains_from_links(present, edges)
        if chains is None:
            settled = {e for e in links_of(self.chains) if e <= present}
            laid = {e for e in edges if e - before}
            linked = Counter(t for e in settled for t in e)
            snake_of = {t: i for i, chain in enumerate(self.chains) for t in (chain[0], chain[-1])}
            pushed = {e for e in edges - settled
                      if all(t in snake_of for t in e) and len({snake_of[t] for t in e}) == 2}
            chains = (chains_from_links(present, settled | laid | pushed) if pushed else None) \
                or chains_from_links(present, settled | laid) \
                or chains_from_links(present, settled | {e for e in laid if all(linked[t] < 2 for t in e)}) \
                or chains_from_links(present, {e for e in latest if e <= present})
        return chains

    def _beside(self, a: int, b: int, b_corners: np.ndarray | None = None) -> bool:
        """Two cards' outlines touch, or nearly (a gap under a third of a card's width); b's
        outline is `b_corners` when given."""
        ta, tb = self._track(a), self._track(b)
        return outline_gap(ta.corners, tb.corners if b_corners is None else b_corners) \
            < TOUCH_GAP * min(ta.size, tb.size)

    def _ends_taken(self, t: int, edges: set) -> bool:
        """Card t is read touching as many cards as it has ends that join (a middle two,
        any other face one), each lying beside it (a link read across the gap a missed card
        left is the reader closing that gap, not a touch)."""
        ends = 2 if Card.parse(self._track(t).identity).kind is Kind.MIDDLE else 1
        return sum(t in e and self._beside(*e) for e in edges) >= ends

    def _on_place_of(self, a: int, b: int) -> bool:
        """Card a covers a good part (PUSHED_SHARE) of where card b lay."""
        return outline_share(self._track(a).corners, self._track(b).corners) >= PUSHED_SHARE
