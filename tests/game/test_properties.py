"""Invariants of the rules over random games (hypothesis)."""
import os
from collections import Counter

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from companion.game.cards import Card, Kind
from companion.game.chains import check_chain, is_complete, reverse_chain, table_multiset
from companion.game.deck import load_deck
from companion.game.referee import Referee
from companion.game.rules import legal_placements, placement_problems
from companion.game.simulate import simulate_game, without_reasons

DECK = load_deck()
PLAYERS = st.lists(st.sampled_from(["Ann", "Ben", "Cy", "Dee", "Eve"]), min_size=2, max_size=5,
                   unique=True)
# HISSS_EXAMPLES raises the number of random games for a longer search than CI's.
SETTINGS = settings(max_examples=int(os.environ.get("HISSS_EXAMPLES", 15)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def by_frame(moves):
    out: dict[int, list] = {}
    for m in moves:
        out.setdefault(m["frame"], []).append(m)
    return out


@SETTINGS
@given(seed=st.integers(0, 10**6), players=PLAYERS)
def test_random_legal_games_are_accepted_move_by_move(seed, players):
    game = simulate_game(players, seed)
    truth = by_frame(without_reasons(game.truth)["moves"])
    ref = Referee(players, DECK)
    for i, (table, piles, undrawn) in enumerate(zip(game.frames, game.piles_after, game.undrawn_after)):
        moves = [m.to_json() for m in ref.observe(table)]
        assert all(m["legal"] for m in moves), moves
        assert without_reasons({"moves": moves, "piles": {}})["moves"] == truth.get(i, [])
        # no card created or lost: table + piles + undrawn = the deck
        on_table = sum(len(c) for c in table)
        collected = sum(len(s) for snakes in ref.piles.values() for s in snakes)
        assert on_table + collected + undrawn == DECK.size
        assert ref.accounted() == ref.seen()
        assert ref.undrawn() == undrawn
        assert all(is_complete(s) for snakes in ref.piles.values() for s in snakes)
        assert {p: len(v) for p, v in ref.piles.items()} == {p: len(v) for p, v in piles.items()}
    ref.finish()
    assert ref.scores() == game.truth["scores"] and ref.winners() == game.truth["winners"]


@SETTINGS
@given(seed=st.integers(0, 10**6), data=st.data())
def test_listing_order_and_reading_direction_never_change_a_verdict(seed, data):
    game = simulate_game(["A", "B", "C"], seed, illegal_rate=0.2)
    ref = Referee(["A", "B", "C"], DECK)
    for table in game.frames:
        shuffled = [reverse_chain(c) if data.draw(st.booleans()) else tuple(c) for c in table]
        shuffled = data.draw(st.permutations(shuffled))
        ref.observe(shuffled)
    got = without_reasons(ref.to_json())
    got["moves"] = [dict(m, card=None) if m["action"] == "collect" else m for m in got["moves"]]
    want = without_reasons(game.truth)
    assert [(m["frame"], m["turn"], m["player"], m["action"], m["legal"], m["code"])
            for m in got["moves"]] == \
           [(m["frame"], m["turn"], m["player"], m["action"], m["legal"], m["code"])
            for m in want["moves"]]
    assert got["piles"] == want["piles"]


@SETTINGS
@given(seed=st.integers(0, 10**6), data=st.data())
def test_every_legal_placement_is_sound_and_alone_only_when_nothing_fits(seed, data):
    game = simulate_game(["A", "B"], seed)
    table = game.frames[data.draw(st.integers(0, len(game.frames) - 1))]
    card = data.draw(st.sampled_from(sorted(DECK.counts)))
    card = card.flipped() if data.draw(st.booleans()) else card
    found = legal_placements(table, card)
    assert found
    if any(p.action == "new" for p in found):
        assert len(found) == 1
    for p in found:
        assert placement_problems(p.chain, p.position) == []
        assert DECK.identity(p.card) == DECK.identity(card)
        before = sum(len(c) for c in table)
        assert sum(len(c) for c in p.table) == before + 1
        assert p.completes == is_complete(p.chain)


def _mutations(previous, table, frame_moves, undrawn):
    """Ways to spoil the table a legal placement produced, each certainly illegal."""
    placed = [m for m in frame_moves if m["card"] and m["action"] != "collect"]
    out = []
    chains = [list(c) for c in table]
    for ci, chain in enumerate(chains):
        for k, card in enumerate(chain):
            neighbours = [chain[j] for j in (k - 1, k + 1) if 0 <= j < len(chain)]
            solid = [n for n in neighbours if n.kind not in (Kind.RAINBOW_HEAD, Kind.RAINBOW_TAIL)]
            if card.kind is Kind.MIDDLE and solid:
                spoiled = [list(c) for c in chains]
                spoiled[ci][k] = card.flipped()
                out.append(("turn a middle round", spoiled))
        if len(chain) >= 2:
            spoiled = [list(c) for c in chains]
            spoiled[ci] = chain[1:]
            out.append(("take back an end card", spoiled))
    if undrawn:
        out.append(("lay an extra card", [list(c) for c in chains] + [[undrawn[0]]]))
    if placed and placed[0]["action"] != "new":
        card = Card.parse(placed[0]["card"])
        ident = DECK.identity(card)
        for ci, chain in enumerate(chains):
            for k in (0, len(chain) - 1):
                if DECK.identity(chain[k]) == ident and len(chain) > 1:
                    rest = chain[1:] if k == 0 else chain[:-1]
                    spoiled = [list(c) for c in chains]
                    spoiled[ci] = rest
                    out.append(("lay the card alone though it fits", spoiled + [[chain[k]]]))
    # A spoiled table showing no chain that was not there before could be read as mere
    # collections (e.g. taking back the card just laid): keep only those that cannot.
    before = table_multiset(previous)
    return [(name, spoiled) for name, spoiled in out if table_multiset(spoiled) - before]


def test_a_middle_laid_alone_among_lone_cards_with_none_left_to_draw_has_no_sure_spoiling():
    # the case the property below skips (game seed 6411, frame 47: hypothesis found it)
    game = simulate_game(["A", "B", "C"], 6411)
    assert [[str(c) for c in chain] for chain in game.frames[47]] == [["T-blue"], ["H-yellow"], ["M-purple-green"]]
    assert _mutations(game.frames[46], game.frames[47], by_frame(game.truth["moves"])[47], []) == []


@SETTINGS
@given(seed=st.integers(0, 10**6), data=st.data())
def test_random_illegal_mutations_of_a_legal_frame_are_flagged(seed, data):
    game = simulate_game(["A", "B", "C"], seed)
    truth = by_frame(game.truth["moves"])
    placements = [i for i in range(1, len(game.frames))
                  if any(m["action"] in ("new", "extend", "join", "complete") and m["card"]
                         and not m["collected"] for m in truth.get(i, []))]
    k = data.draw(st.sampled_from(placements))
    used = Counter(DECK.identity(c) for c in game.draws[:])
    seen_so_far = Counter(DECK.identity(c) for t in game.frames[:k + 1] for ch in t for c in ch)
    undrawn = [c for c in DECK.counts if DECK.counts[c] > seen_so_far[c]
               and c not in {DECK.identity(x) for ch in game.frames[k] for x in ch}]
    assert used == Counter(DECK.counts)
    options = _mutations(game.frames[k - 1], game.frames[k], truth[k], undrawn)
    # (late in a game every card may be drawn and the table all lone cards, a middle laid
    # alone among them: no spoiling of that table is certainly illegal)
    assume(options)
    name, spoiled = data.draw(st.sampled_from(options))
    ref = Referee(["A", "B", "C"], DECK)
    for table in game.frames[:k]:
        ref.observe(table)
    moves = ref.observe(spoiled)
    assert moves, name
    assert any(not m.legal for m in moves), (name, [m.to_json() for m in moves])


@SETTINGS
@given(seed=st.integers(0, 10**6), data=st.data())
def test_legal_placements_lists_every_place_a_whole_chain_check_accepts(seed, data):
    """On a table of sound chains, a card may go exactly where the whole resulting chain
    passes `check_chain` (an oracle independent of the placement code)."""
    game = simulate_game(["A", "B"], seed)
    table = [tuple(c) for c in game.frames[data.draw(st.integers(0, len(game.frames) - 1))]]
    assert all(check_chain(c) == [] for c in table)
    card = data.draw(st.sampled_from(sorted(DECK.counts)))
    turns = {card, card.flipped()}
    results = set()
    for i, chain in enumerate(table):
        rest = table[:i] + table[i + 1:]
        for t in turns:
            for grown in ((t,) + chain, chain + (t,)):
                if not check_chain(grown):
                    results.add(frozenset(table_multiset(rest + [grown]).items()))
        for j, other in enumerate(table):
            if i == j or card.kind is not Kind.MIDDLE:
                continue
            rest2 = [c for k, c in enumerate(table) if k not in (i, j)]
            for left in (chain, reverse_chain(chain)):
                for right in (other, reverse_chain(other)):
                    for t in turns:
                        if not check_chain(left + (t,) + right):
                            results.add(frozenset(table_multiset(rest2 + [left + (t,) + right]).items()))
    found = legal_placements(table, card)
    listed = {frozenset(table_multiset(p.table).items()) for p in found if p.action != "new"}
    assert listed == results
    assert (found[0].action == "new") == (not results)
