"""A card turned on the table: where its colours pointed before says nothing now."""
from __future__ import annotations

import numpy as np

from companion.game.cards import Card
from companion.game.deck import load_deck
from companion.track.identity import Track
from companion.track.reading import SeenCard


def _seen(centre, red_to_the_left: bool) -> SeenCard:
    x, y = centre
    corners = ((x - 28, y - 20), (x + 28, y - 20), (x + 28, y + 20), (x - 28, y + 20))
    left, right = (x - 28, y), (x + 28, y)
    ends = (left, right) if red_to_the_left else (right, left)
    return SeenCard(0, Card.parse("M-red-blue"), ends, corners, 1.0)


def test_one_sighting_of_a_card_swung_round_end_for_end_says_where_its_colours_point():
    deck = load_deck()
    first = _seen((100.0, 100.0), red_to_the_left=True)
    track = Track(0, first.centre, first.size, np.asarray(first.corners, float))
    for frame in range(3):    # seen in a few settled tables, red end to the left
        track.observe(first, deck, frame)
    towards_left = np.array([-1.0, 0.0])
    assert track.oriented("M-red-blue", towards_left, None) == "M-red-blue"
    # its snake carried to make room and swung round: the red end now points right
    track.observe(_seen((300.0, 180.0), red_to_the_left=False), deck, 3)
    assert track.oriented("M-red-blue", towards_left, None) == "M-blue-red"


def test_a_card_nudged_keeps_what_its_sightings_said():
    deck = load_deck()
    first = _seen((100.0, 100.0), red_to_the_left=True)
    track = Track(0, first.centre, first.size, np.asarray(first.corners, float))
    for frame in range(3):
        track.observe(first, deck, frame)
    # a little push, and a reading that has the ends the wrong way round: outvoted
    track.observe(_seen((110.0, 104.0), red_to_the_left=False), deck, 3)
    assert track.oriented("M-red-blue", np.array([-1.0, 0.0]), None) == "M-red-blue"
