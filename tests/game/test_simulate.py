from collections import Counter

import pytest

from companion.game.chains import is_complete
from companion.game.deck import load_deck
from companion.game.referee import Referee, judge_record
from companion.game.simulate import random_table, simulate_game, without_reasons


@pytest.mark.parametrize("seed", range(6))
def test_referee_agrees_with_a_simulated_legal_game(seed):
    game = simulate_game(["Ann", "Ben", "Cy"], seed)
    assert all(m["legal"] for m in game.truth["moves"])
    assert without_reasons(judge_record(game.record)) == without_reasons(game.truth)


@pytest.mark.parametrize("seed", range(6))
def test_referee_gives_the_injected_verdicts(seed):
    game = simulate_game(["Ann", "Ben"], seed, illegal_rate=0.35)
    assert game.injected, "the seed should break at least one rule"
    got = without_reasons(judge_record(game.record))
    assert got == without_reasons(game.truth)
    flagged = {(m["frame"], m["code"]) for m in got["moves"] if not m["legal"]}
    assert set(game.injected) <= flagged
    # even in a game full of faults every card seen is somewhere: table, pile or taken off
    ref = Referee(["Ann", "Ben"])
    for table in game.frames:
        ref.observe(table)
        assert ref.accounted() == ref.seen()


def test_same_seed_same_game_other_seed_other_game():
    a, b = simulate_game(["A", "B"], 7), simulate_game(["A", "B"], 7)
    assert a.record == b.record and a.truth == b.truth and a.draws == b.draws
    assert simulate_game(["A", "B"], 8).record != a.record


def test_a_legal_game_uses_the_whole_deck_and_keeps_every_card():
    deck = load_deck()
    game = simulate_game(["A", "B", "C", "D"], 3)
    assert Counter(deck.identity(c) for c in game.draws) == Counter(deck.counts)
    assert game.record["finished"] is True
    assert game.frames[0] == [[game.draws[0]]]
    for table, piles in zip(game.frames, game.piles_after):
        on_table = sum(len(c) for c in table)
        collected = sum(len(s) for snakes in piles.values() for s in snakes)
        assert on_table + collected <= deck.size
        assert all(is_complete(s) for snakes in piles.values() for s in snakes)
    last = game.piles_after[-1]
    assert sum(len(c) for c in game.frames[-1]) + sum(len(s) for v in last.values() for s in v) == 50


def test_referee_fed_frame_by_frame_matches_piles_after_each_frame():
    deck = load_deck()
    game = simulate_game(["A", "B"], 11)
    ref = Referee(["A", "B"], deck)
    for table, piles in zip(game.frames, game.piles_after):
        ref.observe(table)
        assert {p: sorted(len(s) for s in v) for p, v in ref.piles.items()} == \
               {p: sorted(len(s) for s in v) for p, v in piles.items()}
        assert sum(ref.accounted().values()) + ref.undrawn() == deck.size


def test_random_table_is_a_legal_mid_game_table():
    table = random_table(5, 12)
    assert table == random_table(5, 12)
    assert table and all(chain for chain in table)
    ref = Referee(["A"])
    ref.observe(table)
    assert ref.moves == []


def test_simulator_shows_unseen_completions_alone_and_sharing_a_frame():
    shared = alone = 0
    for seed in range(4):
        game = simulate_game(["A", "B"], seed, unseen_rate=0.5, merge_rate=0.5)
        by_frame = {}
        for m in game.truth["moves"]:
            by_frame.setdefault(m["frame"], []).append(m)
        for moves in by_frame.values():
            unseen = [m for m in moves if m["action"] == "complete" and m["collected"]]
            laid = [m for m in moves if m["action"] in ("new", "extend", "join")]
            shared += bool(unseen and laid)
            alone += bool(unseen and not laid)
        assert without_reasons(judge_record(game.record)) == without_reasons(game.truth)
    assert shared and alone


def test_same_seed_same_game_in_another_process():
    """Nothing may hang on string hashing, which Python varies per process."""
    import os
    import subprocess
    import sys
    code = ("import hashlib, json; from companion.game.simulate import simulate_game; "
            "g = simulate_game(['A', 'B', 'C'], 42, illegal_rate=0.3); "
            "print(hashlib.sha256(json.dumps([g.record, g.truth]).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2)}
    assert len(digests) == 1
