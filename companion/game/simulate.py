"""Random games of Hisss with known truth, for tests, renders and benchmarks.

`simulate_game` deals a shuffled deck and plays it out: each player lays the
card drawn at a random legal place; completed snakes are taken at once, a
turn late, or (when the missing card can be inferred) before any frame showed
them complete.  With `illegal_rate` > 0 some turns break a rule on purpose,
and the truth records the verdict the referee must give.  Everything follows
from the seed.

The truth is worked out here from what the simulator *did*, not by running the
referee, so comparing the two tests the referee (use `without_reasons`).  Only
the reason sentences are borrowed from the referee, for moves where its
verdict agrees; elsewhere `reason` is None.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from .cards import Card, Kind
from .chains import (CLOSED_END, COLOUR_MISMATCH, HEAD_TAIL_ADJACENT, TWO_HEADS, TWO_TAILS,
                     Chain, canonical, code_key, is_complete)
from .deck import Deck, load_deck
from .rules import (CARD_REMOVED, COLLECTED_INCOMPLETE, COULD_ATTACH, DECK_EXCEEDED, REARRANGED,
                    TWO_CARDS, explain_vanished, legal_placements, placement_problems)
from .scoring import rank_winners, score_piles

Table = list[list[Card]]

# Faults of a turn (the card drawn is laid wrongly) and faults between turns.
TURN_FAULTS = (COULD_ATTACH, COLOUR_MISMATCH, CLOSED_END, TWO_HEADS, TWO_TAILS,
               HEAD_TAIL_ADJACENT, TWO_CARDS, COLLECTED_INCOMPLETE, DECK_EXCEEDED)
BETWEEN_TURNS = (REARRANGED, CARD_REMOVED)


@dataclass
class SimulatedGame:
    players: list[str]
    seed: int
    deck: Deck
    draws: list[Card]                        # the cards in the order drawn, starter first
    frames: list[Table]                      # table after each change; frame 0 = starter card
    piles_after: list[dict[str, list[list[Card]]]]   # each player's collected snakes at each frame
    undrawn_after: list[int]                 # cards still in the draw pile at each frame
    record: dict                             # the judge FILE format
    truth: dict                              # the judge --json output expected
    injected: list[tuple[int, str]]          # (frame, code) of every rule broken on purpose


def without_reasons(result: dict) -> dict:
    """A judge output with reasons blanked, cards by deck identity and snakes canonical,
    for comparing with truth (two copies of a card in one chain cannot be told apart)."""
    out = dict(result)
    out["moves"] = [dict(m, reason=None, card=m["card"] and Card.parse(m["card"]).identity().code)
                    for m in result["moves"]]
    out["piles"] = {p: [[c.code for c in canonical([_card(x) for x in s])] for s in snakes]
                    for p, snakes in result["piles"].items()}
    return out


def _card(code: str) -> Card:
    """A card from its code; `unknown` is the referee's stand-in for a card nobody saw."""
    return Card(Kind.UNKNOWN) if code == Card(Kind.UNKNOWN).code else Card.parse(code)


class _Game:
    def __init__(self, players: Sequence[str], seed: int, deck: Deck, illegal_rate: float,
                 late_rate: float, unseen_rate: float, merge_rate: float):
        self.rng = random.Random(seed)
        self.players, self.deck = list(players), deck
        self.illegal_rate, self.late_rate, self.unseen_rate = illegal_rate, late_rate, unseen_rate
        self.merge_rate = merge_rate
        self.unshown = False     # the last change was not shown: the next card shares its frame
        pile = deck.cards()
        self.rng.shuffle(pile)
        self.pile = [c.flipped() if self.rng.random() < 0.5 else c for c in pile]
        self.pile.reverse()               # pop() draws from the front of the shuffled order
        self.draws: list[Card] = []
        self.table: list[Chain] = []
        self.piles: dict[str, list[Chain]] = {p: [] for p in self.players}
        self.seen: Counter[Card] = Counter()
        self.turn = 0
        self.moves: list[dict] = []
        self.frames: list[Table] = []
        self.piles_after: list[dict] = []
        self.undrawn_after: list[int] = []
        self.late: list[tuple[Chain, str, int]] = []     # complete snakes to be taken next frame
        self.injected: list[tuple[int, str]] = []

    # --- bookkeeping -------------------------------------------------------
    def draw(self) -> Card:
        card = self.pile.pop()
        self.draws.append(card)
        return card

    def see(self, card: Card) -> None:
        self.seen[self.deck.identity(card)] += 1

    def emit(self) -> None:
        self.frames.append([list(c) for c in self.table])
        self.piles_after.append({p: [list(s) for s in snakes] for p, snakes in self.piles.items()})
        self.undrawn_after.append(len(self.pile))

    @property
    def frame(self) -> int:
        return len(self.frames)

    def player(self, turn: int | None = None) -> str | None:
        turn = self.turn if turn is None else turn
        return self.players[(turn - 1) % len(self.players)] if turn > 0 else None

    def move(self, card: Card | None, action: str, code: str | None = None,
             collected: tuple[str, int] | None = None, turn: int | None = None,
             player: str | None = None) -> None:
        turn = self.turn if turn is None else turn
        self.moves.append({"frame": self.frame, "turn": turn,
                           "player": player if player is not None else self.player(turn),
                           "card": card.code if card else None, "action": action,
                           "legal": code is None, "code": code, "reason": None,
                           "collected": {"player": collected[0], "cards": collected[1]}
                           if collected else None})

    def take_late(self) -> None:
        """Snakes completed earlier leave the table in the frame about to be shown."""
        for chain, player, turn in sorted(self.late, key=lambda e: code_key(canonical(e[0]))):
            self.table.remove(chain)
            self.piles[player].append(canonical(chain))
            self.move(None, "collect", collected=(player, len(chain)), turn=turn, player=player)
        self.late = []

    def incomplete(self) -> list[Chain]:
        return [c for c in self.table if not is_complete(c)]

    # --- a legal turn -------------------------------------------------------
    def play(self, card: Card, seen: bool = False) -> None:
        """A legal turn; `seen` forces the card to show in a frame (it follows an unshown one)."""
        options = legal_placements(self.table, card)
        placement = self.rng.choice(options)
        if placement.completes and not seen:
            used = [self.table[i] for i in placement.used]
            after = self.pile[-1] if self.pile else None
            if (after and self.rng.random() < self.merge_rate and self._inferable(used, card, after)
                    and all(self.deck.identity(c) != self.deck.identity(after) for u in used for c in u)):
                # the camera misses this table: the next card shows in the same frame
                self._complete_unseen(used, card, after, show=False)
                return
            if self.rng.random() < self.unseen_rate and self._inferable(used, card):
                self._complete_unseen(used, card)
                return
        self.see(card)
        self.table = list(placement.table)
        action = "complete" if placement.completes else placement.action
        self.move(placement.card, action)
        self.emit()
        if placement.completes:
            if self.rng.random() < self.late_rate and self.pile:
                self.late.append((placement.chain, self.player(), self.turn))
            else:
                self.table.remove(placement.chain)
                self.piles[self.player()].append(canonical(placement.chain))
                self.move(None, "collect", collected=(self.player(), len(placement.chain)))
                self.emit()

    def _available(self, also: Card | None = None) -> Counter:
        return +self.deck.remaining(self._seen_cards() + ([also] if also else []))

    def _inferable(self, used: list[Chain], card: Card, also: Card | None = None) -> bool:
        """The referee can tell the one card that completed these chains unseen."""
        groups = explain_vanished(used, self._available(also))
        return (len(groups) == 1 and len(groups[0][0]) == len(used)
                and {self.deck.identity(o.card) for o in groups[0][1]} == {self.deck.identity(card)})

    def _complete_unseen(self, used: list[Chain], card: Card, also: Card | None = None,
                         show: bool = True) -> None:
        option = explain_vanished(used, self._available(also))[0][1][0]
        self.see(card)
        for chain in used:
            self.table.remove(chain)
        snake = canonical(option.snake)
        self.piles[self.player()].append(snake)
        self.move(option.card, "complete", collected=(self.player(), len(snake)))
        if show:
            self.emit()
        else:
            self.unshown = True

    def _seen_cards(self) -> list[Card]:
        return [c for c, n in self.seen.items() for _ in range(n)]

    # --- rules broken on purpose ---------------------------------------------
    def break_rule(self, card: Card) -> bool:
        """Try one randomly chosen kind of illegal turn; False if it does not apply here."""
        kind = self.rng.choice(TURN_FAULTS)
        if kind == TWO_CARDS:
            return self._two_cards(card)
        if kind == COLLECTED_INCOMPLETE:
            return self._take_incomplete(card)
        if kind == DECK_EXCEEDED:
            return self._duplicate(card)
        if kind == COULD_ATTACH:
            if not any(p.action != "new" for p in legal_placements(self.table, card)):
                return False
            return self._lay(card, (card,), (), "new", kind)
        found = [(chain, result, pos) for chain in self.incomplete()
                 for result, pos in _attachments(chain, card)
                 if [p.code for p in placement_problems(result, pos)][:1] == [kind]]
        if not found:
            return False
        chain, result, pos = self.rng.choice(found)
        return self._lay(card, result, (chain,), "extend", kind, position=pos)

    def _lay(self, card: Card, result: Chain, used: tuple[Chain, ...], action: str, code: str,
             position: int = 0) -> bool:
        self.see(card)
        for chain in used:
            self.table.remove(chain)
        self.table.append(result)
        self.move(result[position], action, code)
        self.injected.append((self.frame, code))
        self.emit()
        return True

    def _between_turns(self, kind: str) -> bool:
        """Push two snakes together or take a card back, between two turns."""
        chains = self.incomplete()
        if kind == REARRANGED:
            pairs = [(a, b) for a in chains for b in chains if a is not b and not is_complete(a + b)]
            if not pairs:
                return False
            a, b = self.rng.choice(pairs)
            self.table.remove(a)
            self.table.remove(b)
            self.table.append(a + b)
        else:
            # taking a card back must not leave a complete snake: nobody would have completed it
            longer = [c for c in chains if len(c) >= 2 and not is_complete(c[:-1])]
            if not longer:
                return False
            chain = self.rng.choice(longer)
            self.table[self.table.index(chain)] = chain[:-1]
        self.move(None, "none", kind)
        self.injected.append((self.frame, kind))
        self.emit()
        return True

    def _two_cards(self, card: Card) -> bool:
        if not self.pile:
            return False
        first = [p for p in legal_placements(self.table, card) if not p.completes]
        if not first:
            return False
        placement = self.rng.choice(first)
        after = list(placement.table)
        extra = self.pile[-1]
        second = [p for p in legal_placements(after, extra) if not p.completes]
        if not second:
            return False
        self.draw()
        self.see(card)
        self.see(extra)
        self.table = list(self.rng.choice(second).table)
        codes = sorted([self.deck.identity(card).code, self.deck.identity(extra).code])
        self.move(Card.parse(codes[0]), "new", TWO_CARDS)
        self.injected.append((self.frame, TWO_CARDS))
        self.emit()
        return True

    def _take_incomplete(self, card: Card) -> bool:
        options = [p for p in legal_placements(self.table, card) if not p.completes]
        if not options:
            return False
        placement = self.rng.choice(options)
        # A victim holding a copy of the card laid would read as that card moved: ambiguous.
        same = self.deck.identity(card)
        # ...and one a single unseen card could have completed would read as a completion.
        available = +self.deck.remaining(self._seen_cards() + [same])
        victims = [c for c in placement.table if c is not placement.chain and not is_complete(c)
                   and all(self.deck.identity(x) != same for x in c)
                   and not explain_vanished([c], available)[0][1]]
        if not victims:
            return False
        victim = self.rng.choice(victims)
        self.see(card)
        self.table = list(placement.table)
        self.table.remove(victim)
        self.move(None, "collect", COLLECTED_INCOMPLETE)
        self.move(placement.card, placement.action)
        self.injected.append((self.frame, COLLECTED_INCOMPLETE))
        self.emit()
        return True

    def _duplicate(self, card: Card) -> bool:
        used_up = sorted(c for c, n in self.seen.items() if n >= self.deck.count(c))
        if not used_up:
            return False
        fake = self.rng.choice(used_up)
        options = [p for p in legal_placements(self.table, fake) if not p.completes]
        if not options:
            return False
        self.pile.append(card)        # the real card goes back unplayed
        self.draws.pop()
        placement = self.rng.choice(options)
        self.see(fake)
        self.table = list(placement.table)
        self.move(placement.card, placement.action, DECK_EXCEEDED)
        self.injected.append((self.frame, DECK_EXCEEDED))
        self.emit()
        return True

    # --- the whole game --------------------------------------------------------
    def run(self) -> None:
        starter = self.draw()
        self.see(starter)
        self.table = [(starter,)]
        self.emit()
        while self.pile:
            self.take_late()     # shown gone in whatever frame comes next
            if self.unshown:
                self.unshown = False
                self.turn += 1
                self.play(self.draw(), seen=True)
                continue
            if self.illegal_rate and self.rng.random() < self.illegal_rate:
                kind_between = self.rng.random() < 0.2
                if kind_between and self._between_turns(self.rng.choice(BETWEEN_TURNS)):
                    continue
                card = self.draw()
                self.turn += 1
                if self.break_rule(card):
                    continue
            else:
                card = self.draw()
                self.turn += 1
            self.play(card)
        if self.late:
            self.take_late()
            self.emit()


def _attachments(chain: Chain, card: Card) -> list[tuple[Chain, int]]:
    """Every way to lay a card against either end of a chain, ignoring the rules."""
    turns = [card, card.flipped()] if card.kind is Kind.MIDDLE else [card]
    out = []
    for t in turns:
        out.append(((t,) + chain, 0))
        out.append((chain + (t,), len(chain)))
    return out


def simulate_game(players: Sequence[str], seed: int, deck: Deck | None = None,
                  illegal_rate: float = 0.0, late_rate: float = 0.25,
                  unseen_rate: float = 0.25, merge_rate: float = 0.1) -> SimulatedGame:
    """Play a whole game from a shuffled deck; the same seed gives the same game.

    Of the snakes completed, about `late_rate` are taken a turn late, `unseen_rate`
    taken before any frame shows them complete, and `merge_rate` taken unseen with
    the next card already laid in the same frame (unseen ones only where the
    missing card can be inferred).
    """
    deck = deck or load_deck()
    game = _Game(players, seed, deck, illegal_rate, late_rate, unseen_rate, merge_rate)
    game.run()
    record = {"players": list(players),
              "frames": [{"table": [[c.code for c in chain] for chain in table]}
                         for table in game.frames],
              "finished": True}
    piles = {p: [[c.code for c in s] for s in snakes] for p, snakes in game.piles.items()}
    scores = score_piles(game.piles)
    truth = {"moves": game.moves, "piles": piles, "scores": scores, "winners": rank_winners(scores)}
    _borrow_reasons(truth, record, deck)
    return SimulatedGame(list(players), seed, deck, game.draws, game.frames, game.piles_after,
                         game.undrawn_after, record, truth, game.injected)


def _borrow_reasons(truth: dict, record: dict, deck: Deck) -> None:
    """Give each true move the referee's sentence where the referee's verdict agrees.

    The sentences are for people reading the truth; a move the referee gets
    wrong keeps `reason: None`, so a disagreement still shows when compared.
    """
    from .referee import judge_record
    judged = judge_record(record, deck)["moves"]
    if len(judged) != len(truth["moves"]):
        return
    for mine, theirs in zip(truth["moves"], judged):
        if without_reasons({"moves": [mine], "piles": {}}) == without_reasons({"moves": [theirs], "piles": {}}):
            mine["reason"] = theirs["reason"]


def random_table(seed: int, n_turns: int, deck: Deck | None = None) -> Table:
    """A legal table as it might lie after about `n_turns` changes (for still images)."""
    game = simulate_game(["A", "B", "C"], seed, deck)
    return game.frames[max(0, min(n_turns, len(game.frames) - 1))]
