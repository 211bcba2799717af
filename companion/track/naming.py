"""Naming the cards of a settled table: committed identities, orientation, doubt.

A known card keeps the identity it was committed with; a new card takes the
analyser's voted reading unless that is doubtful, and then what else is known
(the deck's composition, the rules) settles it among comparable readings.
Mixed into `Tracker`; it uses the tracker's tracks, codes, facing and referee.
"""
from __future__ import annotations

from companion.game.cards import Card, Kind

from .tables import misread_of, neighbour_directions


class CardNaming:
    def _codes_for(self, chains: list[list[int]], added: set, unread: set = frozenset()
                   ) -> list[list[str]]:
        """Card codes for the chains: committed identities for known cards, resolved ones for new.
        `unread`: new cards read doubtfully that no later table will show (see `_resolve`)."""
        identity = {t: self.codes.get(t) or self._deck_reading(t) for c in chains for t in c}
        doubtful = [t for t in added if not self.tracks[t].is_clear(self.settings.doubt_ratio)
                    or t in unread or self.tracks[t].alternatives]
        if doubtful:
            identity.update(self._resolve(chains, identity, doubtful, unread, added))
        out = []
        for chain in chains:
            codes = []
            for i, t in enumerate(chain):
                codes.append(self._orient(t, identity[t], chain, i))
            out.append(codes)
        return out

    def _deck_reading(self, t: int) -> str:
        """The leading reading that is a card of the deck (a reading of a card the deck does not
        have, e.g. a middle with one colour at both ends, is a misreading, never a move)."""
        ranked = self.tracks[t].ranked()
        return next((code for code, _ in ranked if self.deck.count(Card.parse(code))), ranked[0][0])

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
        return self._track(t).oriented(code, *neighbour_directions(self._all_tracks(), chain, i))

    def _resolve(self, chains, identity: dict, doubtful: list[int], unread: set = frozenset(),
                 added: set = frozenset()) -> dict[int, str]:
        """Settle doubtful new cards with what is known.

        The camera's evidence for a reading is the weight of the readings that
        named it, first or next (`Track.support`).  Only readings of comparable
        weight (at least half the leader's) are candidates, so the rules never
        overrule clear evidence; among them a card the deck still holds comes
        first, then one whose placement is legal, then the heavier reading.
        When the deck holds no more of the leader, a reading of at least
        `alternative_share` of its weight is a candidate too: a card whose
        copies are all accounted for is unlikely, though not impossible (one of
        them may have been misread).  A card `unread` -- read doubtfully in one
        still picture, and collected before another could read it afresh -- may
        also be any card of its kind with one colour otherwise (`misread_of`),
        weighed as the least of those readings: the one doubtful reading is all
        the camera will ever say of it.  A placement is judged as a turn of its
        own: the other new cards `added` at the ends of chains are left out.
        """
        choice: dict[int, str] = {}
        for t in doubtful:
            track = self.tracks[t]
            ranked = track.supported()
            top = ranked[0][1]
            others = [Card.parse(identity[u]) for c in chains for u in c if u != t]
            others += self.referee.collected()
            left = self.deck.remaining(others)
            own = without_ends(chains, set(added) - {t})

            def rank(option):
                code, weight = option
                trial = {**identity, **choice, t: code}
                table = [[self._orient(u, trial[u], c, i) for i, u in enumerate(c)] for c in own]
                available = left[self.deck.identity(Card.parse(code))] > 0
                return (available, self.referee.would_be_legal(table), weight)
            exhausted = left[self.deck.identity(Card.parse(ranked[0][0]))] <= 0
            options = track.rivals(self.settings.alternative_share if exhausted else 0.5)
            if t in unread:
                read = [code for code, _ in options]
                options += [(card.code, 0.5 * top) for card in sorted(self.deck.counts)
                            if card.code not in read and misread_of(ranked[0][0], card.code)]
            choice[t] = max(options, key=rank)[0]
        return choice


def without_ends(chains: list[list[int]], drop: set) -> list[list[int]]:
    """The chains with the cards of `drop` that lie at a chain's end taken off, end by end."""
    out = []
    for chain in chains:
        chain = list(chain)
        while chain and (chain[0] in drop or chain[-1] in drop):
            chain = chain[1:] if chain[0] in drop else chain[:-1]
        if chain:
            out.append(chain)
    return out
