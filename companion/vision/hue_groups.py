"""Two neighbouring colours told apart by where this picture's own ends of them lie.

A print or a lamp can move one ink into its neighbour's hue (an orange that the
model, taught on other prints, calls red), but it moves every card's orange
the same way: on one table, the ends of the two colours still form two groups
of hue with a gap between them.  For each pair of colours the model doubts
between at some end here, the ends read as either colour are sorted by hue;
where a gap wider than the groups' own spread parts them, each group is the
colour its ends lean to on the whole, and an end the model doubted that was
read as the other takes its group's colour (when the model gives that colour a
chance at all).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .recognise import CardReading

LEAST_CHROMA = 35.0   # balanced a, b units: a greyer end's hue is noise (a dim picture's ends)
LEAST_ENDS = 3        # ends of a pair: fewer show no groups
GAP = 6.0             # degrees of hue: the least gap between two groups ...
GAP_SPREAD = 3.0      # ... and the least, in the groups' own spread (its standard deviation)
LEAST_SPREAD = 1.0    # degrees: the spread of a group never taken for less than this
CHANCE = 0.05         # the least probability the model gives a colour an end is moved to ...
SURE = 0.9            # ... and the most it gives the colour the end was read as


def colours_by_hue_groups(readings: list[CardReading], colours: list[str]) -> list[CardReading]:
    """`readings`, each end whose hue lies in the other group of its two likeliest colours given
    that group's colour (a middle never with one colour at both ends)."""
    names = [str(c) for c in colours]
    ends: dict[str, list[tuple[int, int, float]]] = {}   # likeliest colour -> (reading, end, hue)
    pairs = set()                                         # the pairs of colours some end doubts between
    for i, r in enumerate(readings):
        for k, (p, lab) in enumerate(zip(r.colour_probs, r.end_labs)):
            if np.hypot(lab[1], lab[2]) < LEAST_CHROMA:
                continue
            first, second = np.argsort(-p)[:2]
            ends.setdefault(names[first], []).append((i, k, float(np.degrees(np.arctan2(lab[2], lab[1])))))
            if p[second] >= CHANCE:
                pairs.add(tuple(sorted((names[first], names[second]))))
    now = [list(r.colours) for r in readings]
    for pair in sorted(pairs):
        members = ends.get(pair[0], []) + ends.get(pair[1], [])
        if len(members) < LEAST_ENDS:
            continue
        for (i, k), colour in _grouped(readings, members, list(pair), names).items():
            p = readings[i].colour_probs[k]
            if p.max() >= SURE or p[names.index(colour)] < CHANCE:
                continue   # (a sure end's measured hue may be its neighbour's or a shadow's)
            changed = list(now[i])
            changed[k] = colour
            if readings[i].kind == "middle" and len(set(changed)) < 2:
                continue
            now[i] = changed
    return [r if now[i] == list(r.colours) else replace(r, colours=now[i]) for i, r in enumerate(readings)]


def _grouped(readings: list[CardReading], members: list[tuple[int, int, float]], pair: list[str],
             names: list[str]) -> dict[tuple[int, int], str]:
    """(reading, end) -> colour, when the members' hues part into two groups; else nothing."""
    hues = np.array([h for _, _, h in members])
    centre = np.degrees(np.angle(np.exp(1j * np.radians(hues)).mean()))
    hues = (hues - centre + 180.0) % 360.0 - 180.0          # about the members' mean: no wrap
    order = np.argsort(hues)
    steps = np.diff(hues[order])
    cut = int(np.argmax(steps)) + 1
    low, high = order[:cut], order[cut:]
    spread = max(LEAST_SPREAD, float(np.std(hues[low])), float(np.std(hues[high])))
    if steps[cut - 1] < max(GAP, GAP_SPREAD * spread):
        return {}
    x, y = (names.index(c) for c in pair)

    def lean(group) -> float:
        """How much more the group's ends lean to the pair's first colour than to its second."""
        return float(np.mean([readings[members[j][0]].colour_probs[members[j][1]][x]
                              - readings[members[j][0]].colour_probs[members[j][1]][y] for j in group]))

    low_colour, high_colour = (pair[0], pair[1]) if lean(low) > lean(high) else (pair[1], pair[0])
    out = {}
    for group, colour in ((low, low_colour), (high, high_colour)):
        for j in group:
            out[members[j][:2]] = colour
    return out
