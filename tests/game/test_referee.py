import pytest

from companion.game.cards import Card
from companion.game.referee import Move, RecordError, Referee, judge_record


def judge(frames, players=("Ann", "Ben", "Cy"), finished=False):
    return judge_record({"players": list(players), "frames": [{"table": t} for t in frames],
                         "finished": finished})


def verdicts(result):
    return [(m["frame"], m["turn"], m["player"], m["card"], m["action"], m["legal"], m["code"])
            for m in result["moves"]]


def test_contract_example_is_legal_and_takes_turns_in_order():
    result = judge([[["M-blue-green"]],
                    [["M-blue-green", "M-green-yellow"]],
                    [["M-blue-green", "M-green-yellow"], ["H-purple"]]])
    assert verdicts(result) == [
        (1, 1, "Ann", "M-green-yellow", "extend", True, None),
        (2, 2, "Ben", "H-purple", "new", True, None)]
    assert all(m["reason"] for m in result["moves"])
    assert result["piles"] == {"Ann": [], "Ben": [], "Cy": []}
    assert result["winners"] == ["Ann", "Ben", "Cy"]


def test_listing_order_and_direction_do_not_matter():
    a = judge([[["M-blue-green"], ["H-red"]],
               [["M-blue-green", "M-green-yellow"], ["H-red"]]])
    b = judge([[["H-red"], ["M-green-blue"]],
               [["H-red"], ["M-yellow-green", "M-green-blue"]]])
    assert [m["action"] for m in a["moves"]] == [m["action"] for m in b["moves"]] == ["extend"]
    assert a["moves"][0]["legal"] and b["moves"][0]["legal"]


def test_completer_collects_even_when_taken_a_turn_late():
    result = judge([[["H-red", "M-red-blue"]],
                    [["H-red", "M-red-blue", "T-blue"]],            # Ann completes
                    [["H-red", "M-red-blue", "T-blue"], ["M-green-yellow"]],   # still lying there
                    [["M-green-yellow", "M-yellow-orange"]]],       # Cy plays; snake gone now
                   finished=False)
    assert verdicts(result) == [
        (1, 1, "Ann", "T-blue", "complete", True, None),
        (2, 2, "Ben", "M-green-yellow", "new", True, None),
        (3, 1, "Ann", None, "collect", True, None),
        (3, 3, "Cy", "M-yellow-orange", "extend", True, None)]
    assert result["moves"][2]["collected"] == {"player": "Ann", "cards": 3}
    assert result["scores"]["Ann"] == {"cards": 3, "snakes": 1, "longest": 3}


def test_completed_and_taken_unseen_infers_the_only_possible_card():
    result = judge([[["RT"]],
                    [["RT"], ["H-red"]],
                    [["RT"], ["H-red", "M-red-blue"]],
                    [["RT"]]])                      # Cy completed with T-blue and took it at once
    last = result["moves"][-1]
    assert (last["player"], last["card"], last["action"], last["legal"]) == ("Cy", "T-blue", "complete", True)
    assert last["collected"] == {"player": "Cy", "cards": 3}
    assert result["piles"]["Cy"] == [["H-red", "M-red-blue", "T-blue"]]


def test_completed_and_taken_unseen_is_flagged_when_several_cards_could_have_done_it():
    result = judge([[["H-red"]], [["H-red", "M-red-blue"]], []])
    last = result["moves"][-1]
    assert (last["legal"], last["code"], last["player"]) == (False, "completion_unseen", "Ben")
    assert "T-blue" in last["reason"] and "RT" in last["reason"]
    assert result["scores"]["Ben"]["cards"] == 3


def test_unseen_join_completion_is_inferred_from_both_snakes():
    result = judge([[["H-purple"]],
                    [["H-purple"], ["M-red-green"]],
                    [["H-purple"], ["M-red-green", "T-green"]],
                    []])
    last = result["moves"][-1]
    assert Card.parse(last["card"]).identity() == Card.parse("M-purple-red").identity()
    assert last["collected"] == {"player": "Cy", "cards": 4}


def test_chains_lying_end_to_end_taken_at_once_were_one_snake_completed_unseen():
    # [M-red-orange T-orange] and [M-blue-red] face each other red to red; both vanish at
    # once.  H-red could have completed the first alone, leaving the second taken
    # incomplete (a foul); lying end to end, H-blue completes both in one turn, which
    # needs no foul and no second turn unseen
    result = judge([[["RH", "M-green-yellow"], ["M-blue-red"], ["T-orange"]],
                    [["RH", "M-green-yellow"], ["M-blue-red"], ["M-red-orange", "T-orange"]],
                    [["RH", "M-green-yellow"]]])
    assert [(m["player"], m["card"], m["action"], m["legal"]) for m in result["moves"][1:]] == \
        [("Ben", "H-blue", "complete", True)]
    assert result["piles"]["Ben"] == [["H-blue", "M-blue-red", "M-red-orange", "T-orange"]]


def test_taking_an_incomplete_snake_is_illegal():
    result = judge([[["M-red-blue"]], [["M-red-blue", "M-blue-green"]], []])
    last = result["moves"][-1]
    assert (last["action"], last["legal"], last["code"]) == ("collect", False, "collected_incomplete")
    assert result["piles"]["Ann"] == []


@pytest.mark.parametrize("before, after, code, action", [
    ([["M-red-blue"]], [["M-red-blue", "M-green-yellow"]], "colour_mismatch", "extend"),
    ([["H-red", "M-red-blue"]], [["M-yellow-red", "H-red", "M-red-blue"]], "closed_end", "extend"),
    ([["H-red", "M-red-blue"]], [["H-red", "M-red-blue", "H-blue"]], "two_heads", "extend"),
    ([["M-red-blue", "T-blue"]], [["RT", "M-red-blue", "T-blue"]], "two_tails", "extend"),
    ([["T-red"]], [["H-red", "T-red"]], "head_tail_adjacent", "extend"),
    ([["M-red-blue"]], [["M-red-blue"], ["M-blue-green"]], "could_attach", "new"),
    ([["M-red-blue"]], [["M-red-blue"], ["H-green"], ["H-yellow"]], "two_cards", "new"),
    ([["M-red-blue"], ["M-blue-green"]], [["M-red-blue", "M-blue-green"]], "rearranged", "none"),
    ([["M-red-blue", "M-blue-green"]], [["M-red-blue"]], "card_removed", "none"),
    ([["H-red"], ["M-red-blue"]], [["H-red"], ["M-red-blue"], ["H-red"]], "deck_exceeded", "new"),
    ([["M-red-blue"], ["M-orange-yellow"]], [["M-red-blue", "M-blue-orange", "M-orange-yellow"]], None, "join"),
    ([["M-red-blue"], ["M-orange-yellow"]], [["M-red-blue", "M-blue-green", "M-orange-yellow"]],
     "colour_mismatch", "join"),
])
def test_each_illegal_move_has_its_stable_code(before, after, code, action):
    result = judge([before, after])
    (move,) = result["moves"]
    assert move["code"] == code and move["action"] == action
    assert move["legal"] is (code is None)
    assert move["reason"].endswith(".")


def test_an_illegal_move_stands_and_play_goes_on():
    result = judge([[["M-red-blue"]],
                    [["M-red-blue", "M-green-yellow"]],            # Ann: mismatch
                    [["M-red-blue", "M-green-yellow", "M-yellow-orange"]]])   # Ben: legal on it
    assert [(m["player"], m["legal"]) for m in result["moves"]] == [("Ann", False), ("Ben", True)]


def test_nothing_changed_is_no_move():
    assert judge([[["H-red"]], [["H-red"]], [["H-red"]]])["moves"] == []


def test_the_last_card_may_complete_and_finish_collects_for_the_completer():
    result = judge([[["H-red", "M-red-blue"]], [["H-red", "M-red-blue", "T-blue"]]],
                   players=("Ann", "Ben"), finished=True)
    assert [m["action"] for m in result["moves"]] == ["complete", "collect"]
    assert result["moves"][1]["frame"] == 1 and result["moves"][1]["collected"]["player"] == "Ann"
    assert result["winners"] == ["Ann"]


def test_referee_is_incremental_and_moves_serialise_to_the_contract():
    ref = Referee(["Ann", "Ben"])
    assert ref.observe([["H-red"]]) == []
    (move,) = ref.observe([["H-red", "M-red-blue"]])
    assert isinstance(move, Move)
    assert set(move.to_json()) == {"frame", "turn", "player", "card", "action", "legal", "code",
                                   "reason", "collected"}
    assert ref.next_player == "Ben"
    assert ref.undrawn() == 48
    assert set(ref.to_json()) == {"moves", "piles", "scores", "winners"}


@pytest.mark.parametrize("record, message", [
    ({"frames": []}, "missing field 'players'"),
    ({"players": ["A", "B"]}, "missing field 'frames'"),
    ({"players": [], "frames": [{"table": []}]}, "players"),
    ({"players": ["A", "A"], "frames": [{"table": []}]}, "different"),
    ({"players": ["Solo"], "frames": [{"table": []}]}, "1 player.*2-5 players"),
    ({"players": ["A", "B", "C", "D", "E", "F"], "frames": [{"table": []}]}, "6 player.*2-5 players"),
    ({"players": ["A", "B"], "frames": [{"table": []}, {}]}, "frame 1: missing field 'table'"),
    ({"players": ["A", "B"], "frames": [{"table": [["X-red"]]}]}, "frame 0: chain 0, card 0: not a card code"),
    ({"players": ["A", "B"], "frames": [{"table": []}, {"table": [["M-red-red"]]}]}, "frame 1"),
    ({"players": ["A", "B"], "frames": [{"table": "H-red"}]}, "frame 0"),
    ({"players": ["A", "B"], "frames": [{"table": []}], "finished": "yes"}, "finished"),
    ([], "JSON object"),
])
def test_malformed_records_raise_value_errors_naming_the_frame(record, message):
    with pytest.raises(RecordError, match=message):
        judge_record(record)
    assert issubclass(RecordError, ValueError)


def test_an_empty_table_before_the_starter_is_not_a_turn():
    result = judge([[], [["H-red"]], [["H-red", "M-red-blue"]]])
    assert verdicts(result) == [(2, 1, "Ann", "M-red-blue", "extend", True, None)]


def test_frame_numbers_come_from_the_caller():
    ref = Referee(["Ann", "Ben"])
    ref.observe([["H-red"]], frame=100)
    (move,) = ref.observe([["H-red", "M-red-blue"]], frame=130)
    assert move.frame == 130 and ref.frame == 130


def test_after_finish_the_game_takes_no_more_tables():
    ref = Referee(["Ann"])
    ref.observe([["H-red"]])
    assert ref.finish() == [] and ref.finish() == []
    with pytest.raises(RecordError, match="over"):
        ref.observe([["H-red", "M-red-blue"]])


def test_two_snakes_taken_in_one_frame_each_go_to_their_completer():
    result = judge([[["H-red", "M-red-blue"], ["H-green", "M-green-yellow"]],
                    [["H-red", "M-red-blue", "T-blue"], ["H-green", "M-green-yellow"]],          # Ann
                    [["H-red", "M-red-blue", "T-blue"], ["H-green", "M-green-yellow", "T-yellow"]],  # Ben
                    []])
    collects = [m for m in result["moves"] if m["action"] == "collect"]
    # several collections in one frame are listed in a fixed order (by the snakes' codes)
    assert [(m["player"], m["turn"], m["collected"]["cards"]) for m in collects] == \
           [("Ben", 2, 3), ("Ann", 1, 3)]
    assert all(m["legal"] and m["frame"] == 3 for m in collects)
    assert result["scores"]["Ann"]["cards"] == result["scores"]["Ben"]["cards"] == 3


def test_a_late_collection_and_an_unseen_completion_in_one_frame():
    result = judge([[["RT"], ["H-green", "M-green-yellow"]],
                    [["RT"], ["H-green", "M-green-yellow", "T-yellow"]],           # Ann completes
                    [["RT"], ["H-green", "M-green-yellow", "T-yellow"], ["H-red"]],  # Ben
                    [["RT"], ["H-green", "M-green-yellow", "T-yellow"], ["H-red", "M-red-blue"]],  # Cy
                    [["RT"]]])     # Ann's snake taken late; Ann laid T-blue and took hers unseen
    last = [m for m in result["moves"] if m["frame"] == 4]
    assert [(m["player"], m["action"], m["card"], m["legal"]) for m in last] == [
        ("Ann", "collect", None, True), ("Ann", "complete", "T-blue", True)]
    assert result["scores"]["Ann"] == {"cards": 6, "snakes": 2, "longest": 3}


def test_a_card_beyond_the_decks_count_is_flagged_even_when_it_fits():
    result = judge([[["H-red"]], [["H-red", "M-red-blue"]], [["H-red", "M-red-blue"], ["H-red"]]])
    assert result["moves"][-1]["code"] == "deck_exceeded"


def test_laying_against_a_complete_snake_is_a_closed_end_not_a_collection():
    result = judge([[["H-red", "M-red-blue"]],
                    [["H-red", "M-red-blue", "T-blue"]],
                    [["H-red", "M-red-blue", "T-blue", "M-blue-green"]]])
    assert result["moves"][-1]["code"] == "closed_end"


def test_a_snake_completed_unseen_in_the_same_frame_as_the_next_card():
    result = judge([[["RT"], ["M-yellow-orange"]],
                    [["RT"], ["M-yellow-orange"], ["H-red"]],            # Ann
                    [["RT"], ["M-yellow-orange"], ["H-red", "M-red-blue"]],  # Ben
                    [["RT"], ["M-yellow-orange", "M-orange-green"]]])   # Cy: T-blue, taken; Ann lays
    last = [m for m in result["moves"] if m["frame"] == 3]
    assert [(m["turn"], m["player"], m["card"], m["action"], m["legal"]) for m in last] == [
        (3, "Cy", "T-blue", "complete", True), (4, "Ann", "M-orange-green", "extend", True)]
    assert "same frame" in last[0]["reason"]
    assert result["scores"]["Cy"]["cards"] == 3


def test_an_incomplete_snake_grabbed_while_laying_a_card_is_charged_to_the_layer():
    result = judge([[["M-red-blue"], ["M-yellow-orange"]],
                    [["M-yellow-orange", "M-orange-green"]]])
    grab, lay = result["moves"]
    assert (grab["player"], grab["code"], lay["player"], lay["legal"]) == \
           ("Ann", "collected_incomplete", "Ann", True)


def test_a_card_laid_alone_after_an_unseen_completion_is_judged_on_the_table_it_met():
    # M-orange-green could have gone on the green end of [M-green-blue RH], but that snake
    # was completed with T-green (RT lies in a finished snake) and taken before it was laid.
    finished = ["H-red", "M-red-purple", "RT"]
    result = judge([[["H-yellow"], ["M-green-blue", "RH"], finished],
                    [["H-yellow"], ["M-orange-green"], finished]],
                   players=("Ann", "Ben"))
    done, laid = result["moves"]
    assert (done["card"], done["player"], done["legal"]) == ("T-green", "Ann", True)
    assert (laid["player"], laid["action"], laid["legal"]) == ("Ben", "new", True)
