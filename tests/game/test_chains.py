import pytest

from companion.game.chains import (as_chain, canonical, check_chain, is_closed, is_complete,
                                   open_ends, reverse_chain, same_chain, table_multiset)


def chain(*codes):
    return as_chain(codes)


def test_a_chain_read_backwards_is_the_same_chain():
    a = chain("H-red", "M-red-blue", "T-blue")
    b = chain("T-blue", "M-blue-red", "H-red")
    assert reverse_chain(a) == b
    assert same_chain(a, b) and canonical(a) == canonical(b)
    assert not same_chain(a, chain("H-red", "M-red-blue"))


def test_table_multiset_ignores_order_and_direction_but_counts_copies():
    x, y = chain("M-red-blue"), chain("H-green", "M-green-blue")
    assert table_multiset([x, y]) == table_multiset([reverse_chain(y), x])
    assert table_multiset([x, x]) != table_multiset([x])


def test_open_ends_of_lone_cards_and_chains():
    assert [(e.side, e.colour) for e in open_ends(chain("M-red-blue"))] == [(0, "red"), (1, "blue")]
    assert [(e.side, e.colour) for e in open_ends(chain("H-red"))] == [(1, "red")]
    assert [(e.side, e.colour) for e in open_ends(chain("T-red"))] == [(0, "red")]
    assert [(e.side, e.colour) for e in open_ends(chain("RH"))] == [(1, None)]
    assert [(e.side, e.colour) for e in open_ends(chain("H-red", "M-red-blue"))] == [(1, "blue")]
    assert open_ends(chain("H-red", "M-red-blue", "T-blue")) == []
    assert is_closed(chain("H-red", "M-red-blue", "T-blue"))


@pytest.mark.parametrize("codes", [
    ("H-red", "M-red-blue", "T-blue"),
    ("T-blue", "M-blue-red", "H-red"),
    ("RH", "M-red-blue", "RT"),
    ("H-green", "M-green-green".replace("M-green-green", "M-green-blue"), "M-blue-purple", "RT"),
])
def test_complete_snakes(codes):
    assert is_complete(chain(*codes))
    assert check_chain(chain(*codes)) == []


@pytest.mark.parametrize("codes", [
    ("H-red", "T-red"),                       # head and tail alone are not a snake
    ("RH", "RT"),                              # jokers never replace a middle
    ("H-red", "M-red-blue"),                   # still open
    ("M-red-blue",),
    ("H-red", "M-red-blue", "T-green"),       # colours must match
    ("H-red", "M-red-blue", "H-blue"),        # two heads
])
def test_incomplete_snakes(codes):
    assert not is_complete(chain(*codes))


@pytest.mark.parametrize("codes, code, cards", [
    (("M-red-blue", "M-green-yellow"), "colour_mismatch", (0, 1)),
    (("H-red", "M-blue-red"), "colour_mismatch", (0, 1)),
    (("H-red", "T-red"), "head_tail_adjacent", (0, 1)),
    (("RH", "RT"), "head_tail_adjacent", (0, 1)),
    (("H-red", "M-red-blue", "H-blue"), "two_heads", (0, 2)),
    (("T-red", "M-red-blue", "RT"), "two_tails", (0, 2)),
    (("M-blue-red", "H-red", "M-red-blue"), "closed_end", (0, 1, 2)),
])
def test_check_chain_names_each_problem(codes, code, cards):
    problems = check_chain(chain(*codes))
    assert [p.code for p in problems] == [code]
    assert problems[0].cards == cards
    assert problems[0].message.endswith(".")
    assert problems[0].to_json()["code"] == code


def test_jokers_match_any_middle_colour():
    for colour in ("red", "orange", "purple"):
        assert check_chain(chain("RH", f"M-{colour}-blue")) == []
        assert check_chain(chain(f"M-blue-{colour}", "RT")) == []
