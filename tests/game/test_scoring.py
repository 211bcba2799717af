from companion.game.scoring import rank_winners, score_piles


def snake(n):
    return ["H-red"] + ["M-red-red"] * (n - 2) + ["T-red"]  # only lengths count here


def test_total_cards_beat_the_longest_snake():
    # the FAQ: one seven-card snake beats two three-card snakes (six cards)...
    scores = score_piles({"A": [snake(7)], "B": [snake(3), snake(3)]})
    assert scores["A"] == {"cards": 7, "snakes": 1, "longest": 7}
    assert rank_winners(scores) == ["A"]
    # ...and more cards win even against a longer snake
    assert rank_winners(score_piles({"A": [snake(7)], "B": [snake(4), snake(4)]})) == ["B"]


def test_longest_snake_breaks_a_tie_in_cards():
    assert rank_winners(score_piles({"A": [snake(3), snake(5)], "B": [snake(4), snake(4)]})) == ["A"]


def test_equal_cards_and_longest_is_a_shared_win_in_player_order():
    scores = score_piles({"C": [snake(4)], "A": [snake(4)], "B": [snake(3)]})
    assert rank_winners(scores) == ["C", "A"]


def test_nobody_collected_anything():
    scores = score_piles({"A": [], "B": []})
    assert scores["A"] == {"cards": 0, "snakes": 0, "longest": 0}
    assert rank_winners(scores) == ["A", "B"]
    assert rank_winners({}) == []
