"""Cards and their codes, as written in the outside contract.

A `Card` is a card face *as it lies*: a middle-section's colours are in the
order of the chain it is read in, so ``M-red-blue`` and ``M-blue-red`` are the
same physical card seen from opposite directions.  `Card.identity` gives the
deck's name for it, which is what counting and deck checks use.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    HEAD = "head"
    TAIL = "tail"
    MIDDLE = "middle"
    RAINBOW_HEAD = "rainbow_head"
    RAINBOW_TAIL = "rainbow_tail"
    BACK = "back"
    UNKNOWN = "unknown"

    @property
    def is_head(self) -> bool:
        return self in (Kind.HEAD, Kind.RAINBOW_HEAD)

    @property
    def is_tail(self) -> bool:
        return self in (Kind.TAIL, Kind.RAINBOW_TAIL)

    @property
    def is_end_piece(self) -> bool:
        """Heads and tails, jokers included: the cards that close a snake."""
        return self.is_head or self.is_tail

    @property
    def is_face(self) -> bool:
        """A recognised Hisss face, the only cards that join chains."""
        return self not in (Kind.BACK, Kind.UNKNOWN)


class CardCodeError(ValueError):
    """A card code that does not follow the contract's grammar."""


_PREFIX = {"H": Kind.HEAD, "T": Kind.TAIL, "M": Kind.MIDDLE}
_JOKERS = {"RH": Kind.RAINBOW_HEAD, "RT": Kind.RAINBOW_TAIL}
_COLOURS_PER_KIND = {Kind.HEAD: 1, Kind.TAIL: 1, Kind.MIDDLE: 2}


@dataclass(frozen=True, order=True)
class Card:
    kind: Kind
    colours: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        expected = _COLOURS_PER_KIND.get(self.kind, 0)
        if len(self.colours) != expected:
            raise CardCodeError(
                f"a {self.kind.value} card has {expected} colour(s), got {len(self.colours)}"
            )

    @classmethod
    def parse(cls, code: str) -> "Card":
        if not isinstance(code, str):
            raise CardCodeError(f"card code must be a string, got {code!r}")
        if code in _JOKERS:
            return cls(_JOKERS[code])
        prefix, _, rest = code.partition("-")
        kind = _PREFIX.get(prefix)
        parts = rest.split("-") if rest else []
        if kind is None or len(parts) != _COLOURS_PER_KIND[kind] or not all(parts):
            raise CardCodeError(f"not a card code: {code!r}")
        return cls(kind, tuple(parts))

    @property
    def code(self) -> str:
        for text, kind in _JOKERS.items():
            if kind is self.kind:
                return text
        letter = {v: k for k, v in _PREFIX.items()}.get(self.kind)
        if letter is None:
            return self.kind.value
        return "-".join((letter, *self.colours))

    def flipped(self) -> "Card":
        """The same card read from the other direction."""
        return Card(self.kind, tuple(reversed(self.colours)))

    def identity(self, palette: tuple[str, ...] = ()) -> "Card":
        """The deck's name for this card: a middle's colours in palette order."""
        if self.kind is not Kind.MIDDLE:
            return self
        rank = {c: i for i, c in enumerate(palette)}
        a, b = self.colours
        if (rank.get(a, len(rank)), a) > (rank.get(b, len(rank)), b):
            return self.flipped()
        return self

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"


def parse_card(code: str) -> Card:
    return Card.parse(code)
