"""No more copies of a card read on the table than the deck holds."""
from dataclasses import replace

import pytest

from companion.game.deck import load_deck
from companion.vision.deck_counts import within_the_deck

from .test_recognise import _middle

COLOURS = ["red", "orange", "yellow", "green", "blue", "purple"]


def _tail(probs, confidence):
    reading = _middle(probs, probs, COLOURS, confidence=confidence, kind="tail")
    return replace(reading, colours=reading.colours[:1], ends=reading.ends[:1],
                   colour_probs=reading.colour_probs[:1], edge_order=(0,))


@pytest.fixture(scope="module")
def deck():
    return load_deck()


def test_the_less_sure_of_two_red_tails_is_its_likeliest_colour_the_deck_still_holds(deck):
    sure = _tail([0.98, 0.01, 0.0, 0.0, 0.0, 0.01], 0.98)
    unsure = _tail([0.56, 0.40, 0.0, 0.0, 0.0, 0.04], 0.56)
    got = within_the_deck([unsure, sure], deck, COLOURS)
    assert got[1] is sure
    assert got[0].colours == ["orange"]
    assert got[0].confidence == pytest.approx(0.56 * 0.40 / 0.56, abs=1e-3)
    # red is no longer the likelier: the deck's one red tail is the sure one
    assert ("red",) not in [a[0] for a in got[0].alternatives]
    assert all(p <= got[0].confidence for _, p in got[0].alternatives)


def test_the_colouring_taken_is_one_the_deck_has_a_copy_of_left(deck):
    red = _tail([0.98, 0.01, 0.0, 0.0, 0.0, 0.01], 0.98)
    orange = _tail([0.01, 0.97, 0.01, 0.0, 0.0, 0.01], 0.97)
    unsure = _tail([0.5, 0.3, 0.0, 0.0, 0.0, 0.2], 0.5)
    assert within_the_deck([red, orange, unsure], deck, COLOURS)[2].colours == ["purple"]


def test_a_reading_with_no_likely_colouring_left_keeps_what_it_was_read_as(deck):
    # perhaps a card of another deck: the tracker flags the copy too many
    sure = _tail([0.98, 0.01, 0.0, 0.0, 0.0, 0.01], 0.98)
    also = _tail([0.97, 0.01, 0.0, 0.0, 0.0, 0.02], 0.97)
    assert within_the_deck([sure, also], deck, COLOURS) == [sure, also]


def test_copies_the_deck_holds_are_all_kept(deck):
    # the deck holds red-orange middles three times
    middles = [_middle([0.9, 0.1, 0, 0, 0, 0], [0.1, 0.9, 0, 0, 0, 0], COLOURS, confidence=c)
               for c in (0.9, 0.8, 0.7)]
    fourth = _middle([0.6, 0.0, 0.4, 0, 0, 0], [0.1, 0.9, 0, 0, 0, 0], COLOURS, confidence=0.5)
    got = within_the_deck(middles + [fourth], deck, COLOURS)
    assert got[:3] == middles
    assert got[3].colours == ["yellow", "orange"]
    # the same card turned round is the same card: no copy of it left either
    turned = _middle([0.1, 0.9, 0, 0, 0, 0], [0.6, 0.0, 0.4, 0, 0, 0], COLOURS, confidence=0.5)
    assert within_the_deck(middles + [turned], deck, COLOURS)[3].colours == ["orange", "yellow"]


def test_on_a_rendered_table_no_card_is_read_more_often_than_the_deck_holds(monkeypatch, analyzer, deck,
                                                                           development_table):
    # a hard table where one end of an orange-purple middle reads red, a fourth purple-red
    # of the three the deck holds: the deck's count makes it another colouring (a fourth
    # blue-purple, with no likely colouring left, stays as read)
    from collections import Counter

    import companion.vision.analyze as analyze
    from companion.vision.extend import card_of
    scene, image, _ = development_table(11, "hard", 7)

    def over_the_deck():
        copies = Counter(deck.identity(c) for c in map(card_of, analyzer.read(image)) if c is not None)
        return {c.code for c, n in copies.items() if n > deck.count(c)}
    assert "M-red-purple" not in over_the_deck()
    monkeypatch.setattr(analyze, "within_the_deck", lambda readings, deck, colours: readings)
    assert "M-red-purple" in over_the_deck()
