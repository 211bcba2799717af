"""The referee: watches the table change and judges each change.

Feed it the table as seen, one settled table after another (`observe`); it
compares each with the last as a multiset of chains (listing order and reading
direction do not matter), works out what was done, and returns the moves in
the judge's JSON format (CONTRACT.md).  An illegal move is a verdict: the table
as seen stands and play goes on from it.

Turns: players play in the given order, starting with the first placement
after the starter card.  A collection is not a turn; it belongs to whoever
completed the snake, also when it is taken late or was completed and taken
before any frame showed it complete (the missing card is inferred when exactly
one card could have done it, otherwise the move is flagged).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .cards import Card, Kind
from .chains import Chain, canonical, code_key, describe_chain, is_complete, table_multiset
from .deck import Deck, load_deck
from .record import GameRecord, RecordError, check_players, parse_record, read_table
from .rules import (CARD_REMOVED, COLLECTED_INCOMPLETE, COMPLETION_UNSEEN, DECK_EXCEEDED,
                    COULD_ATTACH, REARRANGED, TWO_CARDS, explain_vanished, fits_somewhere,
                    placement_problems)
from .scoring import rank_winners, score_piles

__all__ = ["Move", "Referee", "RecordError", "judge_record", "score_piles", "rank_winners"]

UNSEEN = Card(Kind.UNKNOWN)  # stands in a pile for a card nobody saw


@dataclass
class Move:
    """One judged change.  `to_json` is exactly a move of `companion judge --json`."""
    frame: int
    turn: int
    player: str | None
    card: Card | None
    action: str                  # new | extend | join | complete | collect | none
    legal: bool
    code: str | None
    reason: str
    collected: dict | None = None
    chain: Chain | None = field(default=None, compare=False)  # the card's chain, or the snake taken
    inferred: bool = field(default=False, compare=False)      # the card was never seen

    def to_json(self) -> dict:
        return {"frame": self.frame, "turn": self.turn, "player": self.player,
                "card": self.card.code if self.card else None, "action": self.action,
                "legal": self.legal, "code": self.code, "reason": self.reason,
                "collected": dict(self.collected) if self.collected else None}


@dataclass
class _Completed:
    chain: Chain        # canonical
    player: str | None
    turn: int


def _number(n: int) -> str:
    return {2: "Two", 3: "Three", 4: "Four"}.get(n, str(n))


def _without(table: Sequence[Chain], chains: Counter) -> list[Chain]:
    """The table less the given chains (canonical, with multiplicity)."""
    left, out = Counter(chains), []
    for chain in table:
        if left[canonical(chain)] > 0:
            left[canonical(chain)] -= 1
        else:
            out.append(chain)
    return out


class Referee:
    """Judges a game table by table.

    `piles` maps each player to the snakes collected (chains of `Card`);
    `table` is the last table seen; `removed` are cards taken off the table
    illegally (they score for nobody).
    """

    def __init__(self, players: Sequence[str], deck: Deck | None = None):
        self.players = check_players(list(players))
        self.deck = deck or load_deck()
        self.table: tuple[Chain, ...] | None = None
        self.moves: list[Move] = []
        self.piles: dict[str, list[Chain]] = {p: [] for p in self.players}
        self.removed: list[Card] = []
        self.turn = 0
        self.frame = -1
        self.finished = False
        self._seen: Counter[Card] = Counter()
        self._completed: list[_Completed] = []

    # --- whose turn -------------------------------------------------------
    def player_of(self, turn: int) -> str | None:
        return self.players[(turn - 1) % len(self.players)] if turn > 0 else None

    @property
    def next_player(self) -> str:
        return self.players[self.turn % len(self.players)]

    def undrawn(self) -> int:
        """Cards never seen: still in the draw pile as far as the referee knows."""
        return self.deck.size - sum(self._seen.values())

    # --- observing --------------------------------------------------------
    def observe(self, table: Iterable[Iterable[Card | str]], frame: int | None = None) -> list[Move]:
        """Judge the table as now seen; returns the moves it reveals ([] if nothing changed)."""
        if self.finished:
            raise RecordError(f"frame {self.frame + 1 if frame is None else frame}: the game is already over")
        frame = self.frame + 1 if frame is None else frame
        seen = read_table(list(table), self.deck, f"frame {frame}")
        self.frame = frame
        if self.table is None or not (self.table or self._seen):
            # The first table seen is where play starts (normally the starter card);
            # an empty table before it is the moment before the starter is laid.
            self.table = seen
            self._seen = Counter(self.deck.identity(c) for chain in seen for c in chain)
            self._completed = [_Completed(canonical(c), None, 0) for c in seen if is_complete(c)]
            return []
        old, new = table_multiset(self.table), table_multiset(seen)
        if old == new:
            self.table = seen
            return []
        added, removed = new - old, old - new
        ids_old, ids_new = self._identities(old), self._identities(new)
        plain, gone = ids_new - ids_old, ids_old - ids_new
        # A snake collected in the same change may hold a copy of the card just laid,
        # so new cards are counted against the table without the complete snakes gone.
        collectable = Counter({c: n for c, n in removed.items() if is_complete(c)})
        arrived = ids_new - self._identities(old - collectable)
        if (sum(arrived.values()) > 1 and sum(plain.values()) == 1
                and self._reading(next(iter(plain)), added, removed, seen)):
            arrived = plain   # a card laid against a complete snake, not a collection
        count = sum(arrived.values())
        if count == 0 and not added:
            moves = self._vanished(removed, frame)
        elif count == 0:
            moves = self._shuffled(removed, gone, frame)
        elif count == 1:
            moves = self._placed(next(iter(arrived)), added, removed, seen, frame)
        else:
            moves = self._two_cards(arrived, removed, frame)
        self._seen += arrived
        self.table = seen
        # whoever made a snake complete owns it while it lies out; forget snakes gone
        self._completed = [c for c in self._completed if new[c.chain]]
        for chain in new:
            if is_complete(chain) and not any(c.chain == chain for c in self._completed):
                self._completed.append(_Completed(chain, self.player_of(self.turn), self.turn))
        self.moves.extend(moves)
        return moves

    def _identities(self, chains: Counter) -> Counter[Card]:
        out: Counter[Card] = Counter()
        for chain, n in chains.items():
            for card in chain:
                out[self.deck.identity(card)] += n
        return out

    # --- what a change can be ---------------------------------------------
    def _reading(self, card_id: Card, added: Counter, removed: Counter, seen: tuple[Chain, ...]):
        """How one new card explains the change, breaking the fewest rules; None if it cannot.

        The card's chain, minus the card, must be chains that were on the table;
        whatever else left the table was collected.
        """
        best = None
        if sum(added.values()) == 1:
            for chain in {c for c in seen if canonical(c) in added}:
                for i, card in enumerate(chain):
                    if self.deck.identity(card) != card_id:
                        continue
                    parts = [p for p in (chain[:i], chain[i + 1:]) if p]
                    used = Counter(canonical(p) for p in parts)
                    if used - removed:
                        continue
                    taken = removed - used
                    problems = placement_problems(chain, i)
                    rank = (bool(problems), sum(not is_complete(c) for c in taken), code_key(chain), i)
                    if best is None or rank < best[0]:
                        best = (rank, chain, i, parts, taken, problems)
        return best

    def _placed(self, card_id: Card, added: Counter, removed: Counter,
                seen: tuple[Chain, ...], frame: int) -> list[Move]:
        """Exactly one new card: judge the best reading of the change."""
        best = self._reading(card_id, added, removed, seen)
        exceeded = self._seen[card_id] + 1 > self.deck.count(card_id)
        if best is None:
            self.turn += 1
            player = self.player_of(self.turn)
            card = next(c for chain in seen for c in chain if self.deck.identity(c) == card_id)
            taken = Counter({c: n for c, n in removed.items() if is_complete(c)})
            moves = self._collections(taken, frame)
            moves.append(Move(frame, self.turn, player, card, "extend", False, REARRANGED,
                              f"{player} laid {card.code}, but other cards moved as well: only the card "
                              f"just drawn may be laid, and snakes may not be pushed together or split.",
                              chain=None))
            return moves
        _, chain, i, parts, taken, problems = best
        card = chain[i]
        complete = Counter({c: n for c, n in taken.items() if is_complete(c)})
        moves = self._collections(complete, frame)
        unseen, grabbed = self._unseen_completions(list((taken - complete).elements()), frame, card)
        moves += unseen
        self.turn += 1
        player = self.player_of(self.turn)
        moves += [self._took_incomplete(c, frame) for c in grabbed]
        before = _without(self.table, taken - Counter(grabbed))   # the table the card met
        moves.append(self._verdict(frame, player, card, chain, parts, problems, exceeded, before))
        return moves

    def _verdict(self, frame: int, player: str, card: Card, chain: Chain, parts: list[Chain],
                 problems: list, exceeded: bool, before: Sequence[Chain]) -> Move:
        """The verdict on laying `card` into `chain` (made of `parts` and the card)."""
        action = ("new", "extend", "join")[len(parts)]
        what = f"{player} lays {card.code}"

        def move(action: str, code: str | None, reason: str) -> Move:
            return Move(frame, self.turn, player, card, action, code is None, code, reason,
                        chain=chain)

        if exceeded:
            ident = self.deck.identity(card)
            return move(action, DECK_EXCEEDED,
                        f"{what}, but the deck has only {self.deck.count(ident)} {ident.code}, and "
                        f"all of them are already in play.")
        if problems:
            return move(action, problems[0].code, f"{what}: {problems[0].message}")
        if action == "new" and fits_somewhere(before, card):
            option = fits_somewhere(before, card)[0]
            return move(action, COULD_ATTACH, f"{what} alone, but it fits on the table: it could "
                                              f"{option.describe(before)}.")
        if is_complete(chain):
            return move("complete", None, f"{what} and completes the snake {describe_chain(chain)}: "
                                          f"its {len(chain)} cards are {player}'s to collect.")
        if action == "new":
            return move(action, None, f"{what} alone: it fits nowhere on the table.")
        if action == "extend":
            return move(action, None, f"{what} at an open end of {describe_chain(parts[0])}.")
        return move(action, None, f"{what} between {describe_chain(parts[0])} and "
                                  f"{describe_chain(parts[1])}, joining them.")

    def _collections(self, taken: Counter, frame: int) -> list[Move]:
        """Chains that left the table in a frame with a placement: collections, legal or not."""
        chains = sorted(taken.elements(), key=lambda c: (not is_complete(c), code_key(c)))
        return [self._collect(c, frame) if is_complete(c) else self._took_incomplete(c, frame)
                for c in chains]

    def _collect(self, chain: Chain, frame: int, *, at_end: bool = False) -> Move:
        entry = next((c for c in self._completed if c.chain == chain), None)
        if entry is not None:
            self._completed.remove(entry)
        player = entry.player if entry and entry.player else self.player_of(self.turn) or self.players[0]
        turn = entry.turn if entry else self.turn
        self.piles[player].append(chain)
        n, snake = len(chain), describe_chain(chain)
        if entry is None or entry.player is None:
            reason = f"{player} collects the snake {snake}: {n} cards."
        elif at_end:
            reason = (f"The snake {snake}, completed by {player} on turn {turn}, still lay out when "
                      f"the game ended: its {n} cards are {player}'s.")
        elif self.turn > turn:
            reason = (f"The snake {snake} is taken a turn late; {player} completed it on turn {turn}, "
                      f"so its {n} cards are {player}'s.")
        else:
            reason = f"{player} collects the snake {snake} completed on turn {turn}: {n} cards."
        return Move(frame, turn, player, None, "collect", True, None, reason,
                    collected={"player": player, "cards": n}, chain=chain)

    def _took_incomplete(self, chain: Chain, frame: int) -> Move:
        self.removed.extend(chain)
        player = self.player_of(self.turn)
        when = f" after {player}'s turn" if player else ""
        return Move(frame, self.turn, player, None, "collect", False, COLLECTED_INCOMPLETE,
                    f"The snake {describe_chain(chain)} was taken off the table{when}, but it is not "
                    f"complete: only a snake with a head, a middle-section and a tail may be collected.",
                    chain=chain)

    def _vanished(self, removed: Counter, frame: int) -> list[Move]:
        """Chains left the table and nothing else changed: collections, seen or unseen."""
        complete = Counter({c: n for c, n in removed.items() if is_complete(c)})
        moves = [self._collect(c, frame) for c in sorted(complete.elements(), key=code_key)]
        unseen, grabbed = self._unseen_completions(list((removed - complete).elements()), frame)
        return moves + unseen + [self._took_incomplete(c, frame) for c in grabbed]

    def _unseen_completions(self, chains: list[Chain], frame: int, laid: Card | None = None
                            ) -> tuple[list[Move], list[Chain]]:
        """Incomplete chains that vanished, completed and taken unseen (a turn each), and
        the chains no single card could have completed: those were taken incomplete.

        `laid` is a card seen laid in the same frame: it is on the table, so it did
        not complete anything, and the unseen turn is taken to come before it.
        """
        seen = self._seen_cards() + ([self.deck.identity(laid)] if laid else [])
        available = +self.deck.remaining(seen)
        moves, grabbed = [], []
        for group, options in explain_vanished(chains, available):
            if not options:
                grabbed.extend(group)
                continue
            self.turn += 1
            player = self.player_of(self.turn)
            cards = sorted({self.deck.identity(o.card) for o in options})
            option = options[0]
            gone = " and ".join(describe_chain(c) for c in group)
            also = (f" (in the same frame as the next card, {laid.code}: this turn is taken to "
                    f"come first)" if laid else "")
            if len(cards) == 1:
                self._seen[cards[0]] += 1
                snake = canonical(option.snake)
                move = Move(frame, self.turn, player, option.card, "complete", True, None,
                            f"{gone} left the table unfinished: only {option.card.code} could have "
                            f"completed it, so {player} drew it, completed the snake and collects its "
                            f"{len(snake)} cards{also}.", collected={"player": player, "cards": len(snake)},
                            chain=snake, inferred=True)
            else:
                snake = canonical(tuple(UNSEEN if k == option.position else c
                                        for k, c in enumerate(option.snake)))
                move = Move(frame, self.turn, player, None, "complete", False, COMPLETION_UNSEEN,
                            f"{gone} left the table unfinished; it could have been completed by "
                            f"{' or '.join(c.code for c in cards)}, but no frame showed which: "
                            f"check the card {player} drew{also}.",
                            collected={"player": player, "cards": len(snake)}, chain=snake,
                            inferred=True)
            self.piles[player].append(snake)
            moves.append(move)
        return moves, grabbed

    def _seen_cards(self) -> list[Card]:
        return [card for card, n in self._seen.items() for _ in range(n)]

    def _shuffled(self, removed: Counter, gone: Counter, frame: int) -> list[Move]:
        """No new card but chains changed: snakes pushed together or split, or cards taken back."""
        complete = Counter({c: n for c, n in removed.items() if is_complete(c)})
        moves = [self._collect(c, frame) for c in sorted(complete.elements(), key=code_key)]
        for chain in complete.elements():
            for card in chain:
                gone[self.deck.identity(card)] -= 1
        gone = +gone
        player = self.player_of(self.turn)
        if gone:
            self.removed.extend(gone.elements())
            codes = ", ".join(sorted(c.code for c in gone.elements()))
            moves.append(Move(frame, self.turn, player, None, "none", False, CARD_REMOVED,
                              f"{codes} left the table without a complete snake being collected: "
                              f"a card once laid stays where it is."))
        else:
            moves.append(Move(frame, self.turn, player, None, "none", False, REARRANGED,
                              "Snakes on the table were pushed together, split or turned without a "
                              "new card: only the card just drawn may join or extend snakes."))
        return moves

    def _two_cards(self, arrived: Counter, removed: Counter, frame: int) -> list[Move]:
        taken = Counter({c: n for c, n in removed.items() if is_complete(c)})
        moves = self._collections(taken, frame)
        self.turn += 1
        player = self.player_of(self.turn)
        cards = sorted(arrived.elements(), key=lambda c: c.code)
        moves.append(Move(frame, self.turn, player, cards[0], "new", False, TWO_CARDS,
                          f"{_number(len(cards))} cards appeared at once ({', '.join(c.code for c in cards)}): "
                          f"a player lays one card per turn."))
        return moves

    # --- the end and the score --------------------------------------------
    def finish(self) -> list[Move]:
        """The draw pile is empty: complete snakes still lying out go to whoever completed them."""
        if self.finished:
            return []
        moves = []
        if self.table is not None:
            left = list(self.table)
            for chain in sorted((c for c in self.table if is_complete(c)), key=lambda c: code_key(canonical(c))):
                moves.append(self._collect(canonical(chain), max(self.frame, 0), at_end=True))
                left.remove(chain)
            self.table = tuple(left)
        self.finished = True
        self.moves.extend(moves)
        return moves

    def scores(self) -> dict[str, dict]:
        return score_piles(self.piles)

    def winners(self) -> list[str]:
        return rank_winners(self.scores())

    def seen(self) -> Counter[Card]:
        """Every card known to have been drawn, by deck identity (inferred ones included)."""
        return +Counter(self._seen)

    def accounted(self) -> Counter[Card]:
        """Every seen card by deck identity: on the table, in piles, or removed."""
        out: Counter[Card] = Counter()
        cards = [c for chain in (self.table or ()) for c in chain]
        cards += [c for snakes in self.piles.values() for s in snakes for c in s if c.kind.is_face]
        cards += self.removed
        for card in cards:
            out[self.deck.identity(card)] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"moves": [m.to_json() for m in self.moves],
                "piles": {p: [[c.code for c in s] for s in snakes] for p, snakes in self.piles.items()},
                "scores": self.scores(),
                "winners": self.winners()}


def judge_game(record: GameRecord, deck: Deck | None = None) -> Referee:
    referee = Referee(record.players, deck)
    for i, table in enumerate(record.frames):
        referee.observe(table, frame=i)
    if record.finished:
        referee.finish()
    return referee


def judge_record(record: dict, deck: Deck | None = None) -> dict:
    """The `companion judge --json` output for a record (a dict in the judge FILE format)."""
    deck = deck or load_deck()
    return judge_game(parse_record(record, deck), deck).to_json()
