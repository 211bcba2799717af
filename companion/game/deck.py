"""The deck's composition, read from data so that a calibrated deck can replace it."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from .cards import Card, CardCodeError, Kind

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DECK_PATH = PROJECT_ROOT / "calibration" / "deck.json"
# The marker of a calibration profile (`companion calibrate`), which records the deck it saw.
PROFILE_FORMAT = "hisss-calibration/1"


MOST_COPIES = 50     # of one card: a deck of 50 cards holds no more


class DeckError(ValueError):
    """A deck file or a card that does not fit the deck."""


@dataclass(frozen=True)
class Deck:
    colours: tuple[str, ...]
    counts: Mapping[Card, int] = field(hash=False)

    @classmethod
    def from_dict(cls, data: Mapping) -> "Deck":
        if not isinstance(data, Mapping):
            raise DeckError("a deck is a JSON object with 'colours' and 'cards'")
        try:
            colours = tuple(data["colours"])
            raw = data["cards"]
        except (KeyError, TypeError) as exc:
            raise DeckError(f"deck needs 'colours' and 'cards': missing {exc}") from None
        if isinstance(data["colours"], str) or not all(isinstance(c, str) and c for c in colours):
            raise DeckError("deck colours must be a list of colour names")
        if len(set(colours)) != len(colours) or not colours:
            raise DeckError("deck colours must be a non-empty list without repeats")
        if not isinstance(raw, Mapping) or not raw:
            raise DeckError("deck cards must map card codes to how many copies the deck holds")
        counts: Counter[Card] = Counter()
        for code, n in raw.items():
            try:
                card = Card.parse(code)
            except CardCodeError as exc:
                raise DeckError(str(exc)) from None
            unknown = [c for c in card.colours if c not in colours]
            if unknown:
                raise DeckError(f"{code}: colour {unknown[0]!r} is not one of the deck's colours")
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MOST_COPIES:
                raise DeckError(f"{code}: count must be a whole number from 0 to {MOST_COPIES}")
            counts[card.identity(colours)] += n
        return cls(colours, dict(counts))

    def to_dict(self) -> dict:
        return {
            "colours": list(self.colours),
            "cards": {card.code: n for card, n in sorted(self.counts.items()) if n},
        }

    @property
    def size(self) -> int:
        return sum(self.counts.values())

    def identity(self, card: Card) -> Card:
        # The deck's keys are identities already: a look-up spares re-ranking colours,
        # which the referee does for every card of every frame.
        if card in self.counts:
            return card
        turned = card.flipped()
        if turned in self.counts:
            return turned
        return card.identity(self.colours)

    def count(self, card: Card) -> int:
        return self.counts.get(self.identity(card), 0)

    def parse(self, code: str) -> Card:
        """Parse a code and check that the deck holds such a card."""
        card = Card.parse(code)
        if not card.kind.is_face:
            raise DeckError(f"{code!r} is not a card face")
        if self.count(card) == 0:
            raise DeckError(f"{code!r} is not a card of this deck")
        return card

    def cards(self) -> list[Card]:
        """Every physical card, one entry per copy, in a stable order."""
        return [card for card, n in sorted(self.counts.items()) for _ in range(n)]

    def remaining(self, seen: Iterable[Card]) -> Counter[Card]:
        """What is left after the given cards; negative counts mean too many copies were seen."""
        left = Counter(self.counts)
        for card in seen:
            left[self.identity(card)] -= 1
        return left

    def kinds(self) -> Counter[Kind]:
        out: Counter[Kind] = Counter()
        for card, n in self.counts.items():
            out[card.kind] += n
        return out


def load_deck(path: str | Path | None = None) -> Deck:
    path = Path(path) if path else DEFAULT_DECK_PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DeckError(f"cannot read deck file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise DeckError(f"deck file {path} is not text (UTF-8)") from None
    except json.JSONDecodeError as exc:
        raise DeckError(f"deck file {path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    try:
        return Deck.from_dict(data)
    except DeckError as exc:
        raise DeckError(f"deck file {path}: {exc}") from None
