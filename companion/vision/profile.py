"""The calibration profile as the vision reads it.

`companion calibrate` (another module) writes profiles; this is the one place
that reads them, so every command accepts the same `--profile FILE`.  Without a
profile the defaults describe the assumed deck (see shared/CARDS.md): six
colours, card aspect anywhere between 1:1 and 1:1.6, colours judged by the
trained models alone.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from companion.game.deck import PROFILE_FORMAT

DEFAULT_COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Profile:
    colours: tuple[str, ...] = DEFAULT_COLOURS
    # long side / short side of one card; None = learn from the cards in view
    card_aspect: float | None = None
    # per colour, the mean Lab (L 0..100, a, b) of a card end after white balance
    colour_lab: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)
    source: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def aspect_range(self) -> tuple[float, float]:
        if self.card_aspect is None:
            return (1.0, 1.6)
        # a card's long side is never shorter than its short side, whatever the tolerance says
        return (max(1.0, self.card_aspect * 0.93), self.card_aspect * 1.07)


def load_profile(path: str | Path | None) -> Profile:
    """Read a calibration profile; None gives the defaults."""
    if path is None:
        return Profile()
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such profile file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read profile ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a profile is a JSON object")
    # any other JSON file (a game record, a deck) would otherwise pass as "no calibration"
    if data.get("format") != PROFILE_FORMAT:
        raise ProfileError(f"{path}: not a calibration profile (no \"format\": \"{PROFILE_FORMAT}\"); "
                           f"make one with companion calibrate")
    return profile_from_dict(data, str(path))


def profile_from_dict(data: Mapping[str, Any], source: str = "profile") -> Profile:
    colours = data.get("colours", list(DEFAULT_COLOURS))
    if not (isinstance(colours, list) and colours and all(isinstance(c, str) for c in colours)):
        raise ProfileError(f"{source}: 'colours' must be a non-empty list of names")
    aspect = data.get("card_aspect")
    if aspect is not None and not (isinstance(aspect, (int, float)) and 1.0 <= aspect <= 2.5):
        raise ProfileError(f"{source}: 'card_aspect' must be a number between 1.0 and 2.5")
    lab_raw = data.get("colour_lab", {})
    if not isinstance(lab_raw, dict):
        raise ProfileError(f"{source}: 'colour_lab' must map colour names to [L, a, b]")
    colour_lab = {}
    for name, value in lab_raw.items():
        if not (isinstance(value, list) and len(value) == 3
                and all(isinstance(v, (int, float)) for v in value)):
            raise ProfileError(f"{source}: colour_lab.{name} must be [L, a, b]")
        colour_lab[name] = tuple(float(v) for v in value)
    return Profile(tuple(colours), None if aspect is None else float(aspect),
                   colour_lab, source, dict(data))
