"""Engineered features of found cards, for the recognition models.

Each card is warped to a small square patch (whatever its aspect, which is kept
as a separate feature), white-balanced against its own paper (the patch's
corner regions), and converted to Lab.  Everything downstream is relative:
colours are measured against the card's paper, so a warm lamp, a yellowed
print or a dark glossy stock move the paper and the inks together.

Features are computed for all the cards of a frame at once, on stacked
patches: a frame costs a few array operations, not a loop per card.

Reusable pieces (e.g. for calibration): `warp_card`, `prepare` (balanced Lab,
raw Lab and paper of one patch), `end_features` / `END_FEATURE_NAMES` (the
colour statistics where a body meets an edge, for a stack of patches turned
so that edge is on top), `card_features` (the whole card, oriented).
"""
from __future__ import annotations

import cv2
import numpy as np

PATCH = 48                 # side of the canonical patch, pixels
_B = 3                     # rows/columns at the very edge skipped (table bleed, anti-aliasing)
_DST = np.float32([[0, 0], [PATCH, 0], [PATCH, PATCH], [0, PATCH]])
_PA, _PB = int(PATCH * 0.08), int(PATCH * 0.24)   # the corner regions that show paper


def warp_card(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The card as a PATCH x PATCH BGR patch; corners[0] -> top-left, clockwise."""
    m = cv2.getPerspectiveTransform(np.float32(corners), _DST)
    return cv2.warpPerspective(image, m, (PATCH, PATCH), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)


def paper_colour(patch: np.ndarray) -> np.ndarray:
    """The card's paper (BGR float): the median of its four corner regions."""
    return np.median(_corners_of_each(patch[None]).astype(np.float32), axis=1)[0]


def prepare_all(patches: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(balanced Lab, raw Lab, paper Lab) of a stack of patches (N, PATCH, PATCH, 3): each
    patch divided by its paper's cast (the median of its four corner regions) before Lab.

    A frame has a dozen cards or more and a call per patch is mostly overhead: the
    colour conversions run on the patches laid one above the other.
    """
    n = len(patches)
    paper = np.median(_corners_of_each(patches).astype(np.float32), axis=1)           # (N, 3)
    gains = np.mean(paper, axis=1, keepdims=True) / np.maximum(paper, 1.0)
    balanced = np.clip(patches.astype(np.float32) * (gains / 255.0)[:, None, None, :], 0, 1)
    lab = cv2.cvtColor(balanced.reshape(n * PATCH, PATCH, 3), cv2.COLOR_BGR2Lab).reshape(patches.shape)
    raw = cv2.cvtColor((patches.astype(np.float32) * (1.0 / 255.0)).reshape(n * PATCH, PATCH, 3),
                       cv2.COLOR_BGR2Lab).reshape(patches.shape)
    return lab, raw, np.median(_corners_of_each(lab), axis=1)


def _corners_of_each(arr: np.ndarray) -> np.ndarray:
    """The four corner regions (where the paper shows) of every patch of a stack: (N, pixels, channels)."""
    a, b = _PA, _PB
    n, c = len(arr), arr.shape[-1]
    return np.concatenate([arr[:, a:b, a:b].reshape(n, -1, c), arr[:, a:b, -b:-a].reshape(n, -1, c),
                           arr[:, -b:-a, a:b].reshape(n, -1, c), arr[:, -b:-a, -b:-a].reshape(n, -1, c)], axis=1)


def rotations(arr: np.ndarray, axes=(0, 1)) -> list[np.ndarray]:
    """The patch(es) with each edge (0 top, 1 right, 2 bottom, 3 left) brought to the top."""
    return [arr if k == 0 else np.rot90(arr, k, axes=axes) for k in range(4)]


def _masked_mean(values: np.ndarray, mask: np.ndarray, axis) -> np.ndarray:
    n = mask.sum(axis=axis)
    return (values * mask).sum(axis=axis) / np.maximum(n, 1)


END_FEATURE_NAMES = (
    "c_L", "c_a", "c_b", "c_chroma", "c_hue_cos", "c_hue_sin", "c_std",
    "s_L", "s_a", "s_b", "c_minus_s", "ink_frac",
    "d_L", "d_a", "d_b", "d_chroma", "rel_L", "raw_L", "raw_a", "raw_b",
)


def end_features(lab: np.ndarray, raw: np.ndarray, paper_lab: np.ndarray) -> np.ndarray:
    """(M, len(END_FEATURE_NAMES)): colour where a body would meet the top edge of each patch.

    lab, raw: (M, PATCH, PATCH, 3) patches already turned; paper_lab: (M, 3).
    """
    p = PATCH
    m = len(lab)
    c0, c1 = int(p * 0.36), int(p * 0.64)
    r1, r2 = _B, int(p * 0.15)
    centre = lab[:, r1:r2, c0:c1].reshape(m, -1, 3)
    sides = np.concatenate([lab[:, r1:r2, _B:int(p * 0.25)].reshape(m, -1, 3),
                            lab[:, r1:r2, int(p * 0.75):p - _B].reshape(m, -1, 3)], axis=1)
    deeper = lab[:, r2:int(p * 0.28), c0:c1].reshape(m, -1, 3)
    cm = np.median(centre, axis=1)
    sm = np.median(sides, axis=1)
    dm = np.median(deeper, axis=1)
    cc = np.hypot(cm[:, 1], cm[:, 2])
    hue = np.arctan2(cm[:, 2], cm[:, 1])
    w = np.minimum(1.0, cc / 20.0)
    ink = (np.linalg.norm(centre - paper_lab[:, None, :], axis=2) > 18).mean(axis=1)
    contrast = np.linalg.norm(cm - sm, axis=1)
    raw_c = np.median(raw[:, r1:r2, c0:c1].reshape(m, -1, 3), axis=1)
    return np.column_stack([
        cm[:, 0], cm[:, 1], cm[:, 2], cc, np.cos(hue) * w, np.sin(hue) * w, centre.std(axis=(1, 2)),
        sm[:, 0], sm[:, 1], sm[:, 2], contrast, ink,
        dm[:, 0], dm[:, 1], dm[:, 2], np.hypot(dm[:, 1], dm[:, 2]), cm[:, 0] - paper_lab[:, 0],
        raw_c[:, 0], raw_c[:, 1], raw_c[:, 2],
    ]).astype(np.float32)


def all_end_features(labs: np.ndarray, raws: np.ndarray, papers: np.ndarray,
                     edge_lengths: np.ndarray) -> np.ndarray:
    """(N, 4, n): features of every edge of N cards.

    Each row also holds a little of the opposite edge (a middle's two ends come
    in opposite pairs) and the edge's length relative to its neighbours (the
    connecting edges are the short ones unless the card is square).
    """
    n = len(labs)
    own = np.stack([end_features(l, r, papers)
                    for l, r in zip(rotations(labs, (1, 2)), rotations(raws, (1, 2)))], axis=1)  # (N, 4, F)
    opposite = own[:, [2, 3, 0, 1]][:, :, [3, 10, 11]]
    lengths = np.asarray(edge_lengths, np.float64).reshape(n, 4)
    neighbours = 0.5 * (np.roll(lengths, -1, axis=1) + np.roll(lengths, 1, axis=1))
    ratio = (lengths / np.maximum(neighbours, 1e-6))[:, :, None]
    return np.concatenate([own, opposite, ratio], axis=2).astype(np.float32)


BANDS = 12


def card_features(labs: np.ndarray, raws: np.ndarray, papers: np.ndarray,
                  edge_probs: np.ndarray) -> np.ndarray:
    """(N, n) whole-card features, each card turned so its connecting end is on top.

    edge_probs: (N, 4) probabilities of being a connecting edge for the top,
    right, bottom and left of the turned patch.
    """
    p = PATCH
    n = len(labs)
    step = p // BANDS
    inner = labs[:, :, _B:p - _B]                                       # (N, p, w, 3)
    diff = np.linalg.norm(inner - papers[:, None, None, :], axis=3)
    ink = diff > 22
    bands = inner.reshape(n, BANDS, step, -1, 3)
    ink_b = ink.reshape(n, BANDS, step, -1)
    frac = ink_b.mean(axis=(2, 3))
    cols = ink_b.any(axis=2).mean(axis=2)
    a, b, L = bands[..., 1], bands[..., 2], bands[..., 0]
    am = _masked_mean(a, ink_b, (2, 3))
    bm = _masked_mean(b, ink_b, (2, 3))
    within = np.sqrt(np.maximum(_masked_mean(a * a, ink_b, (2, 3)) - am * am, 0)) + \
        np.sqrt(np.maximum(_masked_mean(b * b, ink_b, (2, 3)) - bm * bm, 0))
    band_chroma = np.hypot(am, bm)
    dark = (L < 25).mean(axis=(2, 3))
    bright = (L > papers[:, 0, None, None, None] + 8).mean(axis=(2, 3))
    profile = np.stack([frac, cols, band_chroma, within, dark, bright], axis=2).reshape(n, -1)

    steps = np.hypot(np.diff(am, axis=1), np.diff(bm, axis=1))
    centre = labs[:, _B:p - _B, int(p * 0.3):int(p * 0.7)]
    cchroma = np.hypot(centre[..., 1], centre[..., 2])
    hue = np.arctan2(centre[..., 2], centre[..., 1])
    coloured = cchroma > 15
    mc = _masked_mean(np.cos(hue), coloured, (1, 2))
    ms = _masked_mean(np.sin(hue), coloured, (1, 2))
    hue_spread = np.where(coloured.sum(axis=(1, 2)) > 5, 1.0 - np.hypot(mc, ms), 0.0)
    rawL = raws[..., 0]
    texture = np.abs(np.diff(rawL, axis=1)).mean(axis=(1, 2)) + np.abs(np.diff(rawL, axis=2)).mean(axis=(1, 2))
    chroma = np.hypot(inner[..., 1], inner[..., 2])
    flat = raws.reshape(n, -1, 3)
    glob = np.column_stack([
        ink.mean(axis=(1, 2)), chroma.mean(axis=(1, 2)), _masked_mean(chroma, ink, (1, 2)),
        am.std(axis=1) + bm.std(axis=1), steps.max(axis=1), steps.mean(axis=1), hue_spread, texture,
        flat.mean(axis=1), flat.std(axis=1), papers, (rawL < 30).mean(axis=(1, 2)),
    ])
    return np.concatenate([profile, glob, np.asarray(edge_probs, np.float64).reshape(n, 4)], axis=1).astype(np.float32)
