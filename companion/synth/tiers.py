"""Difficulty tiers: the parameter ranges a scene's camera, table, light and layout are drawn from.

Each range is (low, high), drawn uniformly unless said otherwise.  The table
in README.md ("Synthetic scenes") is generated from this one (`tier_table`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

Range = tuple[float, float]


@dataclass(frozen=True)
class Tier:
    name: str
    resolutions: tuple[tuple[int, int], ...]   # picked uniformly when no size is given
    tilt_deg: Range                # camera tilt from vertical
    roll_deg: Range                # rotation about the optical axis
    card_px: Range                 # short side (shortest outline edge) of every card in a still, pixels
    hfov_deg: Range                # horizontal field of view
    k1: Range                      # radial lens distortion (normalised, >0 barrel)
    surfaces: tuple[str, ...]      # procedural tables (photos join them when textures are given)
    kelvin: Range                  # colour temperature of the light
    white_balance: Range           # how much of the cast the camera corrects (1 = all)
    exposure: Range                # overall brightness multiplier
    uneven_light: Range            # strength of a broad light gradient / lamp pool
    vignetting: Range              # brightness lost in the corners
    shadows: tuple[int, int]       # number of soft head/hand shadows (inclusive)
    shadow_depth: Range            # fraction of light a shadow takes away
    glare: Range                   # strength of the lamp's reflection on glossy cards
    noise_sigma: Range             # sensor noise, grey levels at mid-grey
    focus_blur_px: Range           # Gaussian sigma
    motion_blur_px: Range          # length of a straight motion streak
    jpeg_quality: tuple[int, int]  # inclusive
    neighbour_angle_deg: float     # largest angle between neighbouring cards in a chain
    gap_frac: Range                # gap between neighbours, fraction of the card's short side
    lateral_frac: float            # sideways slip of a neighbour along the edge, fraction of short side
    distractors: tuple[int, int]   # coins, phone, mug, other games' cards (inclusive)
    fan_chance: float              # chance of a fan of face-down cards
    collected_chance: float        # chance of collected snakes near the table edge
    hand_chance: float = 0.0       # chance of a hand reaching over a card of a still


TIERS: dict[str, Tier] = {
    "easy": Tier(
        name="easy", resolutions=((1280, 720), (1024, 768)),
        tilt_deg=(0, 10), roll_deg=(-180, 180), card_px=(80, 140), hfov_deg=(55, 65), k1=(0.0, 0.0),
        surfaces=("felt", "laminate", "wood"), kelvin=(4800, 6500), white_balance=(0.8, 1.0),
        exposure=(0.95, 1.05), uneven_light=(0.05, 0.15), vignetting=(0.05, 0.15), shadows=(0, 0),
        shadow_depth=(0.0, 0.0), glare=(0.0, 0.0), noise_sigma=(1.5, 2.5), focus_blur_px=(0.5, 0.8),
        motion_blur_px=(0.0, 0.0), jpeg_quality=(88, 95), neighbour_angle_deg=8.0, gap_frac=(0.0, 0.04),
        lateral_frac=0.03, distractors=(0, 0), fan_chance=0.0, collected_chance=0.0, hand_chance=0.0),
    "medium": Tier(
        name="medium", resolutions=((640, 480), (1280, 720), (1920, 1080)),
        tilt_deg=(0, 30), roll_deg=(-180, 180), card_px=(50, 180), hfov_deg=(55, 75), k1=(-0.04, 0.06),
        surfaces=("felt", "laminate", "wood", "weave", "pattern"), kelvin=(3200, 7500), white_balance=(0.5, 1.0),
        exposure=(0.8, 1.15), uneven_light=(0.0, 0.35), vignetting=(0.0, 0.3), shadows=(0, 1),
        shadow_depth=(0.15, 0.4), glare=(0.1, 0.5), noise_sigma=(1.5, 5.0), focus_blur_px=(0.5, 1.1),
        motion_blur_px=(0.0, 2.0), jpeg_quality=(70, 95), neighbour_angle_deg=20.0, gap_frac=(0.0, 0.1),
        lateral_frac=0.08, distractors=(0, 2), fan_chance=0.5, collected_chance=0.4, hand_chance=0.15),
    "hard": Tier(
        name="hard", resolutions=((640, 480), (1280, 720), (1920, 1080), (3840, 2160)),
        tilt_deg=(10, 45), roll_deg=(-180, 180), card_px=(40, 250), hfov_deg=(55, 80), k1=(-0.08, 0.12),
        surfaces=("felt", "laminate", "wood", "weave", "pattern"), kelvin=(2700, 9000), white_balance=(0.2, 0.9),
        exposure=(0.55, 1.25), uneven_light=(0.15, 0.6), vignetting=(0.1, 0.5), shadows=(1, 2),
        shadow_depth=(0.25, 0.6), glare=(0.3, 1.0), noise_sigma=(2.0, 10.0), focus_blur_px=(0.3, 1.8),
        motion_blur_px=(0.0, 6.0), jpeg_quality=(50, 90), neighbour_angle_deg=30.0, gap_frac=(0.0, 0.1),
        lateral_frac=0.1, distractors=(1, 5), fan_chance=0.8, collected_chance=0.7, hand_chance=0.5),
}


def get_tier(name: str) -> Tier:
    try:
        return TIERS[name]
    except KeyError:
        raise ValueError(f"unknown tier {name!r}; choose from {', '.join(TIERS)}") from None


def tier_table() -> str:
    """The tiers as a Markdown table (for README and reports)."""
    names = list(TIERS)
    rows = ["| parameter | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for f in fields(Tier):
        if f.name == "name":
            continue
        cells = []
        for n in names:
            v = getattr(TIERS[n], f.name)
            if f.name == "resolutions":
                v = ", ".join(f"{w}x{h}" for w, h in v)
            elif f.name == "surfaces":
                v = ", ".join(v)
            elif isinstance(v, tuple):
                v = f"{v[0]:g} to {v[1]:g}"
            else:
                v = f"{v:g}"
            cells.append(str(v))
        rows.append(f"| {f.name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
