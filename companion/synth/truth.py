"""The truth of a picture in the `analyze --json` format, and what of it a still can show."""
from __future__ import annotations

import numpy as np

from companion.game.cards import Card, Kind
from companion.game.chains import is_complete

from .draw import Frame
from .layout import Item
from .world import World


def shot_truth(world: World, shot, path: str, shake: tuple[float, float] = (0.0, 0.0)):
    """`truth_of` a director's shot, its chains numbered in record order; ({}, {}) for a shot
    between settled tables (a hand at work), which has no truth to measure against."""
    if shot.chains is None:
        return {}, {}
    for c, chain in enumerate(shot.chains):
        for pos, it in enumerate(chain):
            it.chain, it.pos = c, pos
    return truth_of(world, shot.items, path, shake=shake)


def truth_of(world: World, items: list[Item], path: str, shake: tuple[float, float] = (0.0, 0.0)):
    """The analyze-format truth of items, and item -> truth id."""
    cam = world.camera
    ordered = sorted((it for it in items if it.what in ("card", "back", "unknown")),
                     key=lambda it: (it.chain is None, it.chain if it.chain is not None else 0,
                                     it.pos if it.pos is not None else 0))
    cards, ids, chains = [], {}, {}
    shift = np.array(shake, float)
    for k, it in enumerate(ordered):
        ids[id(it)] = k
        corners = cam.project(it.pose.corners()) + shift
        ends = [cam.project(e[None])[0] + shift for e in it.ends()]
        kind = it.card.kind.value if it.what == "card" else it.what
        cards.append({
            "id": k, "kind": kind,
            "colours": list(it.card.colours) if it.what == "card" else [],
            "ends": [[round(float(x), 2), round(float(y), 2)] for x, y in ends],
            "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in corners],
            "confidence": 1.0,
        })
        if it.what == "card" and it.chain is not None:
            chains.setdefault(it.chain, []).append((it.pos, k, it.card))
    snakes = []
    for c in sorted(chains):
        members = [k for _, k, _ in sorted(chains[c])]
        snakes.append({"cards": members, "complete": is_complete([card for _, _, card in sorted(chains[c])])})
    w, h = cam.size
    return {"image": {"path": path, "width": w, "height": h}, "cards": cards, "snakes": snakes,
            "problems": []}, ids


VISIBLE_SHARE = 0.5    # a card is in a still's truth when at least this much of it can be seen


def visibility_of(frame: Frame, n: int, gone: list[int]) -> dict[str, float]:
    """How much of each card a still's truth keeps is in view (a fan's lower cards little),
    by its id in that truth: `n` cards drawn, `gone` left out (`visible_truth`)."""
    left_out = set(gone)
    kept = [k for k in range(n) if k not in left_out]
    return {str(i): round(frame.visibility[k], 3) for i, k in enumerate(kept)}


def visible_truth(truth: dict, frame: Frame) -> tuple[dict, np.ndarray, list[int]]:
    """The truth of the cards one can judge in the picture, its label, and the ids left out.

    A card is left out when more than half of it is outside the picture or
    under a hand or a prop (outside + hidden > 1 - VISIBLE_SHARE); cards under
    other cards (a fan) stay.  A snake with a card left out becomes its runs
    of visible neighbours, each complete only if it is itself a complete snake.
    """
    n = len(truth["cards"])
    keep = [k for k in range(n) if frame.outside.get(k, 0.0) + frame.hidden.get(k, 0.0) <= 1 - VISIBLE_SHARE]
    gone = [k for k in range(n) if k not in set(keep)]
    if not gone:
        return truth, frame.label, []
    new = {k: i for i, k in enumerate(keep)}
    cards = [dict(truth["cards"][k], id=new[k]) for k in keep]
    snakes = []
    for snake in truth["snakes"]:
        runs, run = [], []
        for k in snake["cards"]:
            if k in new:
                run.append(new[k])
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
        for run in runs:
            whole = len(run) == len(snake["cards"])
            complete = snake["complete"] if whole else is_complete([_card(cards[i]) for i in run])
            snakes.append({"cards": run, "complete": complete})
    lut = np.zeros(n + 1, np.uint16)
    for k, i in new.items():
        lut[k + 1] = i + 1
    return dict(truth, cards=cards, snakes=snakes), lut[frame.label], gone


def _card(card: dict) -> Card:
    return Card(Kind(card["kind"]), tuple(card["colours"]))
