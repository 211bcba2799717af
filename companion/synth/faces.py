"""Card faces of one printing, drawn once per size and reused across a picture or a video."""
from __future__ import annotations

import math

import cv2
import numpy as np

from companion.game.cards import Card

from .cards import RAINBOW, card_alpha, render_card
from .styles import Print


class FaceCache:
    """Card faces of one printing, drawn once per size bucket (powers of sqrt 2)."""

    def __init__(self, print_: Print, aspect: float):
        self.print_ = print_
        self.aspect = aspect
        self._faces: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._rng = np.random.default_rng(print_.seed)   # render_card takes one; given the print, it draws nothing

    def get(self, card: Card | None, short_px: float) -> np.ndarray:
        """BGRA uint8 portrait face about `short_px` wide (never smaller)."""
        bucket = int(round(2 ** (math.ceil(2 * math.log2(max(12.0, short_px))) / 2)))
        bucket = min(bucket, 420)
        ident = card.identity(RAINBOW) if card is not None else None
        key = (ident.code if ident is not None else "back", bucket)
        if key not in self._faces:
            bgr = render_card(ident, self.print_.style, self._rng, bucket, self.aspect, print_=self.print_)
            h, w = bgr.shape[:2]
            cover = card_alpha(w, h)
            # the card's cut edge shows the light core of the board
            rim = cover - cv2.erode(cover, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
            bgr = (bgr * (1 - 0.45 * rim[..., None]) + 215.0 * 0.45 * rim[..., None]).astype(np.uint8)
            alpha = (cover * 255).astype(np.uint8)
            self._faces[key] = np.dstack([bgr, alpha])
        face = self._faces[key]
        if card is not None and ident != card:       # the same physical card seen from its other end
            face = face[::-1, ::-1]
        return face
