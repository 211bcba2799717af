"""Doubtful new cards: what the reader may have got wrong about a card just found.

A still picture is misread the same way in every frame of it, so voting within
one settled table cannot correct a card misread there; the next table, read
afresh, can.  A new card no reading of which was about as sure as the table's
typical card, or read as a card whose copies are all out already, is doubtful:
its change waits for the next table (`Tracker._compare`), unless it is a card
gone from its place, carried and misread -- then it is merged into that card's
track.  Mixed into `Tracker`; it uses the tracker's tracks, codes, deck, referee.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from companion.game.cards import Card
from companion.game.chains import is_closed

from .pushes import components
from .tables import chains_from_links, misread_of

if TYPE_CHECKING:
    from .tracker import _Window


class DoubtfulCards:
    def _doubtful(self, cards: set, present: set, window: _Window) -> set:
        """New cards no reading of which was about as sure as the table's typical card, or read
        as a card whose copies are all on the table or in the piles already (the deck says
        it is unlikely)."""
        return self._read_weakly(cards, window) | self._none_left(cards, present)

    def _read_weakly(self, cards: set, window: _Window) -> set:
        """Of these cards, those no reading of which was about as sure as the table's typical
        card (`doubt_confidence`)."""
        sure = [c.confidence for r in window.readings for c in r.cards]
        typical = float(np.median(sure)) if sure else 0.0
        return {t for t in cards if self.tracks[t].surest < self.settings.doubt_confidence * typical}

    def _none_left(self, cards: set, present: set) -> set:
        """Of these cards, those read as a card whose every copy is on the table (`present`,
        settled) or in the piles already."""
        left = self._copies_left(present)
        return {t for t in cards if left[self.deck.identity(Card.parse(self._deck_reading(t)))] <= 0}

    def _misread(self, cards: set, present: set, window: _Window) -> set:
        """Of these new cards, those read weakly, and only as cards whose every copy is out
        (every reading of comparable weight, `alternative_share`, as `_resolve` weighs them),
        or lying across two settled cards (`_over_settled`)."""
        left = self._copies_left(present)
        settled = present - cards
        return {t for t in self._read_weakly(cards, window)
                if all(left[self.deck.identity(Card.parse(code))] <= 0
                       for code, _ in self.tracks[t].rivals(self.settings.alternative_share))
                or self._over_settled(t, settled)}

    def _over_settled(self, t: int, settled: set) -> bool:
        """Whether card t lies across two settled cards (on the place of each, `_on_place_of`):
        no card is laid on others, while an outline across the seam of two reads as one weakly."""
        return sum(self._on_place_of(t, u) for u in settled) >= 2

    def _copies_left(self, present: set) -> Counter:
        """The deck's copies of each card not on the table (`present`, settled) nor in the piles."""
        others = [Card.parse(self.codes[t]) for t in present if t in self.codes]
        return self.deck.remaining(others + self.referee.collected())

    def _closing(self, cards: set, present: set, edges: set) -> set:
        """Of these new cards, those read in a snake with a head at one end and a tail at the
        other.  They cannot wait for the next table to be read afresh: a player collects the
        snake he closes, and the next table shows neither it nor them."""
        group = components(present, edges)
        out = set()
        for t in cards:
            chains = chains_from_links(group[t], {e for e in edges if e <= group[t]})
            if chains and is_closed([Card.parse(self.codes.get(u) or self._deck_reading(u))
                                     for u in chains[0]]):
                out.add(t)
        return out

    def _carried(self, gone: set, added: set, present: set, edges: set, window: _Window
                 ) -> dict[int, int]:
        """New cards that are gone cards carried and misread (new -> gone), merged into them:
        the new card was read doubtfully (`_doubtful`), it may be the gone card misread
        (`_may_be_misread`), it is linked (`edges`) to every neighbour the gone card
        had that is still on the table -- a card carried with its snake still touches them,
        while one laid at the far end of a snake whose middle card the reader missed does
        not -- and neither has another such partner.  A new card read, however surely, as the
        gone card itself, of which the deck holds one, is that card wherever it lies now: it
        cannot lie on the table twice."""
        whole = {t for c in self.chains if len(c) > 1 and all(t in gone for t in c) for t in c}
        # (as `_doubtful`, the deck's copies counted once)
        exhausted = self._none_left(added, present)
        unsure = self._read_weakly(added, window) | exhausted
        # (codes and readings are deck identities already: tracks vote by them)
        gone_as = {self.codes.get(g) or self._track(g).identity: g for g in gone - whole}
        only = {a: gone_as[code] for a in added - unsure
                if (code := self._deck_reading(a)) in gone_as and self.deck.count(Card.parse(code)) == 1}
        if not unsure and not only:
            return {}
        beside = {t: set() for t in gone}
        for chain in self.chains:
            for a, b in zip(chain, chain[1:]):
                for x, y in ((a, b), (b, a)):
                    if x in beside and y in present:
                        beside[x].add(y)
        partners: dict[int, set] = {}
        for g in gone - whole:
            was = self.codes.get(g) or self._track(g).identity
            for a in unsure:
                if self._may_be_misread(was, a, a in exhausted) and \
                        all(frozenset((a, n)) in edges for n in beside[g]):
                    partners.setdefault(g, set()).add(a)
        for a, g in only.items():
            partners.setdefault(g, set()).add(a)
        pairs = {next(iter(news)): g for g, news in partners.items() if len(news) == 1}
        pairs = {a: g for a, g in pairs.items()
                 if sum(a in news for news in partners.values()) == 1}
        for a, g in pairs.items():
            self._merge_track(a, g)
        return pairs

    def _may_be_misread(self, was: str, new: int, exhausted: bool) -> bool:
        """Whether new card `new` may be card `was` misread: of its kind with at most one colour
        read otherwise (`misread_of`), or named by one of its readings of comparable weight
        (`rivals`, as `_resolve` weighs them: a lower share where the deck holds no more of
        its leading reading, `exhausted`).  A head carried to be joined and read as the tail of
        its colour in most pictures is still that head."""
        if misread_of(was, self._deck_reading(new)):
            return True
        share = self.settings.alternative_share if exhausted else 0.5
        return any(code == was for code, _ in self.tracks[new].rivals(share))

    def _moved_waiting(self, lost: set, added: set, window: _Window) -> dict[int, int]:
        """New cards that are cards left waiting, moved and read afresh (new -> waiting): the
        waiting card is gone from its place (its pixels changed since the picture that last
        showed it), and the new card, of its kind with one colour otherwise, is the only such
        new card, and it the only such waiting card of the new one.  (A card waits when its
        reading is in doubt; carried to make room for a join, or to be joined, and read again
        there, it reads otherwise.  One read the same far from it is another card.)  They are
        merged into the waiting ones."""
        partners = {}
        for t in lost:
            if t not in self.tracks or self._unmoved_since_seen(t, window):
                continue
            was = self.tracks[t].identity
            like = {a for a in added if self._deck_reading(a) != was
                    and misread_of(was, self._deck_reading(a))}
            if len(like) == 1:
                partners[t] = like.pop()
        taken = Counter(partners.values())
        pairs = {a: t for t, a in partners.items() if taken[a] == 1}
        for a, t in pairs.items():
            self._merge_track(a, t)
        return pairs

    def _merge_track(self, new: int, old: int) -> None:
        """Track `new` was `old` all along: its sightings join old's, and where it lies is
        where old lies now."""
        self.tracks[old].absorb(self.tracks.pop(new))
        self._looks[old] += self._looks.pop(new, 0)
