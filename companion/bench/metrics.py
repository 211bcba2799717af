"""Compare one analysis with the truth of a rendered scene (both in the analyze JSON format)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from companion.vision.outline import match_quads

# Cards showing less than this share of their face (under other cards of a fan,
# under a hand) are not required to be found; the count is reported.
MIN_VISIBLE = 0.5

MATCH_IOU = 0.5


@dataclass
class Score:
    truth_cards: int = 0
    found_cards: int = 0
    matched: int = 0
    kind_right: int = 0
    ends: int = 0
    ends_right: int = 0
    truth_chains: int = 0
    chains_right: int = 0
    tables: int = 0
    tables_exact: int = 0
    mistakes: list[str] = field(default_factory=list)

    def add(self, other: "Score") -> None:
        for name in ("truth_cards", "found_cards", "matched", "kind_right", "ends", "ends_right",
                     "truth_chains", "chains_right", "tables", "tables_exact"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.mistakes.extend(other.mistakes)

    def rates(self) -> dict[str, float | None]:
        def r(a, b):
            return None if b == 0 else round(a / b, 4)
        return {"recall": r(self.matched, self.truth_cards), "precision": r(self.matched, self.found_cards),
                "kind_accuracy": r(self.kind_right, self.matched),
                "end_colour_accuracy": r(self.ends_right, self.ends),
                "chain_accuracy": r(self.chains_right, self.truth_chains),
                "table_exact": r(self.tables_exact, self.tables)}


def match_cards(truth: list[dict], found: list[dict]) -> dict[int, int]:
    """truth id -> found id, greedily by outline overlap."""
    m = match_quads([np.array(t["corners"], float) for t in truth], [np.array(f["corners"], float) for f in found],
                    MATCH_IOU)
    return {truth[i]["id"]: found[j]["id"] for i, j in m.items()}


def covered_cards(meta: dict) -> frozenset[int]:
    """The truth cards of a rendered still (its `meta`) that lie mostly covered, by other
    cards (a fan of face-down cards): not required of the analyser (`score_table`)."""
    return frozenset(int(k) for k, v in meta.get("visibility", {}).items() if v < MIN_VISIBLE)


def score_table(truth: dict, found: dict, hidden: frozenset[int] = frozenset()) -> Score:
    """Score one table.  `hidden` truth cards (mostly covered, e.g. inside a fan of
    face-down cards) are not required: missing them costs nothing, and finding
    them is neither a false find nor counted.  The required cards are matched
    first: the top card of a fan, found, often overlaps the card just beneath it
    (turned a few degrees) a little more than itself, and is still that top card."""
    s = Score(tables=1)
    tcards = [c for c in truth["cards"] if c["id"] not in hidden]
    m = match_cards(tcards, found["cards"])
    taken = set(m.values())
    rest = [c for c in found["cards"] if c["id"] not in taken]
    drop_found = set(match_cards([c for c in truth["cards"] if c["id"] in hidden], rest).values())
    fcards = [c for c in found["cards"] if c["id"] not in drop_found]
    s.truth_cards, s.found_cards = len(tcards), len(fcards)
    s.matched = len(m)
    fby = {c["id"]: c for c in fcards}
    exact = s.matched == s.truth_cards == s.found_cards
    for t in tcards:
        if t["id"] not in m:
            s.mistakes.append(f"missed {t['kind']} {t['colours']}")
            continue
        f = fby[m[t["id"]]]
        if f["kind"] == t["kind"]:
            s.kind_right += 1
        else:
            exact = False
            s.mistakes.append(f"kind {t['kind']} read as {f['kind']}")
        for colour, end in zip(t["colours"], t["ends"]):
            s.ends += 1
            if f["ends"]:
                d = [np.hypot(e[0] - end[0], e[1] - end[1]) for e in f["ends"]]
                j = int(np.argmin(d))
                short = _short_side(t["corners"])
                if d[j] < 0.35 * short and j < len(f["colours"]) and f["colours"][j] == colour:
                    s.ends_right += 1
                    continue
            exact = False
            s.mistakes.append(f"end {colour} of {t['kind']} read as {f['colours']}")
    found_chains = {tuple(x["cards"]) for x in found["snakes"]}
    found_complete = {tuple(x["cards"]): x["complete"] for x in found["snakes"]}
    for chain in truth["snakes"]:
        s.truth_chains += 1
        ids = [m.get(i) for i in chain["cards"]]
        ok = False
        if None not in ids:
            for cand in (tuple(ids), tuple(reversed(ids))):
                if cand in found_chains and found_complete[cand] == chain["complete"]:
                    ok = True
        if ok:
            s.chains_right += 1
        else:
            exact = False
    if len(found["snakes"]) != len(truth["snakes"]):
        exact = False
    s.tables_exact = int(exact)
    return s


def _short_side(corners) -> float:
    q = np.array(corners, float)
    e = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
    return float(min(e[0] + e[2], e[1] + e[3]) / 2)
