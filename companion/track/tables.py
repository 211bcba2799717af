"""Small pure functions over tables: chains of card codes, track ids and links.

Shared by the tracker's settling, naming and record keeping; nothing here has state.
"""
from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from companion.game.cards import Card, Kind
from companion.game.deck import Deck

from .reading import Reading


def canonical_chain(chain: Sequence[str]) -> tuple:
    forward = tuple(chain)
    backward = tuple(Card.parse(c).flipped().code for c in reversed(chain))
    return min(forward, backward)


def reading_signature(reading: Reading, deck: Deck) -> list:
    """What a reading says, independent of card ids and listing order."""
    by_id = reading.by_id()
    chains = []
    for chain in reading.chains:
        codes = tuple(deck.identity(by_id[i].card).code for i in chain)
        chains.append(min(codes, codes[::-1]))
    return sorted(chains)


def neighbour_directions(tracks: dict, chain: list[int], i: int):
    """Directions from a chain's i-th card to the cards before and after it (None at an end)."""
    here = tracks[chain[i]].centre
    prev = tracks[chain[i - 1]].centre - here if i > 0 else None
    nxt = tracks[chain[i + 1]].centre - here if i + 1 < len(chain) else None
    return prev, nxt


def facing_colours(ids: list[int], codes: list[str], i: int) -> dict[int, str]:
    card = Card.parse(codes[i])
    if card.kind is not Kind.MIDDLE:
        return {}
    out = {}
    if i > 0:
        out[ids[i - 1]] = card.colours[0]
    if i + 1 < len(ids):
        out[ids[i + 1]] = card.colours[1]
    return out


def same_card(a: str | None, b: str) -> bool:
    if a is None:
        return False
    return a == b or Card.parse(a).flipped().code == b


def misread_of(was: str, now: str) -> bool:
    """A card read `now` may be card `was` misread: of its kind, at most one colour otherwise."""
    a, b = Card.parse(was), Card.parse(now)
    return a.kind is b.kind and len(set(a.colours) & set(b.colours)) >= len(a.colours) - 1


def code_of(entry: dict, track: int) -> str | None:
    for ids, codes in zip(entry["tracks"], entry["table"]):
        for t, code in zip(ids, codes):
            if t == track:
                return code
    return None


def outline_gap(a, b) -> float:
    """The distance between two convex outlines (corner lists); 0 when they overlap."""
    pa, pb = np.asarray(a, float), np.asarray(b, float)
    if cv2.intersectConvexConvex(pa.astype(np.float32), pb.astype(np.float32))[0] > 0:
        return 0.0
    return min(_point_to_edges(p, poly) for src, poly in ((pa, pb), (pb, pa)) for p in src)


def outline_share(a: np.ndarray, b: np.ndarray) -> float:
    """The area two convex outlines share, over the smaller one's area (1 when one holds the other)."""
    pa, pb = np.asarray(a, np.float32), np.asarray(b, np.float32)
    inter, _ = cv2.intersectConvexConvex(pa, pb)
    smaller = min(abs(cv2.contourArea(pa)), abs(cv2.contourArea(pb)))
    return float(inter / smaller) if inter > 0 and smaller > 0 else 0.0


def _point_to_edges(p: np.ndarray, poly: np.ndarray) -> float:
    starts, ends = poly, np.roll(poly, -1, axis=0)
    d = ends - starts
    t = np.clip(np.einsum("ij,ij->i", p - starts, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-9), 0, 1)
    return float(np.min(np.linalg.norm(starts + t[:, None] * d - p, axis=1)))


def links_of(chains) -> set[frozenset]:
    """Each two neighbours of the chains, as a link."""
    return {frozenset(p) for c in chains for p in zip(c, c[1:])}


def chains_from_links(nodes: set, edges: set) -> list[list[int]] | None:
    """Chains from links: every node has at most two neighbours and there is no loop; else None."""
    neighbours: dict[int, list[int]] = {t: [] for t in nodes}
    for edge in edges:
        a, b = tuple(edge)
        neighbours[a].append(b)
        neighbours[b].append(a)
    if any(len(v) > 2 for v in neighbours.values()):
        return None
    seen: set = set()
    chains = []
    for start in sorted(nodes):
        if start in seen or len(neighbours[start]) == 2:
            continue
        chain, prev, here = [], None, start
        while here is not None:
            chain.append(here)
            seen.add(here)
            nxt = [n for n in neighbours[here] if n != prev]
            prev, here = here, (nxt[0] if nxt else None)
        chains.append(chain)
    if len(seen) != len(nodes):
        return None  # a loop
    return chains


def covered(shape: tuple[int, int], cards: list[np.ndarray], margin: float) -> np.ndarray:
    """Where the cards lie, each grown by `margin` of its size on every side."""
    mask = np.zeros(shape, np.uint8)
    for quad in cards:
        q = np.asarray(quad, np.float64).reshape(4, 2)
        centre = q.mean(axis=0)
        grown = centre + (q - centre) * (1.0 + 2.0 * margin)
        cv2.fillConvexPoly(mask, np.round(grown).astype(np.int32), 1)
    return mask > 0
