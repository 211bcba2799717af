"""What calibration measures on each card of a laid-out deck, before anything is named.

The measurements reuse the vision's own card patch and white balance
(`companion.vision.features`), so the colour models written into a profile
live in exactly the space the recogniser compares against at analyze time:
the median balanced Lab where a body meets a connecting edge (`c_L, c_a, c_b`).

`refl_lab` is the deck's colour models' space: each pixel divided by the card's
own paper, channel by channel, so a lamp's colour and how brightly the card is
lit (a shadow over the whole card, a dim corner of the table) cancel; what is
left is the ink's reflectance relative to its paper, as Lab.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.features import PATCH, end_features, paper_colour, prepare_all, rotations, warp_card
from companion.vision.outline import CardOutline

C_L, C_A, C_B, C_CHROMA, C_MINUS_S, INK_FRAC = 0, 1, 2, 3, 10, 11


@dataclass
class CardLook:
    """One found card: its outline and the numbers the labeller decides on."""
    outline: CardOutline
    end_lab: np.ndarray        # (4, 3) balanced Lab at each outline edge's middle (the vision's c_L, c_a, c_b)
    ink_lab: np.ndarray        # (4, 3) balanced Lab of the coloured ink alone near each edge (paper and outline left out)
    refl_lab: np.ndarray       # (4, 3) the same ink as Lab of its reflectance against the card's paper (see above)
    end_score: np.ndarray      # (4,) how strongly a body meets each edge (ink against paper)
    contrast: np.ndarray       # (4,) the middle of each edge against the rest of that edge (a printed frame cancels)
    paper_lab: np.ndarray      # (3,) balanced paper (for the deck's paper colour)
    paper_bgr: np.ndarray      # (3,) raw paper as photographed (the light's cast)
    stripes: np.ndarray        # (4,) per edge: how often the body's colour changes going away from it
    far_shape: np.ndarray      # (4,) per edge: ink width far from that edge / near it
    lab: np.ndarray            # the balanced patch (kept for the adapter and for debugging)

    @property
    def aspect(self) -> float:
        return self.outline.long_side / max(1e-6, self.outline.short_side)


def measure_cards(image: np.ndarray, outlines: list[CardOutline]) -> list[CardLook]:
    """Measure every card at once (the vision's end features run on stacked patches)."""
    if not outlines:
        return []
    patches = [warp_card(image, o.corners) for o in outlines]
    labs, raws, papers = prepare_all(np.stack(patches))
    papers = papers.astype(np.float32)
    # (N, 4, F): each edge turned to the top in turn
    ends = np.stack([end_features(l, r, papers) for l, r in zip(rotations(labs, (1, 2)), rotations(raws, (1, 2)))],
                    axis=1).astype(np.float64)
    out = []
    for i, o in enumerate(outlines):
        out.append(_look(o, patches[i], labs[i], papers[i].astype(np.float64), ends[i]))
    return out


def measure_card(image: np.ndarray, outline: CardOutline) -> CardLook:
    return measure_cards(image, [outline])[0]


def _look(outline: CardOutline, patch: np.ndarray, lab: np.ndarray, paper_lab: np.ndarray,
          ends: np.ndarray) -> CardLook:
    # ink at the middle of an edge, against the paper and against the rest of that edge
    dist_paper = np.linalg.norm(ends[:, [C_L, C_A, C_B]] - paper_lab[None], axis=1)
    score = 0.5 * dist_paper + 0.5 * ends[:, C_MINUS_S] + 20.0 * ends[:, INK_FRAC]
    ink = np.linalg.norm(lab - paper_lab[None, None], axis=2) > 22
    shape, stripes, ink_lab, refl_lab = [], [], [], []
    p = PATCH
    refl = reflectance_lab(patch)
    for k, (ink_k, lab_k, refl_k) in enumerate(zip(rotations(ink), rotations(lab), rotations(refl))):
        ink_lab.append(_ink_colour(lab_k, paper_lab, ends[k, [C_L, C_A, C_B]]))
        refl_lab.append(_ink_colour(refl_k, REFLECTANCE_PAPER, REFLECTANCE_PAPER))
        near = ink_k[int(p * 0.2):int(p * 0.45)].mean()
        far = ink_k[int(p * 0.6):int(p * 0.85)].mean()
        shape.append(far / max(near, 1e-3))
        stripes.append(_colour_steps(lab_k, ink_k))
    return CardLook(outline, ends[:, [C_L, C_A, C_B]].copy(), np.array(ink_lab), np.array(refl_lab), score,
                    ends[:, C_MINUS_S].copy(),
                    paper_lab, np.median(patch.reshape(-1, 3), axis=0).astype(np.float64),
                    np.array(stripes), np.array(shape), lab)


PAPER_REFLECTANCE = 0.9    # the paper's place on the reflectance scale: inks brighter than paper (glare) keep room
REFLECTANCE_PAPER = cv2.cvtColor(np.full((1, 1, 3), PAPER_REFLECTANCE, np.float32),
                                 cv2.COLOR_BGR2Lab)[0, 0].astype(np.float64)                   # its Lab


def reflectance_lab(patch: np.ndarray) -> np.ndarray:
    """Lab of the patch divided by its paper channel by channel (paper -> a grey of PAPER_REFLECTANCE)."""
    paper = paper_colour(patch)
    ratio = patch.astype(np.float32) * (PAPER_REFLECTANCE / np.maximum(paper, 1.0))
    return cv2.cvtColor(np.clip(ratio, 0.0, 1.0), cv2.COLOR_BGR2Lab)


INK_BAND = (0.03, 0.18)      # rows (fraction of the patch) next to the edge where the body's colour is read
INK_COLUMNS = (0.2, 0.8)


def _ink_colour(lab: np.ndarray, paper_lab: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """The body's colour where it meets the top edge: the median of the coloured pixels only.

    The vision's end colour is the median of a fixed window, which mixes in
    paper and the body's dark outline when the body is thin or off-centre; here
    only pixels that differ from the paper *and* carry colour count (the outline
    is dark but nearly grey).
    """
    p = PATCH
    band = lab[int(p * INK_BAND[0]):int(p * INK_BAND[1]), int(p * INK_COLUMNS[0]):int(p * INK_COLUMNS[1])].reshape(-1, 3)
    far = np.linalg.norm(band - paper_lab[None], axis=1) > 20
    coloured = np.hypot(band[:, 1], band[:, 2]) > 12
    sel = band[far & coloured]
    return np.median(sel, axis=0).astype(np.float64) if len(sel) >= 6 else np.asarray(fallback, np.float64)


def _colour_steps(lab: np.ndarray, ink: np.ndarray, band: int = 3) -> float:
    """Summed change of the body's (a, b) from band to band, walking away from the top edge.

    A plain head or tail keeps one colour (a small sum, whatever the art's
    shading); a rainbow joker's stripes change colour every few bands.
    """
    p = PATCH
    prev, total = None, 0.0
    for y in range(int(p * 0.05), int(p * 0.7), band):
        sel = lab[y:y + band][ink[y:y + band]]
        if len(sel) < 4:
            continue
        ab = np.median(sel[:, 1:], axis=0)
        if prev is not None:
            total += float(np.linalg.norm(ab - prev))
        prev = ab
    return total
