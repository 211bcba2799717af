"""What the templates need to draw a card glyph: kind, colours, which way it faces."""
from __future__ import annotations

from dataclasses import dataclass

from companion.game.cards import Card, CardCodeError, Kind

COLOUR_HEX = {"red": "#e53935", "orange": "#fb8c00", "yellow": "#fdd835",
              "green": "#43a047", "blue": "#1e88e5", "purple": "#8e24aa"}
UNKNOWN_HEX = "#9e9e9e"
RAINBOW = tuple(COLOUR_HEX)


@dataclass(frozen=True)
class Glyph:
    code: str
    kind: str              # head | tail | middle | rainbow_head | rainbow_tail | unknown
    colours: tuple         # as read along the chain, left to right on screen
    faces_right: bool      # an end piece's connecting edge is on its right
    rainbow: bool

    @property
    def is_head(self) -> bool:
        return self.kind in ("head", "rainbow_head")

    @property
    def hexes(self) -> tuple:
        return tuple(COLOUR_HEX.get(c, UNKNOWN_HEX) for c in self.colours)

    @property
    def end_colour(self) -> str:
        return "rainbow" if self.rainbow else (self.colours[0] if self.colours else "")


def glyph(code: str, position: int = 0, length: int = 1) -> Glyph:
    """The glyph of the card at `position` in a chain of `length`, read left to right."""
    try:
        card = Card.parse(code)
    except CardCodeError:
        return Glyph(str(code), "unknown", (), True, False)
    # the first card of a chain connects on its right, every other end piece on its left
    faces_right = position == 0
    rainbow = card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL)
    return Glyph(card.code, card.kind.value, card.colours, faces_right, rainbow)


def chain_glyphs(chain: list[str]) -> list[Glyph]:
    return [glyph(code, i, len(chain)) for i, code in enumerate(chain)]


def gradient_pairs() -> list[tuple[str, str, str, str]]:
    """Every ordered pair of known colours, for the page's SVG gradient definitions."""
    return [(a, b, COLOUR_HEX[a], COLOUR_HEX[b]) for a in COLOUR_HEX for b in COLOUR_HEX if a != b]
