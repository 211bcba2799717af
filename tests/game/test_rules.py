from companion.game.cards import Card
from companion.game.chains import as_chain, canonical, describe_chain, is_complete, table_multiset
from companion.game.deck import load_deck
from companion.game.rules import (as_table, completions, explain_vanished, fits_somewhere,
                                  legal_placements, lying_end_to_end, placement_problems)


def table(*chains):
    return as_table(chains)


def card(code):
    return Card.parse(code)


def results(tbl, code):
    return {(p.action, describe_chain(canonical(p.chain)), p.completes)
            for p in legal_placements(tbl, card(code))}


def test_rulebook_blue_green_starter_extended_green_to_green():
    found = legal_placements(table(["M-blue-green"]), card("M-green-yellow"))
    assert len(found) == 1
    (p,) = found
    assert p.action == "extend" and not p.completes
    assert canonical(p.chain) == canonical(as_chain(["M-blue-green", "M-green-yellow"]))
    # the drawn card is turned round to match: yellow-green reads green-yellow
    assert legal_placements(table(["M-blue-green"]), card("M-yellow-green"))[0].card.code == "M-green-yellow"


def test_rulebook_purple_head_that_matches_nothing_is_laid_alone():
    tbl = table(["M-blue-green", "M-green-yellow"])
    (p,) = legal_placements(tbl, card("H-purple"))
    assert p.action == "new" and p.chain == (card("H-purple"),)
    assert table_multiset(p.table) == table_multiset(list(tbl) + [(card("H-purple"),)])
    assert fits_somewhere(tbl, card("H-purple")) == []


def test_rulebook_purple_red_middle_joins_two_snakes_and_completes():
    tbl = table(["H-purple"], ["M-red-green", "T-green"])
    joins = [p for p in legal_placements(tbl, card("M-purple-red")) if p.action == "join"]
    assert len(joins) == 1
    assert joins[0].completes and joins[0].used == (0, 1)
    assert len(joins[0].table) == 1
    # it may also just extend either snake: every legal place is listed
    assert {p.action for p in legal_placements(tbl, card("M-purple-red"))} == {"extend", "join"}


def test_join_only_when_both_ends_match():
    tbl = table(["H-purple"], ["M-orange-green", "T-green"])
    assert all(p.action != "join" for p in legal_placements(tbl, card("M-purple-red")))


def test_a_closed_end_takes_nothing():
    tbl = table(["H-red", "M-red-blue"])
    got = results(tbl, "M-red-yellow")   # red matches only the head's closed side
    assert got == {("new", "[M-red-yellow]", False)}


def test_head_and_tail_limits():
    assert results(table(["T-red"]), "H-red") == {("new", "[H-red]", False)}          # head_tail_adjacent
    assert results(table(["H-red", "M-red-blue"]), "H-blue") == {("new", "[H-blue]", False)}  # two heads
    assert results(table(["M-red-blue", "T-blue"]), "RT") == {("new", "[RT]", False)}         # two tails
    got = results(table(["H-red", "M-red-blue"]), "RT")
    assert got == {("extend", "[H-red M-red-blue RT]", True)}


def test_a_lone_head_takes_only_a_middle():
    assert {a for a, _, _ in results(table(["H-red"]), "M-red-blue")} == {"extend"}
    assert {a for a, _, _ in results(table(["H-red"]), "M-blue-green")} == {"new"}


def test_joker_head_takes_any_middle_either_way_round():
    got = results(table(["RH"]), "M-red-blue")
    assert {c for _, c, _ in got} == {describe_chain(canonical(as_chain(["RH", "M-red-blue"]))),
                                      describe_chain(canonical(as_chain(["RH", "M-blue-red"])))}


def test_identical_chains_give_one_placement_each_way():
    tbl = table(["M-red-blue"], ["M-red-blue"])
    assert len([p for p in legal_placements(tbl, card("H-red")) if p.action == "extend"]) == 1


def test_placement_problems_only_count_what_the_new_card_breaks():
    old_fault = as_chain(["M-red-blue", "M-green-yellow", "M-yellow-red"])
    assert placement_problems(old_fault, 2) == []
    assert [p.code for p in placement_problems(old_fault, 1)] == ["colour_mismatch"]
    beyond = as_chain(["H-red", "M-red-blue", "T-blue", "M-blue-red"])
    assert [p.code for p in placement_problems(beyond, 3)] == ["closed_end"]


def test_completions_infer_the_only_card_that_fits():
    deck = load_deck()
    left = deck.remaining([card("RT")])
    chains = [as_chain(["H-red", "M-red-blue"])]
    (only,) = completions(chains, +left)
    assert only.card.code == "T-blue" and is_complete(only.snake)
    everything = +deck.remaining([])
    assert sorted(c.card.code for c in completions(chains, everything)) == ["RT", "T-blue"]


def test_lying_end_to_end_finds_the_most_chains_one_card_completes():
    deck = load_deck()
    available = +deck.remaining([card("RH"), card("RT")])
    tail, middle, other = (as_chain(["M-orange-red", "T-red"]), as_chain(["M-blue-orange"]),
                           as_chain(["M-green-blue", "M-blue-yellow"]))
    used, options = lying_end_to_end([middle, other, tail], available)
    assert used == (2, 0)    # the tail's piece first, then the middle that meets it
    assert [o.card.code for o in options] == ["H-blue"]
    assert is_complete(options[0].snake) and len(options[0].snake) == 4
    # chains whose ends do not meet, or that need two cards, are not one snake
    assert lying_end_to_end([tail, other], available) is None
    assert lying_end_to_end([middle, other], available) is None


def test_explain_vanished_pairs_chains_one_middle_joins():
    deck = load_deck()
    a, b = as_chain(["H-purple"]), as_chain(["M-red-green", "T-green"])
    groups = explain_vanished([b, a], +deck.remaining([]))
    assert len(groups) == 1 and len(groups[0][0]) == 2
    assert {deck.identity(o.card).code for o in groups[0][1]} == {"M-red-purple"}
    assert explain_vanished([as_chain(["M-red-blue"])], +deck.remaining([]))[0][1] == []
