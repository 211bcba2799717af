"""Matching sightings to the cards already known (`match_sightings`), on hand-made tables."""
from __future__ import annotations

import numpy as np

from companion.game.cards import Card
from companion.game.deck import load_deck
from companion.track.identity import Track, match_sightings, same_cards_apart
from companion.track.reading import Reading, SeenCard

DECK = load_deck()
W, H = 56.0, 40.0      # a card along its chain, across it


def _corners(x, y):
    return ((x - W / 2, y - H / 2), (x + W / 2, y - H / 2), (x + W / 2, y + H / 2), (x - W / 2, y + H / 2))


def seen(index, code, x, y, confidence=1.0):
    card = Card.parse(code)
    ends = tuple((x + W / 4 * s, y) for s in ((-1, 1) if len(card.colours) == 2 else (1,)))
    return SeenCard(index, card, ends, _corners(x, y), confidence)


def track(ident, code, x, y, sightings=6):
    t = Track(ident, np.array([x, y]), H, np.array(_corners(x, y)))
    for _ in range(sightings):
        t.observe(seen(-1, code, x, y), DECK, 0)
    return t


def test_a_card_of_a_chain_carried_and_turned_round_goes_with_its_neighbours():
    # the chain is carried and laid back to front (its head missed there), and a card reading
    # like its second card lies near where that card was: the second card went with the
    # neighbours it is linked to, and the look-alike is a new card
    codes = ["H-purple", "M-purple-blue", "M-blue-green", "M-green-yellow", "M-yellow-red"]
    tracks = [track(k, code, 100 + 58 * k, 300) for k, code in enumerate(codes)]
    cards = tuple(seen(10 + k, codes[k], 527 - 58 * k, 323) for k in range(1, 5)) + \
        (seen(99, "M-blue-purple", 212, 303, confidence=0.95),)
    reading = Reading(cards, ((11, 12, 13, 14), (99,)))
    pairs = match_sightings(tracks, reading, DECK, [[0, 1, 2, 3, 4]])
    assert pairs == {11: 1, 12: 2, 13: 3, 14: 4}


def test_a_card_of_a_chain_that_stayed_does_not_take_a_look_alike_laid_beside_it():
    # M-purple-blue is missed; the card just laid after it reads the same and lies within a
    # card of where it lay, but the reading does not link it to M-purple-blue's neighbour
    tracks = [track(0, "H-purple", 100, 100), track(1, "M-purple-blue", 158, 100)]
    cards = (seen(10, "H-purple", 100, 100), seen(11, "M-blue-purple", 216, 100))
    reading = Reading(cards, ((10,), (11,)))
    assert match_sightings(tracks, reading, DECK, [[0, 1]]) == {10: 0}


def test_a_short_snake_squeezed_as_it_was_pushed_keeps_its_card_from_a_copy_laid_where_it_lay():
    # the two cards of a snake lay a little apart; pushed together along the table to make
    # room, and a copy of the middle laid where the middle lay.  Each card alone proposes
    # its own push (the tail the true one, the middle to stay on its copy), and the squeeze
    # lands neither on the other's; the true push brings the middle near a card read like
    # it, while staying put leaves the tail far from its own: the middle went with the tail
    tracks = [track(0, "T-yellow", 100, 100), track(1, "M-orange-yellow", 180, 100)]
    cards = (seen(10, "T-yellow", 30, 100), seen(11, "M-yellow-orange", 88, 100),
             seen(12, "M-orange-yellow", 180, 100))
    reading = Reading(cards, ((10, 11, 12),))
    assert match_sightings(tracks, reading, DECK, [[0, 1]]) == {10: 0, 11: 1}


def test_a_card_cut_off_from_its_neighbours_where_a_wrong_push_put_it_rejoins_them():
    # a long snake carried far (its second card missed), and a look-alike of one of its cards
    # left near that card's old place: the push that card alone proposes puts it on the
    # look-alike, cut off from its neighbours, while a card read like it lies linked between
    # them -- that is the card
    codes = ["T-orange", "M-orange-green", "M-green-blue", "M-blue-red", "M-red-yellow",
             "M-yellow-purple", "M-purple-red", "M-red-yellow", "M-yellow-blue"]
    tracks = [track(k, code, 100 + 58 * k, 300) for k, code in enumerate(codes)]
    cards = tuple(seen(10 + k, code, 100 + 58 * k - 198, 113) for k, code in enumerate(codes)
                  if k != 1) + (seen(99, "M-red-yellow", 480, 221, confidence=0.5),)
    reading = Reading(cards, ((10,), tuple(range(12, 19)), (99,)))
    pairs = match_sightings(tracks, reading, DECK, [list(range(9))])
    assert pairs == {10 + k: k for k in range(9) if k != 1}


def test_one_card_of_a_snake_gone_unseen_does_not_walk_onto_a_look_alike_elsewhere():
    # a snake of two is not seen at all (taken, or hidden), while a card reading like one of
    # its cards lies a few cards away: that card is not the snake's card walked off alone
    tracks = [track(0, "M-yellow-red", 100, 200), track(1, "M-green-yellow", 158, 200),
              track(10, "M-blue-green", 100, 420), track(11, "M-green-orange", 158, 420)]
    cards = (seen(50, "M-blue-green", 100, 420), seen(51, "M-green-orange", 158, 420),
             seen(90, "M-yellow-red", 275, 214))
    reading = Reading(cards, ((50, 51), (90,)))
    assert match_sightings(tracks, reading, DECK, [[0, 1], [10, 11]]) == {50: 10, 51: 11}


def test_a_card_lying_still_keeps_its_sighting_from_a_look_alike_of_a_snake_gone_unseen():
    # a snake of two is gone (collected) and nothing of it is seen; one of its cards reads
    # like a card of a snake that lies still nearby (another card of which is misread): that
    # card keeps its own sighting, the gone card is not pushed onto it
    tracks = [track(0, "T-red", 100, 200), track(1, "M-red-purple", 158, 200),
              track(10, "M-orange-blue", 100, 300), track(11, "M-red-purple", 158, 300),
              track(12, "M-purple-yellow", 216, 300)]
    cards = (seen(50, "M-orange-blue", 101, 302), seen(51, "M-red-purple", 160, 302),
             seen(52, "M-purple-green", 217, 301, confidence=0.6))   # read a little off, as always
    reading = Reading(cards, ((50, 51, 52),))
    for order in (tracks, tracks[::-1]):      # whichever card the matching weighs first
        assert match_sightings(order, reading, DECK, [[0, 1], [10, 11, 12]]) == \
            {50: 10, 51: 11, 52: 12}


def test_a_snake_carried_and_turned_round_is_found_by_the_turn_most_of_its_cards_agree_on():
    # the snake is turned round where it lay and laid back to front to make room for the card
    # just laid at its end, which is misread as a copy of one of the snake's cards; the
    # snake's second card is missed and its last misread: no push alone carries it there,
    # but one turn puts five of its seven cards on cards read like them
    codes = ["M-orange-yellow", "M-yellow-purple", "M-blue-purple", "M-red-blue", "M-red-yellow",
             "M-yellow-blue", "M-red-blue"]
    tracks = [track(k, code, 500 + 58 * k, 100) for k, code in enumerate(codes)]
    read = dict(enumerate(codes)) | {6: "M-red-orange"}
    cards = tuple(seen(10 + k, read[k], 800 - 58 * k, 160) for k in range(7) if k != 1) + \
        (seen(99, "M-yellow-blue", 858, 160),)
    reading = Reading(cards, ((99, 10), (12, 13, 14, 15, 16)))
    pairs = match_sightings(tracks, reading, DECK, [list(range(7))])
    assert pairs == {10 + k: k for k in range(7) if k != 1}


def test_a_short_snake_partly_missed_does_not_take_its_look_alikes_from_a_snake_lying_still():
    # a two-card snake reads like two cards in the middle of a long snake; its second card is
    # missed: looked for by its names, it must not take the long snake's cards, found whole
    # and linked where the long snake lay
    long_codes = ["T-purple", "M-purple-blue", "M-blue-yellow", "M-yellow-red", "M-red-green"]
    tracks = [track(k, code, 100 + 58 * k, 300) for k, code in enumerate(long_codes)] + \
        [track(10, "M-yellow-red", 500, 100), track(11, "M-blue-yellow", 442, 100)]
    cards = tuple(seen(20 + k, code, 100 + 58 * k, 300) for k, code in enumerate(long_codes)) + \
        (seen(30, "M-yellow-red", 500, 100),)
    reading = Reading(cards, (tuple(range(20, 25)), (30,)))
    pairs = match_sightings(tracks, reading, DECK, [list(range(5)), [11, 10]])
    assert pairs == {20 + k: k for k in range(5)} | {30: 10}


def test_a_snake_lying_still_with_two_cards_read_as_one_keeps_its_cards_where_they_lie():
    # two neighbours of a long snake are read as one card between them; the rest read as
    # they are where they lie, and two cards were just laid at its end.  One card along, the
    # snake reads like a run with three cards misread: the places, read right, win
    codes = ["T-purple", "M-orange-purple", "M-orange-blue", "M-green-blue", "M-orange-green",
             "M-red-orange", "M-red-yellow", "M-red-yellow", "M-red-purple"]
    tracks = [track(k, code, 100 + 58 * k, 300) for k, code in enumerate(codes)]
    cards = tuple(seen(20 + k, codes[k], 100 + 58 * k, 301) for k in (0, 1, 2, 3, 4, 7, 8)) + (
        seen(25, "M-orange-yellow", 100 + 58 * 5.5, 301, confidence=0.6),
        seen(29, "M-green-purple", 100 + 58 * 9, 301), seen(30, "M-yellow-green", 100 + 58 * 10, 301))
    reading = Reading(cards, ((20, 21, 22, 23, 24, 25, 27, 28, 29, 30),))
    pairs = match_sightings(tracks, reading, DECK, [list(range(9))])
    assert {i: t for i, t in pairs.items() if i != 25} == \
        {20 + k: k for k in (0, 1, 2, 3, 4, 7, 8)}
    assert pairs.get(25) in (None, 5, 6)


def test_a_card_first_seen_in_a_still_window_where_a_known_card_was_seen_is_that_card():
    # readings of one still table (seen id -> track): known card 1 at (100, 100) is seen in the
    # second picture, and new track 7 on its place in the first; 2 lies elsewhere
    tracks = {1: track(1, "M-red-green", 100, 100), 2: track(2, "T-blue", 300, 100),
              7: track(7, "M-red-yellow", 103, 101), 8: track(8, "H-red", 300, 300)}
    known = {1, 2}
    assert same_cards_apart([{0: 7, 1: 2, 2: 8}, {0: 1, 1: 2, 2: 8}], tracks, known) == {7: 1}
    # seen together with it, it is another card; a new card elsewhere is new
    assert same_cards_apart([{0: 7, 1: 1, 2: 8}, {0: 1, 1: 2, 2: 8}], tracks, known) == {}
    # two new tracks on the one place leave it in doubt
    tracks[9] = track(9, "M-red-green", 98, 99)
    assert same_cards_apart([{0: 7}, {0: 9}, {0: 1}], tracks, known) == {}


def test_a_reading_ranked_next_supports_its_code_in_proportion_and_survives_a_resume():
    from dataclasses import replace
    from companion.track.reading import ReadingError, parse_reading
    import pytest
    t = Track(0, np.array([100.0, 100.0]), H, np.array(_corners(100, 100)))
    sighting = replace(seen(0, "T-red", 100, 100, 0.6), alternatives=((Card.parse("T-orange"), 0.3),))
    t.observe(sighting, DECK, 0)
    t.observe(sighting, DECK, 1)
    assert t.identity == "T-red"                       # what was read first is what it is called
    assert t.support("T-orange") == pytest.approx(0.5 * t.support("T-red"))
    assert [code for code, _ in t.supported()] == ["T-red", "T-orange"]
    again = Track.from_dict(t.to_dict())
    assert again.supported() == t.supported()
    # its rivals: the readings of at least a share of the leader's support, the leader first
    assert [code for code, _ in t.rivals(0.5)] == ["T-red", "T-orange"]
    assert [code for code, _ in t.rivals(0.6)] == ["T-red"]
    # the analyser's "alternatives" become the sighting's
    data = {"cards": [{"id": 3, "kind": "tail", "colours": ["red"], "ends": [[1, 2]], "corners": [[0, 0]] * 4,
                       "confidence": 0.6, "alternatives": [{"colours": ["orange"], "confidence": 0.3}]}],
            "snakes": [{"cards": [3]}]}
    assert parse_reading(data).cards[0].alternatives == ((Card.parse("T-orange"), 0.3),)
    data["cards"][0]["alternatives"] = [{"colours": ["orange", "red"], "confidence": 0.3}]   # no such tail
    with pytest.raises(ReadingError):
        parse_reading(data)


def test_a_lone_card_carried_to_a_join_is_found_under_what_it_was_read_as_next():
    # a card laid alone, read once as M-green-purple with M-purple-yellow next, is carried to
    # join a snake and read there as M-purple-yellow: the same card, not a second one (a lone
    # card cannot leave the table on its own); a lone card the camera never read otherwise
    # stays where it was lost, and the look-alike is a new card
    from dataclasses import replace
    doubtful = Track(9, np.array([300.0, 400.0]), H, np.array(_corners(300, 400)))
    doubtful.observe(replace(seen(-1, "M-green-purple", 300, 400, 0.7),
                             alternatives=((Card.parse("M-purple-yellow"), 0.2),)), DECK, 0)
    tracks = [track(5, "M-red-green", 100, 100), doubtful]
    cards = (seen(10, "M-red-green", 100, 100), seen(11, "M-red-purple", 158, 100),
             seen(12, "M-purple-yellow", 216, 100))
    reading = Reading(cards, ((10, 11, 12),))
    assert match_sightings(tracks, reading, DECK, [[5], [9]]) == {10: 5, 12: 9}
    tracks[1] = track(9, "M-green-purple", 300, 400, sightings=1)
    assert match_sightings(tracks, reading, DECK, [[5], [9]]) == {10: 5}


def test_a_settled_card_is_matched_by_the_name_the_game_holds_it_as_not_by_a_hair_of_its_votes():
    # a lone middle was read as M-blue-red and as M-purple-red equally surely, and the game
    # settled it as M-purple-red (the rules' choice); its votes lean to M-blue-red by a hair.
    # Read M-purple-red where it lies, beside a true M-blue-red just laid within a card's
    # length: it keeps its place, and the M-blue-red is a new card
    middle = Track(7, np.array([100.0, 100.0]), H, np.array(_corners(100, 100)))
    middle.observe(seen(-1, "M-red-blue", 100, 100, confidence=1.0), DECK, 0)
    middle.observe(seen(-1, "M-red-purple", 100, 100, confidence=0.999), DECK, 1)
    assert middle.identity == "M-red-blue"
    cards = (seen(10, "M-purple-red", 100, 100), seen(11, "M-blue-red", 140, 130))
    reading = Reading(cards, ((10,), (11,)))
    # (by its votes alone, the look-alike takes it)
    assert match_sightings([middle], reading, DECK, [[7]]) == {11: 7}
    assert match_sightings([middle], reading, DECK, [[7]], names={7: "M-red-purple"}) == {10: 7}
