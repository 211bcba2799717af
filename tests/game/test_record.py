"""`--players` as the commands read it: two to five names, as the rules say."""
import pytest

from companion.game.record import RecordError, parse_players


@pytest.mark.parametrize("text", ["Ann", "A,B,C,D,E,F", "Ann,,Cy", ""])
def test_player_lists_outside_the_rules_are_refused(text):
    with pytest.raises(RecordError, match="two to five"):
        parse_players(text)


def test_two_to_five_names_are_the_turn_order():
    assert parse_players(" Ann, Ben ,Cy") == ("Ann", "Ben", "Cy")
    assert len(parse_players("A,B,C,D,E")) == 5
