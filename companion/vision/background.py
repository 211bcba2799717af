"""The empty table as a camera that does not move sees it, and what differs from it.

A still picture must tell cards from the table by their looks alone, and a
cloth whose light stripes are the paper's colour, or cards in a dim corner,
defeat that.  A camera watching a game sees the table before the cards
land on it: what differs from that picture of the empty table is what lies
on it now, whatever the cloth's pattern or the light.  `TableBackground` is
that picture (at the searched copy's scale, in Lab) and where it is known;
`table_distance` and `difference_map` turn a new picture into a 0-255 map of
how far each pixel lies from the table there, in units of the picture's own
noise, which `find_cards` reads as one more map of where cards may lie (only
where the picture alone shows none); `bare_table_map` says where it shows the
table just as it was seen bare, where no snake's body is looked for
(`bodies.cards_by_bodies`).  Learning the background over a game is the
tracker's (`companion.track.background`).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SHAKE = 3            # px of the searched copy: a camera's tremble moves the table this little
NOISE_FLOOR = 1.5    # 8-bit Lab units: a cleaner picture's noise is still JPEG's
CARD_NOISES = 4.0    # a pixel this many times the picture's typical difference away is not table
BARE_NOISES = 2.0    # ... and one under this many times is the table itself, bare
SAMPLE = 4           # every this many pixels each way is enough to measure the light's drift and the noise
SMOOTH = 3.0         # px: a card on a cloth of its own colour differs only in places; weighed over
                     # its neighbourhood, it differs throughout


@dataclass
class TableBackground:
    """The empty table, at the scale `find_cards` searches, where it is known."""

    lab: np.ndarray      # float32 (h, w, 3), 8-bit Lab as OpenCV makes it of 8-bit pictures
    known: np.ndarray    # bool (h, w): the table was seen bare there

    def fits(self, shape: tuple[int, ...]) -> bool:
        return self.lab.shape[:2] == tuple(shape[:2])


def table_distance(lab: np.ndarray, background: TableBackground) -> tuple[np.ndarray, float]:
    """Per pixel (uint8), how far its colour (8-bit Lab, summed over the three) lies outside
    what the table shows within `SHAKE` pixels of it, once the picture's overall drift of
    light is taken out; and the picture's typical such distance on the known table.

    A patterned cloth under a camera that trembles by a pixel puts a stripe's edge where
    its neighbour was: comparing with the range of colours around each place, not the
    colour at it, keeps the pattern out."""
    lab = lab if lab.dtype == np.uint8 else np.clip(np.round(lab), 0, 255).astype(np.uint8)
    sample = background.known[::SAMPLE, ::SAMPLE]
    if not sample.any():
        return np.zeros(lab.shape[:2], np.uint8), NOISE_FLOOR
    now = lab[::SAMPLE, ::SAMPLE][sample].astype(np.float32)
    then = background.lab[::SAMPLE, ::SAMPLE][sample]
    # an exposure's gain scales L+16, a and b alike (Lab's cube root of a scaled luminance;
    # 8-bit L is 2.55 L, and a and b lie about 128); what the gain leaves is an offset
    gain = float(np.median((now[:, 0] + 40.8) / np.maximum(then[:, 0] + 40.8, 1.0)))
    values = np.arange(256, dtype=np.float32)[:, None]
    centre = np.float32([0.0, 128.0, 128.0])
    seen_as = (values - centre) / gain + centre
    offset = np.median((now - centre) / gain + centre - then, axis=0)
    table = np.clip(np.round(seen_as - offset), 0, 255).astype(np.uint8)[None]   # a lookup per channel
    seen = cv2.LUT(lab, table)
    kernel = np.ones((SHAKE, SHAKE), np.uint8)
    bare = cv2.convertScaleAbs(background.lab)      # (rounded and saturated: its values are 0-255)
    out = cv2.add(cv2.subtract(cv2.erode(bare, kernel), seen), cv2.subtract(seen, cv2.dilate(bare, kernel)))
    distance = cv2.transform(out, np.ones((1, 3), np.float32))     # (saturating: 255 is far enough)
    distance = cv2.GaussianBlur(distance, (0, 0), SMOOTH)
    noise = max(NOISE_FLOOR, float(np.median(distance[::SAMPLE, ::SAMPLE][sample])))
    return distance, noise


def difference_map(distance: np.ndarray, noise: float, known: np.ndarray) -> np.ndarray:
    """0-255 from `table_distance`: 128 where a pixel is `CARD_NOISES` times the picture's
    noise away from the table, 0 where the table was never seen bare (nothing is known there)."""
    level = cv2.convertScaleAbs(distance, alpha=128.0 / (CARD_NOISES * noise))
    level[~known] = 0
    return level


def bare_table_map(distance: np.ndarray, noise: float, known: np.ndarray) -> np.ndarray:
    """Where a picture shows the empty table as it was seen bare (`table_distance`): no card
    lies there, whatever the cloth's pattern makes of it.  False where the table was never
    seen bare, which says nothing either way."""
    return known & (distance < BARE_NOISES * noise)
