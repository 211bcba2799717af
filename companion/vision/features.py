"""Engineered features of one found card, for the recognition models.

Each card is warped to a small square patch (whatever its aspect, which is kept
as a separate feature), white-balanced against its own paper (the patch's
corner regions), and converted to Lab.  Everything downstream is relative:
colours are measured against the card's paper, so a warm lamp, a yellowed
print or a dark glossy stock move the paper and the inks together.

Reusable pieces (e.g. for calibration): `warp_card`, `balance_to_paper`,
`end_features` / `END_FEATURE_NAMES` (one connecting edge's colour statistics),
`card_features` (the whole card, oriented).
"""
from __future__ import annotations

import cv2
import numpy as np

PATCH = 48                 # side of the canonical patch, pixels
_B = 3                     # rows/columns at the very edge skipped (table bleed, anti-aliasing)
_DST = np.float32([[0, 0], [PATCH, 0], [PATCH, PATCH], [0, PATCH]])


def warp_card(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The card as a PATCH x PATCH BGR patch; corners[0] -> top-left, clockwise."""
    m = cv2.getPerspectiveTransform(np.float32(corners), _DST)
    return cv2.warpPerspective(image, m, (PATCH, PATCH), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)


def paper_colour(patch: np.ndarray) -> np.ndarray:
    """The card's paper (BGR float): the median of its four corner regions."""
    a, b = int(PATCH * 0.08), int(PATCH * 0.24)
    regions = [patch[a:b, a:b], patch[a:b, -b:-a], patch[-b:-a, a:b], patch[-b:-a, -b:-a]]
    pix = np.concatenate([r.reshape(-1, 3) for r in regions]).astype(np.float32)
    return np.median(pix, axis=0)


def balance_to_paper(patch: np.ndarray, paper: np.ndarray | None = None) -> np.ndarray:
    """Lab (float32, OpenCV scale) of the patch after dividing out the paper's cast."""
    paper = paper_colour(patch) if paper is None else paper
    grey = float(np.mean(paper))
    gains = grey / np.maximum(paper, 1.0)
    balanced = np.clip(patch.astype(np.float32) * gains / 255.0, 0, 1)
    return cv2.cvtColor(balanced, cv2.COLOR_BGR2Lab)  # L 0..100, a/b about -128..127


def _ab_stats(lab: np.ndarray) -> tuple[float, float, float, float]:
    a = float(np.median(lab[..., 1]))
    b = float(np.median(lab[..., 2]))
    chroma = float(np.hypot(a, b))
    return a, b, chroma, float(np.median(lab[..., 0]))


END_FEATURE_NAMES = (
    "c_L", "c_a", "c_b", "c_chroma", "c_hue_cos", "c_hue_sin", "c_std",
    "s_L", "s_a", "s_b", "c_minus_s", "ink_frac",
    "d_L", "d_a", "d_b", "d_chroma", "rel_L", "raw_L", "raw_a", "raw_b",
)


def end_features(lab: np.ndarray, raw_lab: np.ndarray, paper_lab: np.ndarray) -> np.ndarray:
    """Colour statistics where a body would meet the top edge of the (rotated) patch."""
    p = PATCH
    c0, c1 = int(p * 0.36), int(p * 0.64)
    r1, r2 = _B, int(p * 0.15)
    centre = lab[r1:r2, c0:c1]
    sides = np.concatenate([lab[r1:r2, _B:int(p * 0.25)], lab[r1:r2, int(p * 0.75):p - _B]], axis=1)
    deeper = lab[r2:int(p * 0.28), c0:c1]
    ca, cb, cc, cl = _ab_stats(centre)
    sa, sb, _, sl = _ab_stats(sides)
    da, db, dc, dl = _ab_stats(deeper)
    diff = np.linalg.norm(centre.reshape(-1, 3) - paper_lab[None], axis=1)
    hue = np.arctan2(cb, ca)
    w = min(1.0, cc / 20.0)
    raw = raw_lab[r1:r2, c0:c1].reshape(-1, 3)
    return np.array([
        cl, ca, cb, cc, np.cos(hue) * w, np.sin(hue) * w, float(centre.std()),
        sl, sa, sb, float(np.hypot(np.hypot(ca - sa, cb - sb), cl - sl)), float(np.mean(diff > 18)),
        dl, da, db, dc, cl - float(paper_lab[0]),
        *np.median(raw, axis=0).tolist(),
    ], np.float32)


def prepare(patch: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(balanced Lab, raw Lab, paper Lab) of a patch."""
    paper = paper_colour(patch)
    lab = balance_to_paper(patch, paper)
    raw = cv2.cvtColor(patch.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    a, b = int(PATCH * 0.08), int(PATCH * 0.24)
    paper_lab = np.median(lab[a:b, a:b].reshape(-1, 3), axis=0)
    return lab, raw, paper_lab


def rotations(arr: np.ndarray) -> list[np.ndarray]:
    """The patch with each edge (0 top, 1 right, 2 bottom, 3 left) brought to the top."""
    return [arr, np.rot90(arr, 1), np.rot90(arr, 2), np.rot90(arr, 3)]


def all_end_features(lab, raw, paper_lab, edge_lengths: np.ndarray) -> np.ndarray:
    """(4, n) features of the four edges, each with its length relative to its neighbours."""
    rows = []
    for k, (l, r) in enumerate(zip(rotations(lab), rotations(raw))):
        ratio = edge_lengths[k] / max(1e-6, 0.5 * (edge_lengths[(k + 1) % 4] + edge_lengths[(k + 3) % 4]))
        opposite = np.rot90(l, 2)
        opp = end_features(opposite, np.rot90(r, 2), paper_lab)
        rows.append(np.concatenate([end_features(l, r, paper_lab), opp[[3, 10, 11]], [ratio]]))
    return np.array(rows, np.float32)


def card_features(lab: np.ndarray, raw: np.ndarray, paper_lab: np.ndarray,
                  edge_probs: np.ndarray) -> np.ndarray:
    """Whole-card features with the card turned so its (most likely) connecting end is on top.

    edge_probs: probabilities of being a connecting edge for top, right, bottom, left
    of the already-oriented patch.
    """
    p = PATCH
    diff = np.linalg.norm(lab - paper_lab[None, None], axis=2)
    ink = diff > 22
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    bands = 12
    step = p // bands
    profile = []
    ab_means = []
    for i in range(bands):
        sl = slice(i * step, (i + 1) * step)
        band_ink = ink[sl, _B:p - _B]
        frac = float(band_ink.mean())
        cols = float(band_ink.any(axis=0).mean())
        sel = lab[sl, _B:p - _B][band_ink]
        if len(sel) >= 3:
            a, b = float(np.median(sel[:, 1])), float(np.median(sel[:, 2]))
            within = float(np.std(sel[:, 1]) + np.std(sel[:, 2]))
        else:
            a = b = within = 0.0
        ab_means.append((a, b))
        dark = float((lab[sl, _B:p - _B, 0] < 25).mean())
        bright_ink = float(((lab[sl, _B:p - _B, 0] > float(paper_lab[0]) + 8)).mean())
        profile.extend([frac, cols, float(np.hypot(a, b)), within, dark, bright_ink])
    ab = np.array(ab_means)
    steps = np.linalg.norm(np.diff(ab, axis=0), axis=1)
    centre = lab[_B:p - _B, int(p * 0.3):int(p * 0.7)]
    cchroma = np.hypot(centre[..., 1], centre[..., 2])
    hue = np.arctan2(centre[..., 2], centre[..., 1])[cchroma > 15]
    hue_spread = float(1.0 - np.hypot(np.cos(hue).mean(), np.sin(hue).mean())) if len(hue) > 5 else 0.0
    g = cv2.cvtColor(np.clip(raw[..., :1] * 2.55, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)[..., 0] \
        if raw.shape[2] == 3 else None
    edges = cv2.Canny(g, 40, 100) if g is not None else np.zeros((p, p), np.uint8)
    glob = [
        float(ink.mean()), float(chroma.mean()), float(chroma[ink].mean()) if ink.any() else 0.0,
        float(np.std(ab[:, 0]) + np.std(ab[:, 1])), float(steps.max()), float(steps.mean()), hue_spread,
        float(edges.mean() / 255.0),
        *np.mean(raw.reshape(-1, 3), axis=0).tolist(), *np.std(raw.reshape(-1, 3), axis=0).tolist(),
        *paper_lab.tolist(),
        float(np.mean(raw[..., 0] < 30)),
    ]
    return np.concatenate([np.array(profile, np.float32), np.array(glob, np.float32),
                           np.asarray(edge_probs, np.float32)])
