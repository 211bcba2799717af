"""Pictures for the video stream when there is no camera: the table drawn as card glyphs.

Used by the demo and for evidence stills of symbolic games, so that every
move has a before and after picture to dispute over.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.game.cards import Card, Kind

# BGR; a colour the deck renames falls back to grey and is still labelled by name.
COLOUR_BGR = {
    "red": (53, 57, 229), "orange": (0, 140, 251), "yellow": (53, 216, 253),
    "green": (71, 160, 67), "blue": (229, 136, 30), "purple": (170, 36, 142),
}
RAINBOW = ["red", "orange", "yellow", "green", "blue", "purple"]
FELT = (62, 96, 38)
CARD_W, CARD_H, GAP = 92, 132, 8


def _bgr(colour: str) -> tuple[int, int, int]:
    return COLOUR_BGR.get(colour, (150, 150, 150))


def _label(img, text, centre, scale=0.42, colour=(40, 40, 40)):
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    cv2.putText(img, text, (int(centre[0] - w / 2), int(centre[1] + h / 2)),
                cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 1, cv2.LINE_AA)


def _draw_card(img: np.ndarray, x: int, y: int, card: Card, faces_right: bool) -> None:
    """One card face: paper, the snake body meeting its connecting edge(s), colour names."""
    cv2.rectangle(img, (x + 3, y + 4), (x + CARD_W + 3, y + CARD_H + 4), (30, 50, 20), -1)
    cv2.rectangle(img, (x, y), (x + CARD_W, y + CARD_H), (236, 244, 248), -1)
    cy = y + CARD_H // 2
    band = 22
    if card.kind is Kind.MIDDLE:
        left, right = _bgr(card.colours[0]), _bgr(card.colours[1])
        for i in range(CARD_W):
            t = i / (CARD_W - 1)
            c = tuple(int(left[k] * (1 - t) + right[k] * t) for k in range(3))
            cv2.line(img, (x + i, cy - band // 2), (x + i, cy + band // 2), c, 1)
        _label(img, card.colours[0], (x + CARD_W * 0.3, y + 22))
        _label(img, card.colours[1], (x + CARD_W * 0.7, y + CARD_H - 22))
        return
    rainbow = card.kind in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL)
    colours = [_bgr(c) for c in RAINBOW] if rainbow else [_bgr(card.colours[0])]
    edge = x + CARD_W if faces_right else x
    inner = x + CARD_W // 2 if faces_right else x + CARD_W // 2
    step = band // len(colours)
    for k, c in enumerate(colours):
        top = cy - band // 2 + k * step
        cv2.rectangle(img, (min(edge, inner), top), (max(edge, inner), top + step + (band % len(colours) if k == len(colours) - 1 else 0)), c, -1)
    main = colours[0] if not rainbow else (80, 80, 80)
    if card.kind.is_head:
        cv2.circle(img, (inner, cy), 20, main, -1)
        for dy in (-7, 7):
            eye = (inner + (-6 if faces_right else 6), cy + dy)
            cv2.circle(img, eye, 4, (255, 255, 255), -1)
            cv2.circle(img, eye, 2, (0, 0, 0), -1)
    else:
        tip = inner - 26 if faces_right else inner + 26
        pts = np.array([[inner, cy - band // 2], [inner, cy + band // 2], [tip, cy]], np.int32)
        cv2.fillConvexPoly(img, pts, main, cv2.LINE_AA)
    name = "rainbow" if rainbow else card.colours[0]
    _label(img, name, (x + CARD_W / 2, y + 22))
    _label(img, "head" if card.kind.is_head else "tail", (x + CARD_W / 2, y + CARD_H - 22),
           colour=(110, 110, 110))


def draw_table(table: list, width: int = 960, height: int = 540) -> np.ndarray:
    """The chains as rows of card glyphs on felt, scaled to fill the picture, BGR."""
    per_row = max(3, min(12, max((len(c) for c in table), default=1)))
    rows: list[list[tuple[int, int, Card, bool]]] = []   # (column, row, card, faces_right)
    row = col = 0
    for chain in table:
        cards = [Card.parse(code) for code in chain]
        if col and col + min(len(cards), per_row) > per_row:
            row, col = row + 1, 0
        for i, card in enumerate(cards):
            if col >= per_row:
                row, col = row + 1, 0
            rows.append((col, row, card, i == 0))
            col += 1
        col += 1 if col < per_row else 0
    cols = max((c for c, *_ in rows), default=0) + 1
    nrows = max((r for _, r, *_ in rows), default=0) + 1
    board = np.full((nrows * (CARD_H + 3 * GAP) + GAP, cols * (CARD_W + 2) + 2 * GAP, 3),
                    FELT, np.uint8)
    for c, r, card, faces_right in rows:
        _draw_card(board, GAP + c * (CARD_W + 2), GAP + r * (CARD_H + 3 * GAP), card, faces_right)
    img = np.full((height, width, 3), FELT, np.uint8)
    scale = min((width - 4 * GAP) / board.shape[1], (height - 4 * GAP) / board.shape[0], 2.0)
    small = cv2.resize(board, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    y, x = (height - small.shape[0]) // 2, (width - small.shape[1]) // 2
    img[y:y + small.shape[0], x:x + small.shape[1]] = small
    return img


def encode_jpeg(img: np.ndarray, quality: int = 80) -> bytes:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("cannot encode picture as JPEG")
    return buf.tobytes()


def draw_table_jpeg(table: list) -> bytes:
    return encode_jpeg(draw_table(table))


def load_jpeg(path: str | Path, max_width: int = 1280) -> bytes:
    """A picture file as JPEG bytes for the stream, shrunk to `max_width`."""
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise ValueError(f"{path}: cannot read picture")
    if img.shape[1] > max_width:
        scale = max_width / img.shape[1]
        img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return encode_jpeg(img)


def placeholder_jpeg(text: str, width: int = 960, height: int = 540) -> bytes:
    """The picture shown before the first frame arrives."""
    img = np.full((height, width, 3), FELT, np.uint8)
    _label(img, text, (width / 2, height / 2), scale=1.0, colour=(230, 240, 230))
    return encode_jpeg(img)
