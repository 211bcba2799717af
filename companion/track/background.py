"""The empty table, learnt over a watched game, given to every reading (`TableReader`).

A game's camera stands still, so the table it films is the same picture all
game long but for the cards on it.  Each still picture the tracker reads
teaches `EmptyTable` the table where no card lies; the next reading then
also looks for what differs from it (`companion.vision.background`), which a
cloth's pattern or a dim corner does not hide, and is told where the table
lies bare, where the cloth's pattern is no snake's body.

What it learns must never be a card: a place is learnt only away from every
card read (by a margin, as outlines may fall short), and a place that already
shows the table is only refreshed where the new picture agrees with it, so a
card the reader missed is not learnt as table the moment it lands.  A
difference that outlasts many readings (some twenty turns) with no card read
on it is the table after all (a card taken away that lay there when watching began, a cup
set down, a lamp switched on) and is learnt then.  When most of the table
differs at once, the camera moved: the table is learnt afresh.
"""
from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

from companion.vision.background import (CARD_NOISES, TableBackground, bare_table_map, difference_map,
                                         table_distance)
from companion.vision.find import searched_copy

from .regions import shifted
from .tables import covered

MARGIN = 0.2          # of a card's sides: the band around a card read that is never learnt from
BLEND = 0.3           # weight of a new picture where it agrees with the table (noise averages out)
ABSORB_READS = 40     # readings in a row (twenty turns) a difference with no card read on it lasts before it is table
UNKNOWN_READS = 2     # readings in a row a place never seen bare shows no card before it is table
MOVED = 0.3           # share of the known table differing at once: the camera moved


class EmptyTable:
    """The table as this camera sees it bare, learnt from the pictures read."""

    def __init__(self):
        self.background: TableBackground | None = None
        self.noise: float | None = None   # how far a picture of the bare table lies from it, typically
        self._differs = None       # readings in a row each place differed with no card on it
        self._bare = None          # readings in a row each unknown place showed no card

    def unlike(self, lab: np.ndarray) -> tuple[np.ndarray, float, float] | None:
        """How far each pixel of a picture (Lab, at the searched copy's scale) lies from the
        table (`table_distance`), the camera's noise as learnt (else this picture's typical
        distance) and this picture's typical distance; None while nothing is known of the
        table at that scale."""
        bg = self.background
        if bg is None or not bg.fits(lab.shape):
            return None
        distance, typical = table_distance(lab, bg)
        return distance, self.noise or typical, typical

    def learn(self, lab: np.ndarray, cards: list[np.ndarray],
              unlike: tuple[np.ndarray, float, float] | None = None) -> None:
        """One more still picture (Lab, at the searched copy's scale), the outlines of the
        cards read in it (same scale) and, when known, its `unlike(lab)`."""
        lab = lab.astype(np.float32)
        free = ~covered(lab.shape[:2], cards, MARGIN)
        unlike = unlike or self.unlike(lab)
        if unlike is None:
            self._start(lab, free)
            return
        bg = self.background
        distance, noise, typical = unlike
        differs = distance > CARD_NOISES * noise
        watched = bg.known & free
        if np.count_nonzero(differs & watched) > MOVED * max(1, np.count_nonzero(watched)):
            self._start(lab, free)
            return
        # (a picture that differs everywhere would make its own typical difference the noise)
        self.noise = typical if self.noise is None else self.noise + BLEND * (typical - self.noise)
        cv2.accumulateWeighted(lab, bg.lab, BLEND, mask=(watched & ~differs).view(np.uint8))
        self._differs = _counted(self._differs, watched & differs)
        self._bare = _counted(self._bare, ~bg.known & free)
        learnt = (self._differs >= ABSORB_READS) | (self._bare >= UNKNOWN_READS)
        if learnt.any():
            cv2.copyTo(lab, learnt.view(np.uint8), bg.lab)
            bg.known |= learnt
            self._differs[learnt] = 0

    def _start(self, lab: np.ndarray, free: np.ndarray) -> None:
        self.background = TableBackground(lab.copy(), free.copy())
        self.noise = None
        self._differs = np.zeros(free.shape, np.uint8)
        self._bare = np.zeros(free.shape, np.uint8)


def _counted(count: np.ndarray, now: np.ndarray) -> np.ndarray:
    """A run-length counter per place: one more where `now`, else back to 0."""
    out = np.zeros_like(count)
    cv2.add(count, 1, dst=out, mask=now.view(np.uint8))   # (saturates at 255)
    return out


class TableReader:
    """The tracker's analyser, reading every picture against the empty table learnt so far,
    and teaching it from each picture read.  `analyze(image, unlike_table=..., bare_table=...,
    picture=..., known=...)` is the vision's `Analyzer.analyze`."""

    def __init__(self, analyze: Callable[..., dict]):
        self.analyze = analyze
        self.table = EmptyTable()

    def __call__(self, image: np.ndarray, known: list | None = None) -> dict:
        """The reading of `image`; `known`: outlines of cards known to lie there (`Analyzer.read`)."""
        lab, scale, unlike, difference, bare = self._against_table(image)
        result = self.analyze(image, unlike_table=difference, bare_table=bare,
                              **({"known": known} if known else {}))
        cards = [np.asarray(card["corners"], np.float64) * scale for card in result.get("cards", [])]
        self.table.learn(lab, cards, unlike)
        return result

    def region(self, image: np.ndarray, box: tuple[int, int, int, int]) -> dict:
        """The reading of the part of `image` in `box` (x0, y0, x1, y1), in the whole picture's
        pixels (`companion.track.regions`), made against the same empty table as a whole
        picture's: without it a patterned cloth or a card as pale as the table is as hard to
        find in the part as in a single photo.  A part teaches the table nothing."""
        x0, y0, x1, y1 = box
        _, scale, _, difference, bare = self._against_table(image)
        told = {"unlike_table": None, "bare_table": None}
        if difference is not None:
            # the part is searched at the whole picture's scale (`searched_copy`), to this size
            # (OpenCV rounds as Python does); beyond the picture's edge the table is unknown
            h, w = round((y1 - y0) * scale), round((x1 - x0) * scale)
            oy, ox = round(y0 * scale), round(x0 * scale)
            for name, whole in (("unlike_table", difference), ("bare_table", bare)):
                told[name] = np.zeros((h, w), whole.dtype)
                cut = whole[oy:oy + h, ox:ox + w]
                told[name][:cut.shape[0], :cut.shape[1]] = cut
        part = np.ascontiguousarray(image[y0:y1, x0:x1])
        return shifted(self.analyze(part, picture=image.shape[:2], **told), x0, y0)

    def _against_table(self, image: np.ndarray):
        """The searched copy of `image` in Lab, its scale, its `EmptyTable.unlike`, the
        difference map the finder reads and where it shows the bare table (both None while
        nothing is known of the table)."""
        small, scale = searched_copy(image)
        lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
        unlike = self.table.unlike(lab)
        if unlike is None:
            return lab, scale, unlike, None, None
        known = self.table.background.known
        return lab, scale, unlike, difference_map(*unlike[:2], known), bare_table_map(*unlike[:2], known)
