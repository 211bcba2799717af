"""Two neighbouring colours told apart by the groups this picture's own ends of them make.

A print or a lamp can move one ink towards its neighbour (an orange that the
model, taught on other prints, calls red), but it moves every card's orange
the same way: on one table, the model's odds between the two colours part the
ends into two groups with a wide gap between them, even where every end leans
to the same colour.  In a print whose orange the model takes for red, its reds
are read as red a hundred to one and its oranges two or three to one, and
which is which is no closer in the odds than that.  For each pair of colours
the model doubts between at some end here, the ends read as either colour are
sorted by those odds; where a gap of `GAP` parts them, the group leaning less
to the first colour is the second and the other the first, and an end read as
the pair's colour its group is not takes its group's (when the model gives that
colour a chance at all).

(The ends' measured hues were sorted before: they part the groups less often,
as a print's two neighbouring inks may lie a few degrees apart, little more
than two ends of one ink.  On the 15 development games' pictures the odds
mended 30 of the 132 wrong end colours; the hues, added to them, none.)
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .recognise import CardReading

LEAST_CHROMA = 35.0   # balanced a, b units: a greyer end's colour is noise (a dim picture's ends)
LEAST_ENDS = 3        # ends of a pair: fewer show no groups
GAP = 2.0             # natural log of the odds: the least gap between two groups (odds 7.4 to 1)
CHANCE = 0.05         # the least probability the model gives a colour an end is moved to
LEAST_P = 1e-9        # (a probability the model rounded to 0 still has odds)


def colours_by_groups(readings: list[CardReading], colours: list[str]) -> list[CardReading]:
    """`readings`, each end read as one of a pair of colours lying in the other's group given
    that colour (a middle never with one colour at both ends)."""
    names = [str(c) for c in colours]
    ends: dict[str, list[tuple[int, int]]] = {}   # likeliest colour -> (reading, end)
    pairs = set()                                 # the pairs of colours some end doubts between
    for i, r in enumerate(readings):
        for k, (p, lab) in enumerate(zip(r.colour_probs, r.end_labs)):
            if np.hypot(lab[1], lab[2]) < LEAST_CHROMA:
                continue
            first, second = np.argsort(-p)[:2]
            ends.setdefault(names[first], []).append((i, k))
            if p[second] >= CHANCE:
                pairs.add(tuple(sorted((names[first], names[second]))))
    now = [list(r.colours) for r in readings]
    for pair in sorted(pairs):
        members = ends.get(pair[0], []) + ends.get(pair[1], [])
        if len(members) < LEAST_ENDS:
            continue
        for (i, k), colour in _grouped(readings, members, list(pair), names).items():
            read = readings[i].colours[k]
            # (an end read as a third colour, by the table's sure ends, is not this pair's to say;
            # one this pair's groups leave as read may be another pair's to change)
            if read not in pair or read == colour or readings[i].colour_probs[k][names.index(colour)] < CHANCE:
                continue
            changed = list(now[i])
            changed[k] = colour
            if readings[i].kind == "middle" and len(set(changed)) < 2:
                continue
            now[i] = changed
    return [r if now[i] == list(r.colours) else replace(r, colours=now[i]) for i, r in enumerate(readings)]


def _grouped(readings: list[CardReading], members: list[tuple[int, int]], pair: list[str],
             names: list[str]) -> dict[tuple[int, int], str]:
    """(reading, end) -> colour, when the members' odds of the pair's first colour against its
    second part into two groups; else nothing."""
    x, y = (names.index(c) for c in pair)
    probs = [readings[i].colour_probs[k] for i, k in members]
    odds = np.array([np.log(max(float(p[x]), LEAST_P)) - np.log(max(float(p[y]), LEAST_P)) for p in probs])
    order = np.argsort(odds)
    steps = np.diff(odds[order])
    cut = int(np.argmax(steps)) + 1
    if steps[cut - 1] < GAP:
        return {}
    return {**{members[j]: pair[1] for j in order[:cut]}, **{members[j]: pair[0] for j in order[cut:]}}
