"""Cards the finder missed at a snake's open end: guessed from their neighbour, then read.

Cards in a snake lie end to end.  Where a found card's connecting end has no
card at it, the next card, if there is one, lies just beyond: the found card
mirrored across that end (every card has the same size, and a neighbour is
seen at nearly the same scale), turned about the end by up to 30 degrees,
and once more laid along the body that runs on beyond the end (`along_body`).
Each guess is moved onto the strongest nearby edges and read by the
recogniser (one it reads as no face is moved a little each way and read
again, `nudged`); it is kept only when read as a face one of whose connecting
ends meets the card it was guessed from.  On paper of the table's own colour, or
in a row of touching cards, the finder has no outline to go on; this needs
none.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable

import cv2
import numpy as np

from companion.game.cards import Card, Kind
from companion.game.deck import Deck

from .features import paper_colour, warp_card
from .refine import refine_corners
from .outline import CardOutline, in_picture, nudged, order_corners, polygon_iou
from .recognise import CardReading

TURNS = (0.0, -15.0, 15.0, -30.0, 30.0)   # degrees a neighbour is turned about the shared end
MEET = 0.35          # card widths: how near a guessed card's end must lie to the end it was guessed from
OVERLAP = 0.2        # a guess overlapping a card already read this much is that card, not a new one
# a guess lying across two cards of a row sees the body leave through its side, as a
# tail's body ends: a tail is never taken from a guess (heads show their eyes)
GUESSABLE = ("middle", "head", "rainbow_head")
# a guess read less surely than this is no card: a calibrated deck's reader says so of a guess
# whose two ends show no pair the deck holds (one straddling two cards of a snake, most often)
LEAST_SURE = 0.1
_KIND = {"head": Kind.HEAD, "tail": Kind.TAIL, "middle": Kind.MIDDLE,
         "rainbow_head": Kind.RAINBOW_HEAD, "rainbow_tail": Kind.RAINBOW_TAIL}
SAME_AS_TABLE = 10.0  # 8-bit Lab units: beyond an end, this close to what lies beside the card is table
MAX_ROUNDS = 8       # cards followed along one row (each round guesses beyond the last found)
INK = 30.0           # Lab units from the card's paper: the snake's body (or a table unlike the paper)
MOST_INK = 0.6       # share of the edge's width beyond it that is ink: more is a table unlike the paper


def open_ends(readings: list[CardReading]) -> list[tuple[int, int]]:
    """(reading, outline edge) of every connecting end that no other card's end meets."""
    ends = [(i, e, np.asarray(p)) for i, r in enumerate(readings)
            for e, p in zip(r.edge_order, r.ends)]
    out = []
    for i, e, p in ends:
        reach = MEET * readings[i].outline.short_side
        if not any(j != i and np.hypot(*(p - q)) < reach for j, _, q in ends):
            out.append((i, e))
    return out


def beyond(outline: CardOutline, edge: int, degrees: float) -> CardOutline:
    """The card mirrored across one of its edges, turned about that edge's middle."""
    c = outline.corners
    a, b = c[edge], c[(edge + 1) % 4]
    u = (b - a) / max(float(np.hypot(*(b - a))), 1e-9)
    d = c - a
    mirrored = a + 2.0 * (d @ u)[:, None] * u - d
    t = np.deg2rad(degrees)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    mid = (a + b) / 2.0
    return CardOutline(order_corners((mirrored - mid) @ rot.T + mid), 0.5)


def extend_snakes(image: np.ndarray, readings: list[CardReading],
                  recognise: Callable[[np.ndarray, list[CardOutline]], list[CardReading]],
                  deck: Deck) -> list[CardReading]:
    """`readings` with the cards read beyond open ends added.

    A guess is only a card the deck holds a copy of that is not on the table
    yet: a striped cloth read as a red-red middle would otherwise grow a
    snake of them, each guessed beyond the last.

    A card read `unknown` whose place a guess reads as a face is replaced: an
    outline the finder fitted to a part of a card (the paper above its body,
    say) is read `unknown`, while its neighbour says where the whole card lies.
    """
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    known = list(readings)
    tried: set[tuple[int, int]] = set()
    for _ in range(MAX_ROUNDS):
        ends = [(i, e) for i, e in open_ends(known) if (id(known[i]), e) not in tried]
        tried.update((id(known[i]), e) for i, e in ends)
        guesses, sources = [], []
        for i, e in ends:
            if table_beyond(image, known[i].outline, e):
                continue
            aimed = along_body(image, known[i].outline, e)
            for g in [beyond(known[i].outline, e, turn) for turn in TURNS] + ([aimed] if aimed else []):
                if not in_picture(g, gray.shape):
                    continue
                g = refine_corners(gray, g)
                if _clashes(g, known):
                    continue
                guesses.append(g)
                sources.append((i, e))
        if not guesses:
            break
        best: dict[tuple[int, int], CardReading] = {}   # open end -> the surest card read beyond it
        read = {id(r.outline): r for r in recognise(image, guesses)}
        # A guess inherits the error of the outline it was guessed from: one not read as a
        # face is read again moved a little each way (`outline.nudged`).
        again = [(src, n) for src, g in zip(sources, guesses)
                 if not _guessable(read.get(id(g))) for n in nudged(g) if in_picture(n, gray.shape)]
        if again:
            read.update({id(r.outline): r for r in recognise(image, [n for _, n in again])})
            sources += [src for src, _ in again]
            guesses += [n for _, n in again]
        for (i, e), g in zip(sources, guesses):
            r = read.get(id(g))
            if not _guessable(r) or r.confidence < LEAST_SURE or not _meets(r, known[i]):
                continue
            if (i, e) not in best or r.confidence > best[i, e].confidence:
                best[i, e] = r
        on_table = Counter(deck.identity(c) for c in map(card_of, known) if c is not None)
        new: list[CardReading] = []
        for r in sorted(best.values(), key=lambda r: -r.confidence):
            card = deck.identity(card_of(r))
            if on_table[card] < deck.count(card) and not _clashes(r.outline, known + new):
                new.append(r)
                on_table[card] += 1
        if not new:
            break
        known = [k for k in known if not any(overlaps(r.outline, k) for r in new)] + new
    return known


def along_body(image: np.ndarray, outline: CardOutline, edge: int) -> CardOutline | None:
    """The neighbour beyond an open end placed along the body that runs on into it, or None.

    The body crosses the shared edge at its middle and runs along the
    neighbour to its far end: the ink beyond the edge that touches the body
    where it crosses gives the neighbour's axis, wherever the neighbour was
    turned or slipped.  Where the table is as unlike the paper as the ink,
    the ink beyond the edge is no body and nothing is said.
    """
    c = outline.corners
    a, b = c[edge], c[(edge + 1) % 4]
    width = float(np.hypot(*(b - a)))
    length = float(np.hypot(*(c[(edge + 2) % 4] - b)))
    if width < 8 or length < 8:
        return None
    u = (b - a) / width
    n = np.array([-u[1], u[0]])
    if n @ ((a + b) / 2.0 - outline.centre) < 0:
        n = -n
    reach = int(np.ceil(1.2 * max(width, length)))
    mid = (a + b) / 2.0
    x0, y0 = (np.floor(mid) - reach).astype(int)
    x1, y1 = (np.floor(mid) + reach + 1).astype(int)
    if x0 < 0 or y0 < 0 or x1 > image.shape[1] or y1 > image.shape[0]:
        return None
    crop = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2Lab).astype(np.float32)
    paper_bgr = np.clip(np.round(paper_colour(warp_card(image, c))), 0, 255).astype(np.uint8)
    paper = cv2.cvtColor(paper_bgr.reshape(1, 1, 3), cv2.COLOR_BGR2Lab).reshape(3).astype(np.float32)
    ink = (np.linalg.norm(crop - paper, axis=2) > INK)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    rel = np.stack([xx - mid[0], yy - mid[1]], axis=-1).astype(np.float32)
    ahead = rel @ n
    across = rel @ u
    # the neighbour's half-plane, no further than its own length
    ink &= (ahead > 0.03 * length) & (ahead < 0.95 * length) & (np.abs(across) < 0.9 * length)
    # where the body enters: the ink just beyond the edge, about its middle; a body is a
    # third of the edge wide, a table unlike the paper all of it
    strip = (ahead > 0.03 * length) & (ahead < 0.12 * length) & (np.abs(across) < 0.5 * width)
    entry = ink & strip & (np.abs(across) < 0.35 * width)
    if not entry.any() or ink[strip].mean() > MOST_INK:
        return None
    _, labels = cv2.connectedComponents(ink.astype(np.uint8))
    body = np.isin(labels, np.unique(labels[entry]))
    if np.count_nonzero(body) < 0.05 * width * length:
        return None
    entry_at = mid + u * float(np.median(across[entry]))
    centre = rel[body].mean(axis=0) + mid
    axis = centre - entry_at
    if np.hypot(*axis) < 0.2 * length or (axis / np.hypot(*axis)) @ n < np.cos(np.radians(45)):
        return None
    along = axis / np.hypot(*axis)
    side = np.array([-along[1], along[0]]) * (width / 2.0)
    far = entry_at + along * length
    corners = np.array([entry_at - side, entry_at + side, far + side, far - side])
    return CardOutline(order_corners(corners), 0.5)


def table_beyond(image: np.ndarray, outline: CardOutline, edge: int) -> bool:
    """Whether what lies just beyond an end looks like what lies beside the card.

    A neighbour's body starts where this card's ends (the middle of the
    shared edge) and runs on along it, so just beyond the end lies ink; at a
    snake's last card lies the table, as beside the card's other edges.  Most
    open ends are a snake's last card: this spares reading five guesses there.
    (Beside the card may lie another snake: then the guesses are read.)
    """
    c = outline.corners
    centre = outline.centre
    away = 0.15 * outline.long_side
    r = max(1, int(0.06 * outline.short_side))

    def off(k: int) -> np.ndarray | None:
        """The mean Lab colour just off the middle of edge k, outward."""
        mid = (c[k] + c[(k + 1) % 4]) / 2.0
        out = mid - centre
        x, y = (int(round(v)) for v in mid + out / max(float(np.hypot(*out)), 1e-9) * away)
        if not (r <= x < image.shape[1] - r and r <= y < image.shape[0] - r):
            return None
        patch = image[y - r:y + r + 1, x - r:x + r + 1]
        return cv2.cvtColor(patch, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32).mean(axis=0)

    ahead = off(edge)
    if ahead is None:
        return False
    beside = [p for p in (off((edge + 1) % 4), off((edge + 3) % 4)) if p is not None]
    return any(float(np.linalg.norm(ahead - p)) < SAME_AS_TABLE for p in beside)


def _guessable(reading: CardReading | None) -> bool:
    return reading is not None and reading.kind in GUESSABLE


def overlaps(outline: CardOutline, reading: CardReading) -> bool:
    """Whether an outline lies where a card is read already (so much that it is that card)."""
    return polygon_iou(outline.corners, reading.outline.corners) > OVERLAP


def _clashes(outline: CardOutline, readings: list[CardReading]) -> bool:
    """Whether a guess lies where a card is read already (one read `unknown` may give way)."""
    return any(r.kind != "unknown" and overlaps(outline, r) for r in readings)


def _meets(reading: CardReading, source: CardReading) -> bool:
    """Whether one of the reading's connecting ends lies at one of the source's."""
    reach = MEET * source.outline.short_side
    return any(np.hypot(p[0] - q[0], p[1] - q[1]) < reach for p in reading.ends for q in source.ends)


def card_of(reading: CardReading) -> Card | None:
    """The deck's card a reading names (None: a back, an unknown card)."""
    kind = _KIND.get(reading.kind)
    if kind is None:
        return None
    return Card(kind, tuple(reading.colours) if kind in (Kind.HEAD, Kind.TAIL, Kind.MIDDLE) else ())
