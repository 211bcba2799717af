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
                    or t in unread]
        if doubtful:
            identity.update(self._resolve(chains, identity, doubtful, unread))
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

    def _resolve(self, chains, identity: dict, doubtful: list[int], unread: set = frozenset()
                 ) -> dict[int, str]:
        """Settle doubtful new cards with what is known.

        Only readings of comparable weight (at least half the leader's) are
        candidates, so the rules never overrule clear evidence; among them a card
        the deck still holds comes first, then one whose placement is legal,
        then the heavier reading.  A card `unread` -- read doubtfully in one still
        picture, and collected before another could read it afresh -- may also be
        any card of its kind with one colour otherwise (`misread_of`), weighed as
        the least of those readings: the one doubtful reading is all the camera
        will ever say of it.
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
            if t in unread:
                read = [code for code, _ in options]
                options += [(card.code, 0.5 * top) for card in sorted(self.deck.counts)
                            if card.code not in read and misread_of(ranked[0][0], card.code)]
            choice[t] = max(options, key=rank)[0]
        return choice
