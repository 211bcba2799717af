"""The rulebooks' examples and the FAQ's answers (shared/seeds/000_*.txt), one test each."""
from companion.game.cards import Card
from companion.game.chains import as_chain, check_chain, is_complete
from companion.game.deck import load_deck
from companion.game.referee import judge_record
from companion.game.rules import as_table, legal_placements, table_problems
from companion.game.scoring import rank_winners, score_piles


def judge(frames, players=("Ann", "Ben", "Cy"), finished=False):
    return judge_record({"players": list(players), "frames": [{"table": t} for t in frames],
                         "finished": finished})


def test_faq_head_and_tail_alone_are_not_a_snake():
    assert not is_complete(as_chain(["H-red", "T-red"]))
    (move,) = judge([[["H-red"]], [["H-red", "T-red"]]])["moves"]
    assert move["code"] == "head_tail_adjacent"


def test_faq_jokers_do_not_replace_a_middle_section():
    assert not is_complete(as_chain(["RH", "RT"]))
    assert not is_complete(as_chain(["RH", "T-blue"]))
    assert is_complete(as_chain(["RH", "M-green-blue", "T-blue"]))


def test_faq_anyone_may_complete_a_shared_snake_and_takes_all_of_it():
    result = judge([[["M-red-blue"]],
                    [["H-red", "M-red-blue"]],                     # Ann
                    [["H-red", "M-red-blue", "M-blue-green"]],     # Ben
                    [["H-red", "M-red-blue", "M-blue-green", "T-green"]],   # Cy completes
                    []])
    assert result["piles"] == {"Ann": [], "Ben": [],
                               "Cy": [["H-red", "M-red-blue", "M-blue-green", "T-green"]]}


def test_faq_snakes_may_not_be_pushed_together():
    (move,) = judge([[["H-red", "M-red-blue"], ["M-blue-green", "T-green"]],
                     [["H-red", "M-red-blue", "M-blue-green", "T-green"]]])["moves"]
    assert (move["legal"], move["code"]) == (False, "rearranged")


def test_faq_joining_needs_the_card_drawn_this_turn_matching_both_ends():
    ok = judge([[["H-red", "M-red-blue"], ["M-green-yellow", "T-yellow"]],
                [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow", "T-yellow"]]])
    (move,) = ok["moves"]
    assert (move["action"], move["legal"]) == ("complete", True)


def test_faq_total_cards_come_before_the_longest_snake():
    seven = ["H-red"] + ["M-red-orange"] * 5 + ["T-red"]
    three = ["H-red", "M-red-orange", "T-orange"]
    assert rank_winners(score_piles({"A": [seven], "B": [three, three]})) == ["A"]
    assert rank_winners(score_piles({"A": [seven], "B": [three, three, three]})) == ["B"]


def test_rule_a_closed_end_cannot_be_extended_on_that_side():
    table = as_table([["H-red", "M-red-blue"]])
    # red matches only the head's closed side, so the card fits nowhere and lies alone
    assert [p.action for p in legal_placements(table, Card.parse("M-red-green"))] == ["new"]
    assert [p.action for p in legal_placements(table, Card.parse("M-blue-green"))] == ["extend"]


def test_rule_a_snake_need_not_be_one_colour_nor_have_every_colour():
    assert is_complete(as_chain(["H-red", "M-red-blue", "M-blue-yellow", "T-yellow"]))
    assert is_complete(as_chain(["H-red", "M-red-orange", "T-orange"]))


def test_rule_a_joined_snake_still_incomplete_stays_and_may_not_be_taken():
    result = judge([[["M-red-blue"], ["M-green-yellow"]],
                    [["M-red-blue", "M-blue-green", "M-green-yellow"]],
                    []])
    join, taken = result["moves"]
    assert (join["action"], join["legal"]) == ("join", True)
    assert (taken["code"], taken["legal"]) == ("collected_incomplete", False)


def test_rule_the_card_may_be_turned_round_to_match():
    (p,) = legal_placements(as_table([["M-blue-green"]]), Card.parse("M-yellow-green"))
    assert p.card.code == "M-green-yellow"


def test_rule_the_player_with_the_last_card_may_still_complete_a_snake():
    result = judge([[["M-red-blue", "T-blue"]], [["H-red", "M-red-blue", "T-blue"]]],
                   players=("Ann", "Ben"), finished=True)
    assert result["scores"]["Ann"]["cards"] == 3 and result["winners"] == ["Ann"]


def test_static_table_problems_for_a_photo():
    deck = load_deck()
    table = [["H-red", "M-red-blue", "T-blue"], ["H-red"], ["M-blue-green", "M-yellow-orange"]]
    codes = sorted(p.code for _, p in table_problems(table, deck))
    assert codes == ["colour_mismatch", "deck_exceeded"]
    assert check_chain(as_chain(["M-blue-green", "M-yellow-orange"]))[0].cards == (0, 1)


def test_faq_an_old_middle_may_not_be_moved_between_two_snakes():
    (move,) = judge([[["H-red", "M-red-blue"], ["M-green-yellow", "T-yellow"], ["M-blue-green"]],
                     [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow", "T-yellow"]]])["moves"]
    assert (move["legal"], move["code"], move["action"]) == (False, "rearranged", "none")
    # the same table reached with a middle just drawn is a legal join that completes
    (move,) = judge([[["H-red", "M-red-blue"], ["M-green-yellow", "T-yellow"]],
                     [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow", "T-yellow"]]])["moves"]
    assert (move["legal"], move["action"]) == (True, "complete")


def test_moving_an_old_card_while_laying_the_new_one_is_rearranged():
    (move,) = judge([[["H-red", "M-red-blue"], ["M-blue-green"], ["M-green-yellow"]],
                     [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow"], ["M-purple-orange"]]]
                    )["moves"]
    assert (move["card"], move["legal"], move["code"]) == ("M-purple-orange", False, "rearranged")
