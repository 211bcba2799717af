"""`companion advise` from the outside."""
import json
from pathlib import Path

import pytest

from companion.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_images" / "sample_game.json"
STATE = {"players": ["Ann", "Ben"],
         "table": [["H-red", "M-red-blue"], ["M-blue-green", "T-green"], ["M-yellow-purple"]],
         "piles": {"Ann": [["H-blue", "M-blue-orange", "T-orange"]]}}


def run(capsys, tmp_path, state, *argv):
    f = tmp_path / "state.json"
    f.write_text(state if isinstance(state, str) else json.dumps(state))
    status = main(["advise", str(f), *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_advice_for_a_card_ranks_every_placement(capsys, tmp_path):
    status, out, err = run(capsys, tmp_path, STATE, "--card", "RT", "--json")
    assert status == 0 and err == ""
    result = json.loads(out)
    assert result["card"] == "RT"
    assert result["draw_pile"]["cards_left"] == 50 - 8 - 1
    top = result["placements"][0]
    assert top["rank"] == 1 and top["action"] == "complete" and top["collects"] == 3
    assert top["result"] == ["H-red", "M-red-blue", "RT"]
    assert [h["key"] for h in result["hints"]][0] == "complete"


def test_outlook_without_a_card(capsys, tmp_path):
    status, out, _ = run(capsys, tmp_path, STATE, "--json", "--lang", "fr")
    assert status == 0
    result = json.loads(out)
    pile = result["draw_pile"]
    assert pile["cards_left"] == 42 == sum(pile["cards"].values())
    assert pile["by_colour"]["blue"] == {"heads": 0, "tails": 1, "middles": 9}
    snakes = {s["chain"]: s for s in result["snakes"]}
    assert snakes[0]["completed_by"] == {"RT": 1, "T-blue": 1}
    assert snakes[1]["completed_by"] == {"RH": 1}         # H-blue is in Ann's pile
    assert snakes[1]["badge"] == "peut être complété par 1 carte restante"
    assert {d["card"] for d in result["next_draws"]} == set(pile["cards"])
    assert "Qui pioche la queue arc-en-ciel termine un serpent !" in [h["text"] for h in result["hints"]]


def test_readable_outlook(capsys, tmp_path):
    status, out, _ = run(capsys, tmp_path, STATE)
    assert status == 0
    assert "42 cards left to draw" in out
    assert "snake 0 [H-red M-red-blue]: can be completed by 2 cards left (RT x1, T-blue x1)" in out


def test_a_judge_record_is_a_state(capsys):
    assert main(["judge", str(SAMPLE), "--json"]) == 0
    judged = json.loads(capsys.readouterr()[0])
    assert main(["advise", str(SAMPLE), "--json"]) == 0
    advised = json.loads(capsys.readouterr()[0])
    record = json.loads(SAMPLE.read_text())
    on_table = sum(len(c) for c in record["frames"][-1]["table"])
    collected = sum(s["cards"] for s in judged["scores"].values())
    assert collected > 0
    assert advised["draw_pile"]["cards_left"] == 50 - on_table - collected


def test_a_small_deck_file(capsys, tmp_path):
    deck = tmp_path / "deck.json"
    deck.write_text(json.dumps({"colours": ["red", "blue"], "cards": {
        "H-red": 1, "T-blue": 1, "M-red-blue": 3, "RT": 1}}))
    state = {"table": [["H-red"]]}
    status, out, err = run(capsys, tmp_path, state, "--deck", str(deck), "--card", "M-red-blue",
                           "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["draw_pile"]["cards"] == {"M-red-blue": 2, "RT": 1, "T-blue": 1}
    # [H-red M-red-blue] is left: T-blue or RT finishes it, 2 of the 4 cards left
    assert result["placements"][0]["gives_away"]["chance"] == "1/2"


def test_a_profile_with_a_deck_composition(capsys, tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"card_aspect": 1.4, "deck": {"colours": ["red", "blue"], "cards": {
        "H-red": 1, "T-blue": 1, "M-red-blue": 2}}}))
    status, out, err = run(capsys, tmp_path, {"table": [["H-red"]]}, "--profile", str(profile),
                           "--json")
    assert status == 0, err
    assert json.loads(out)["draw_pile"]["cards_left"] == 3


def test_a_json_file_that_is_no_profile_nor_deck_is_refused(capsys, tmp_path):
    record = tmp_path / "game.json"
    record.write_text(json.dumps({"players": ["Ann", "Ben"], "frames": [{"table": [["H-red"]]}]}))
    status, out, err = run(capsys, tmp_path, {"table": [["H-red"]]}, "--profile", str(record))
    assert status == 2 and out == ""
    assert "game.json: not a calibration profile" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("state, argv, message", [
    ("{not json", (), "is not valid JSON"),
    ("[" * 100_000, (), "nested too deeply"),
    ([["H-red"]], (), "STATE must be a JSON object"),
    ({"piles": {}}, (), "STATE needs a 'table'"),
    ({"table": [["H-red", "X-1"]]}, (), "table: chain 0, card 1: not a card code"),
    ({"table": [["H-red", "T-red"]]}, (), "the table breaks a rule (chain 0)"),
    ({"table": [["H-red"]], "piles": {"A": [["H-red"]]}}, (), "H-red is seen 2 times"),
    ({"table": [["H-red"]]}, ("--card", "H-red"), "H-red is seen 2 times"),
    ({"table": [["H-red"]]}, ("--card", "M-red-red"), "--card: 'M-red-red' is not a card of this deck"),
    ({"table": [["H-red"]], "players": ["A"], "piles": {"B": []}}, (), "'piles' names 'B'"),
    ({"table": [["H-red"]]}, ("--deck", "/no/such/deck.json"), "cannot read deck file"),
    ({"table": [["H-red"]]}, ("--lang", "de"), "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, state, argv, message):
    status, out, err = run(capsys, tmp_path, state, *argv)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert message in err


def test_deck_and_profile_together_are_refused(capsys, tmp_path):
    status, _, err = run(capsys, tmp_path, {"table": []}, "--deck", "a.json", "--profile", "b.json")
    assert status == 2 and "not both" in err
