import pytest

from companion.game.cards import Card, CardCodeError, Kind
from companion.game.deck import Deck, DeckError, load_deck


@pytest.mark.parametrize("code", ["H-red", "T-blue", "M-red-blue", "M-blue-red", "RH", "RT"])
def test_codes_round_trip(code):
    assert Card.parse(code).code == code


@pytest.mark.parametrize("code", ["", "H", "H-", "M-red", "M-red-", "X-red", "H-red-blue", "R", 3, None])
def test_malformed_codes_are_rejected(code):
    with pytest.raises(CardCodeError):
        Card.parse(code)


def test_a_middle_read_backwards_is_the_same_card():
    deck = load_deck()
    a, b = Card.parse("M-blue-red"), Card.parse("M-red-blue")
    assert a != b and a.flipped() == b
    assert deck.identity(a) == deck.identity(b) == Card.parse("M-red-blue")


def test_default_deck_matches_the_published_composition():
    deck = load_deck()
    kinds = deck.kinds()
    assert deck.size == 50
    assert kinds[Kind.HEAD] == kinds[Kind.TAIL] == 6
    assert kinds[Kind.MIDDLE] == 36
    assert kinds[Kind.RAINBOW_HEAD] == kinds[Kind.RAINBOW_TAIL] == 1
    for colour in deck.colours:
        ends = sum(n * card.colours.count(colour) for card, n in deck.counts.items()
                   if card.kind is Kind.MIDDLE)
        assert ends == 12, colour
    assert deck.count(Card.parse("M-orange-red")) == 3
    assert deck.count(Card.parse("M-red-green")) == 2
    assert len(deck.cards()) == 50


def test_deck_parse_rejects_cards_the_deck_lacks():
    deck = load_deck()
    with pytest.raises(DeckError):
        deck.parse("H-pink")
    with pytest.raises(DeckError):
        deck.parse("M-red-red")
    assert deck.parse("M-purple-red").kind is Kind.MIDDLE


def test_deck_round_trips_through_its_dict_form():
    deck = load_deck()
    again = Deck.from_dict(deck.to_dict())
    assert again.counts == deck.counts and again.colours == deck.colours


def test_bad_deck_files_give_clear_errors(tmp_path):
    bad = tmp_path / "deck.json"
    bad.write_text("{not json")
    with pytest.raises(DeckError, match="not valid JSON"):
        load_deck(bad)
    with pytest.raises(DeckError, match="colour"):
        Deck.from_dict({"colours": ["red"], "cards": {"H-blue": 1}})


@pytest.mark.parametrize("data, message", [
    ({"colours": ["red", "blue"], "cards": []}, "deck cards must map"),
    ({"colours": ["red", "blue"], "cards": "abc"}, "deck cards must map"),
    ({"colours": ["red", "blue"], "cards": {}}, "deck cards must map"),
    ({"colours": [[1], [2]], "cards": {"H-red": 1}}, "list of colour names"),
    ({"colours": "red", "cards": {"H-red": 1}}, "list of colour names"),
    ({"colours": ["red"], "cards": {"H-red": True}}, "whole number"),
    ({"colours": ["red"], "cards": {"H-red": 10**12}}, "whole number"),
])
def test_deck_data_of_the_wrong_shape_is_a_deck_error(data, message):
    with pytest.raises(DeckError, match=message):
        Deck.from_dict(data)


def test_a_deck_file_that_is_not_a_deck_says_which_file(tmp_path):
    binary, listed = tmp_path / "binary.json", tmp_path / "listed.json"
    binary.write_bytes(b"\xff\xfe{}")
    listed.write_text("[1, 2]")
    with pytest.raises(DeckError, match="binary.json is not text"):
        load_deck(binary)
    with pytest.raises(DeckError, match="listed.json: a deck is a JSON object"):
        load_deck(listed)
