"""`companion bench --advisor`: the simulated games and the report."""
import json
from fractions import Fraction

import pytest

from companion.bench.advisor import Tally, bench_advisor, greedy_policy, play_game, random_policy
from companion.cli import main
from companion.game.deck import load_deck

DECK = load_deck()


def test_a_simulated_game_is_determined_by_its_seed():
    seats = [random_policy, greedy_policy, random_policy]
    first = play_game(DECK, seats, seed=7)
    assert first == play_game(DECK, seats, seed=7)
    scores, winners = first
    assert winners and set(winners) <= set(scores)
    assert 0 < sum(s["cards"] for s in scores.values()) <= DECK.size
    assert any(play_game(DECK, seats, seed=s) != first for s in (8, 9, 10))


def test_a_shared_win_counts_one_over_the_number_of_winners():
    tally = Tally()
    tally.add(Fraction(1, 2), False, 10)     # shared with one other player
    tally.add(Fraction(0), False, 4)
    tally.add(Fraction(1), True, 20)
    tally.add(Fraction(1, 3), False, 12)
    assert tally.wins == Fraction(11, 6) and tally.rate == pytest.approx(11 / 24)
    assert tally.outright == 1 and tally.to_json()["mean_cards"] == 11.5


def test_bench_report():
    report = bench_advisor(games=2, players=2, seed=5)
    assert report["baseline"] == 0.5 and "1/k" in report["shared_wins"]
    for tally in (report["advisor"], report["control"]):
        assert tally["games"] == 2 and 0 <= tally["win_rate"] <= 1
        assert tally["outright_wins"] <= round(tally["win_rate"] * 2 + 1e-9)
    edge = report["edge_over_control"]["win_rate"]
    assert edge == pytest.approx(report["advisor"]["win_rate"] - report["control"]["win_rate"], abs=1e-3)
    with pytest.raises(ValueError, match="--players"):
        bench_advisor(games=1, players=1, seed=1)


def test_bench_advisor_command(capsys):
    status = main(["bench", "--advisor", "--advisor-games", "2", "--players", "2", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    report = json.loads(out)
    assert report["advisor"]["games"] == 2 and report["players"] == 2 and report["baseline"] == 0.5


def test_games_is_the_tracker_bench_not_the_advisors_count(capsys):
    # --games alone follows rendered games; beside --advisor it would be ambiguous
    assert main(["bench", "--advisor", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--advisor-games" in err and "Traceback" not in err
    assert main(["bench", "--advisor", "--advisor-games", "0"]) == 2
    assert "--advisor-games must be at least 1" in capsys.readouterr().err
