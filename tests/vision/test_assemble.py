"""Chains from geometry: which end touches which, in physical order, judged by the rules code."""
import numpy as np

from companion.game.cards import Card
from companion.vision.assemble import TableCard, assemble

W, H = 60.0, 90.0  # card short and long side, pixels


def lay(codes, start=(100.0, 100.0), angles=None, gap=0.0, first_id=0):
    """Cards laid end to end going right, each turned by angles[i] degrees from the last.

    A middle's first colour faces the previous card, as in a written chain.
    """
    angles = angles or [0.0] * len(codes)
    cards = []
    pos = np.array(start)
    heading = 0.0
    for i, code in enumerate(codes):
        heading += np.radians(angles[i])
        d = np.array([np.cos(heading), np.sin(heading)])
        back, front = pos, pos + d * H
        centre = (back + front) / 2
        card = Card.parse(code)
        if card.kind.value == "middle":
            ends = (tuple(back), tuple(front))
        elif i == 0:  # a chain's first end piece connects forwards
            ends = (tuple(front),)
        else:
            ends = (tuple(back),)
        cards.append(TableCard(first_id + i, card, ends, tuple(centre), W))
        pos = front + d * gap
    return cards


def codes_of(snake):
    return [c.code for c in snake.chain]


def test_complete_snake_read_in_order_with_gap_and_angle():
    cards = lay(["H-red", "M-red-blue", "M-blue-green", "T-green"], angles=[0, 25, -28, 20], gap=5.0)
    snakes, problems = assemble(cards)
    assert len(snakes) == 1 and problems == []
    assert codes_of(snakes[0]) == ["H-red", "M-red-blue", "M-blue-green", "T-green"]
    assert snakes[0].complete and snakes[0].cards == (0, 1, 2, 3)


def test_middle_turned_round_reads_colours_in_chain_order():
    cards = lay(["M-red-blue", "M-blue-green"])
    # the second card lies the other way round: its ends listed green first
    c = cards[1]
    cards[1] = TableCard(c.id, Card.parse("M-green-blue"), tuple(reversed(c.ends)), c.centre, W)
    snakes, problems = assemble(cards)
    assert problems == [] and len(snakes) == 1
    assert codes_of(snakes[0]) in (["M-red-blue", "M-blue-green"], ["M-green-blue", "M-blue-red"])


def test_colour_mismatch_is_a_problem_naming_both_cards():
    cards = lay(["H-red", "M-red-blue", "M-yellow-green"], first_id=10)
    snakes, problems = assemble(cards)
    assert len(snakes) == 1
    assert [p["code"] for p in problems] == ["colour_mismatch"]
    assert sorted(problems[0]["cards"]) == [11, 12]


def test_far_apart_cards_are_separate_chains_and_every_card_in_one():
    a = lay(["H-red", "M-red-blue"])
    b = lay(["M-green-yellow"], start=(100.0, 400.0), first_id=2)
    lone = lay(["T-purple"], start=(500.0, 400.0), first_id=3)
    snakes, _ = assemble(a + b + lone)
    ids = sorted(i for s in snakes for i in s.cards)
    assert ids == [0, 1, 2, 3] and len(snakes) == 3
    assert not any(s.complete for s in snakes)


def test_ends_that_do_not_face_each_other_do_not_join():
    # two middles side by side (long edges touching): their ends are close but point the same way
    a = TableCard(0, Card.parse("M-red-blue"), ((100.0, 100.0), (100.0, 190.0)), (100.0, 145.0), W)
    b = TableCard(1, Card.parse("M-red-blue"), ((160.0, 100.0), (160.0, 190.0)), (160.0, 145.0), W)
    snakes, _ = assemble([a, b])
    assert len(snakes) == 2


def test_head_and_tail_touching_is_reported():
    cards = lay(["H-red", "T-red"])
    snakes, problems = assemble(cards)
    assert len(snakes) == 1 and not snakes[0].complete
    assert problems and problems[0]["code"] != "colour_mismatch"


def test_a_card_laid_beyond_a_tail_lies_in_its_snake_and_is_reported():
    # the tail closes the snake; the last middle was laid against its far edge all the same
    cards = lay(["M-green-blue", "T-blue", "M-blue-yellow"], angles=[0, 15, -20], gap=4.0)
    snakes, problems = assemble(cards)
    assert len(snakes) == 1 and sorted(snakes[0].cards) == [0, 1, 2]
    assert [c.code for c in snakes[0].chain][1] == "T-blue"
    assert [p["code"] for p in problems] == ["closed_end"] and sorted(problems[0]["cards"]) == [0, 1, 2]


def test_a_card_laid_beyond_a_lone_head_is_read_after_it():
    head = lay(["H-red"])                       # its neck (connecting end) faces right, nothing there
    far_edge = head[0].centre[0] - (head[0].ends[0][0] - head[0].centre[0])
    beyond = lay(["M-red-blue"], start=(far_edge, 100.0), angles=[180], first_id=1)
    snakes, problems = assemble(head + beyond)
    assert len(snakes) == 1 and snakes[0].cards == (0, 1)
    assert [p["code"] for p in problems] == []   # a head then a middle: nothing inside the snake yet
    # a middle laid at its neck instead makes an ordinary snake; the far edge stays free
    neck = lay(["H-red", "M-red-blue"])
    assert [codes_of(s) for s in assemble(neck)[0]] == [["H-red", "M-red-blue"]]


def test_two_far_edges_touching_join_nothing():
    right = lay(["H-red"])                      # far edge at x=100, facing left
    left = [TableCard(1, Card.parse("T-blue"), ((10.0, 100.0),), (55.0, 100.0), W)]   # far edge at x=100
    snakes, problems = assemble(right + left)
    assert sorted(s.cards for s in snakes) == [(0,), (1,)] and problems == []
