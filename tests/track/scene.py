"""A toy table for tracker tests: symbolic chains laid out, drawn, and "analysed".

The tracker's input is a picture plus the analyser's reading of it.  Here the
picture is drawn simply (cards as two-coloured rectangles on a textured table)
so that the change gate has real pixels to judge, and the reading is the exact
`analyze` JSON of the layout, into which each test injects the faults it is
about (a misread card, a missed card, jittered corners, garbage).
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.game.cards import Card, Kind

BGR = {"red": (40, 40, 210), "orange": (30, 140, 240), "yellow": (40, 220, 230),
       "green": (60, 170, 60), "blue": (200, 110, 30), "purple": (150, 50, 130)}
W, H = 56, 40          # a card along the chain, across it (pixels)
SIZE = (640, 480)


def card_dicts(chains: list[list[str]], offsets: dict[int, tuple[float, float]] | None = None,
               start_id: int = 0) -> tuple[list[dict], list[dict]]:
    """Analyze-format cards and snakes for chains laid left to right, one row each."""
    offsets = offsets or {}
    cards, snakes = [], []
    ident = start_id
    for row, chain in enumerate(chains):
        dx, dy = offsets.get(row, (0.0, 0.0))
        ids = []
        for i, code in enumerate(chain):
            card = Card.parse(code)
            x0 = 40 + i * (W + 2) + dx
            y0 = 40 + row * (H + 30) + dy
            x1, y1, yc = x0 + W, y0 + H, y0 + H / 2
            left, right = [x0, yc], [x1, yc]
            if card.kind is Kind.MIDDLE:
                ends = [left, right]
            elif len(chain) > 1 and i == len(chain) - 1:
                ends = [left]               # the last card faces back along the chain
            else:
                ends = [right]
            cards.append({"id": ident, "kind": card.kind.value, "colours": list(card.colours),
                          "ends": ends, "corners": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
                          "confidence": 0.95})
            ids.append(ident)
            ident += 1
        snakes.append({"cards": ids, "complete": False})
    return cards, snakes


def analysis(chains, offsets=None) -> dict:
    cards, snakes = card_dicts(chains, offsets)
    return {"image": {"path": "", "width": SIZE[0], "height": SIZE[1]},
            "cards": cards, "snakes": snakes, "problems": []}


@functools.lru_cache(maxsize=4)
def _table_texture(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 1, (SIZE[1] // 8, SIZE[0] // 8, 3)).astype(np.float32)
    noise = cv2.resize(noise, SIZE, interpolation=cv2.INTER_CUBIC)
    base = np.array([60, 90, 120], np.float32)  # a brown wood-ish table
    return np.clip(base + 12 * noise, 0, 255)


def draw(data: dict, seed: int = 0, gain: float = 1.0, hand: tuple[int, int] | None = None,
         noise: float = 2.0, frame: int = 0) -> np.ndarray:
    """The picture of an analysis: cards as paper with coloured end halves, an optional hand."""
    img = _table_texture(seed).copy()
    for card in data["cards"]:
        pts = np.array(card["corners"], np.float32)
        cv2.fillConvexPoly(img, pts.astype(np.int32), (225, 225, 230), lineType=cv2.LINE_AA)
        centre = pts.mean(axis=0)
        for colour, end in zip(card["colours"] or ["red"], card["ends"] or [centre]):
            mid = (np.asarray(end) + centre) / 2
            cv2.circle(img, tuple(int(v) for v in mid), 9, BGR.get(colour, (0, 0, 0)), -1)
    if hand is not None:
        cv2.ellipse(img, hand, (90, 60), 30, 0, 360, (120, 150, 200), -1)
    img = img * gain + noise * _noise(frame % 5)
    return np.clip(img, 0, 255).astype(np.uint8)


@functools.lru_cache(maxsize=5)
def _noise(k: int) -> np.ndarray:
    """Sensor noise fields, reused in turn (drawing fresh noise per frame is slow)."""
    return np.random.default_rng(1000 + k).normal(0, 1, (SIZE[1], SIZE[0], 3)).astype(np.float32)


@dataclass
class FakeAnalyzer:
    """Returns whatever the test set as the current reading (a callable image -> dict)."""
    current: dict | None = None
    calls: int = 0
    fault: object = None   # callable(dict, call number) -> dict, or raises

    def __call__(self, image):
        self.calls += 1
        data = copy.deepcopy(self.current)
        if self.fault is not None:
            data = self.fault(data, self.calls)
        return data


@dataclass
class Player:
    """Plays a script of tables into a tracker: hands between tables, still frames on each."""
    tracker: object
    analyzer: FakeAnalyzer
    still: int = 8
    hand_frames: int = 4
    frame: int = 0
    events: list = field(default_factory=list)
    gain: float = 1.0
    drift: float = 0.0      # exposure gain change per frame

    def show(self, data: dict, frames: int | None = None, hand: bool = False) -> None:
        for k in range(self.still if frames is None else frames):
            self.gain += self.drift
            pos = (100 + 40 * k, 150 + 10 * k) if hand else None
            image = draw(data, gain=self.gain, hand=pos, frame=self.frame)
            self.analyzer.current = data
            self.events += self.tracker.feed(self.frame, image)
            self.frame += 1

    def play(self, tables: list[dict]) -> None:
        for i, data in enumerate(tables):
            if i:
                self.show(data, self.hand_frames, hand=True)
            self.show(data)

    def moves(self) -> list[dict]:
        return [e.data for e in self.events if e.kind == "move"]


# -- pictures that carry their own table: for sources, where frames travel as files or JPEGs

def stamp(image: np.ndarray, k: int) -> np.ndarray:
    """Write k in a strip of 8 black/white 12 px blocks (survives JPEG) in the top-left corner."""
    out = image.copy()
    for bit in range(8):
        out[0:12, bit * 12:(bit + 1) * 12] = 255 if (k >> bit) & 1 else 0
    return out


def unstamp(image) -> int:
    from companion.track.frames import full_image
    image = full_image(image)
    return sum(1 << bit for bit in range(8) if image[2:10, bit * 12 + 2:bit * 12 + 10].mean() > 128)


@dataclass
class StampedAnalyzer:
    """Reads the table a picture shows from its stamp."""
    tables: list
    calls: int = 0

    def __call__(self, image):
        self.calls += 1
        return analysis(self.tables[unstamp(image)])


def game_frames(tables, still: int = 8, hand_frames: int = 4):
    """The pictures of a scripted game: each table still for a while, a hand between tables."""
    frames = []
    for k, table in enumerate(tables):
        data = analysis(table)
        for i in range((hand_frames if k else 0) + still):
            hand = (100 + 40 * i, 150 + 10 * i) if k and i < hand_frames else None
            frames.append(stamp(draw(data, hand=hand, frame=len(frames)), k))
    return frames
