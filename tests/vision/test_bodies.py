"""Cards whose paper the table hides, found by their snake's body (`companion.vision.bodies`)."""
import cv2
import numpy as np
import pytest

from companion.game.cards import Card
from companion.game.deck import load_deck
from companion.vision.bodies import INK_LONG_SIDE, body_guesses, ink_map

WHITE = (250, 250, 250)


def _band(image: np.ndarray, centre, length: float, width: float, degrees: float, colour) -> None:
    box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (length, width), degrees))
    cv2.fillPoly(image, [np.int32(np.round(box))], colour)


def _axis(outline) -> np.ndarray:
    c = outline.corners
    sides = [c[1] - c[0], c[2] - c[1]]
    long = max(sides, key=lambda v: np.hypot(*v))
    return long / np.hypot(*long)


def test_ink_is_the_body_not_the_white_paper_on_a_white_table():
    image = np.full((300, 400, 3), WHITE, np.uint8)
    _band(image, (200, 150), 90, 20, 0, (40, 60, 200))     # a red body; its paper is the table's white
    ink, scale = ink_map(image)
    assert scale == 1.0
    assert ink[150, 200] and ink[150, 160]
    assert not ink[150, 260] and not ink[120, 200] and not ink[20, 20]


def test_ink_is_looked_for_in_a_bounded_copy_of_a_big_picture():
    image = np.full((1500, 2 * INK_LONG_SIDE, 3), WHITE, np.uint8)
    ink, scale = ink_map(image)
    assert scale == 0.5 and ink.shape == (750, INK_LONG_SIDE)


def test_one_body_gives_one_card_along_it_pushed_either_way_for_a_head_or_a_tail():
    ink = np.zeros((300, 400), np.uint8)
    _band(ink, (200, 150), 70, 16, 30, 1)
    (options,) = body_guesses(ink.astype(bool), lambda point: (80.0, 55.0))
    assert len(options) == 5      # centred, moved to either end of the body, and a little further
    centred = options[0]
    assert np.allclose(centred.centre, (200, 150), atol=1.5)
    assert abs(abs(float(_axis(centred) @ (np.cos(np.radians(30)), np.sin(np.radians(30))))) - 1) < 0.01
    assert abs(centred.long_side - 80) < 1 and abs(centred.short_side - 55) < 1
    shifted = sorted(float(np.hypot(*(o.centre - centred.centre))) for o in options[1:])
    assert np.allclose(shifted, [4.5, 4.5, 9.6, 9.6], atol=0.8)


def test_two_bodies_end_to_end_give_two_cards():
    ink = np.zeros((300, 400), np.uint8)
    _band(ink, (200, 150), 156, 16, 0, 1)
    guesses = body_guesses(ink.astype(bool), lambda point: (80.0, 55.0))
    assert len(guesses) == 2
    centres = sorted(float(options[0].centre[0]) for options in guesses)
    assert np.allclose(centres, (161, 239), atol=1.5)


def test_no_card_is_guessed_on_specks_sheets_or_long_stripes():
    ink = np.zeros((400, 600), np.uint8)
    _band(ink, (100, 100), 10, 6, 0, 1)           # a speck
    _band(ink, (300, 100), 80, 55, 0, 1)          # a whole card's area of ink: a sheet, no body
    _band(ink, (300, 300), 400, 16, 0, 1)         # a table's stripe, five cards long
    assert body_guesses(ink.astype(bool), lambda point: (80.0, 55.0)) == []


def test_a_patch_of_ink_mostly_on_the_bare_table_is_no_body_and_none_is_pared_into_one():
    size = lambda point: (80.0, 55.0)
    ink = np.zeros((400, 600), bool)
    body = np.zeros((400, 600), np.uint8)
    _band(body, (300, 200), 76, 18, 0, 1)
    ink |= body.astype(bool)
    bare = np.zeros_like(ink)
    assert len(body_guesses(ink, size, bare=bare)) == 1
    bare[:, :300] = True                       # half of it where the empty table showed cloth:
    assert len(body_guesses(ink, size, bare=bare)) == 1    # a body touching the cloth's stripe
    bare[:, :330] = True                       # most of it
    assert body_guesses(ink, size, bare=bare) == []
    # a sheet of ink (no body), the table bare around a body-shaped strip of it: pared to the
    # strip it would be a body, so it is taken whole, and is still a sheet
    sheet = np.zeros((400, 600), np.uint8)
    _band(sheet, (300, 200), 80, 55, 0, 1)
    bare = sheet.astype(bool) & ~body.astype(bool)
    assert body_guesses(sheet.astype(bool), size, bare=bare) == []
    assert len(body_guesses(sheet.astype(bool) & ~bare, size)) == 1


# --- cards_by_bodies, with a stand-in recogniser that reads a face where a body lies ---

@pytest.fixture(scope="module")
def deck():
    return load_deck()


def _table_with_bodies(*centres) -> np.ndarray:
    """A white table, each card's white paper lost in it: only its red-to-blue body shows."""
    image = np.full((400, 600, 3), WHITE, np.uint8)
    for x, y in centres:
        _band(image, (x, y), 76, 18, 0, (60, 40, 200))
    return image


def _reading(corners, kind="middle", colours=("red", "blue"), confidence=0.95):
    from companion.vision.outline import CardOutline, order_corners
    from companion.vision.recognise import CardReading
    c = order_corners(np.asarray(corners, float))
    return CardReading(CardOutline(c), kind, list(colours), [], confidence)


def _card_at(x, y, long=80.0, short=55.0):
    return [(x - long / 2, y - short / 2), (x + long / 2, y - short / 2),
            (x + long / 2, y + short / 2), (x - long / 2, y + short / 2)]


def _reader(bodies, kind="middle", colours=("red", "blue"), confidence=0.95):
    """Reads a face on an outline centred within 6 px of a body, nothing elsewhere."""
    from companion.vision.recognise import CardReading

    def recognise(image, outlines):
        return [CardReading(o, kind, list(colours), [], confidence) for o in outlines
                if min(np.hypot(*(o.centre - b)) for b in bodies) < 6]
    return recognise


def test_a_card_lost_in_the_table_is_read_on_its_body(deck):
    from companion.vision.bodies import cards_by_bodies
    image = _table_with_bodies((400, 200))
    found = [_reading(_card_at(150, 200))]          # a card the finder saw gives the cards' size
    got = cards_by_bodies(image, found, _reader([(400, 200)]), deck)
    assert len(got) == 2 and got[0] is found[0]
    new = got[1]
    assert np.allclose(new.outline.centre, (400, 200), atol=2)
    assert abs(new.outline.long_side - 80) < 2 and abs(new.outline.short_side - 55) < 2


def test_on_a_watched_table_no_body_is_looked_for_where_the_empty_table_lies_bare(deck):
    from companion.vision.bodies import cards_by_bodies
    image = _table_with_bodies((400, 200), (300, 330))   # a card's body; a stripe of the cloth
    found = [_reading(_card_at(150, 200))]
    reader = _reader([(400, 200), (300, 330)], colours=("green", "blue"))
    asked = []

    def recognise(image, outlines):
        asked.extend(outlines)
        return reader(image, outlines)

    assert len(cards_by_bodies(image, found, recognise, deck)) == 3
    # the empty table showed the stripe; the card lies where it showed the white table: not
    # bare.  (At half the image's scale, as a game's searched copy of a big picture is.)
    bare = np.ones((200, 300), bool)
    bare[80:120, 170:230] = False
    asked.clear()
    got = cards_by_bodies(image, found, recognise, deck, bare=bare)
    assert len(got) == 2 and np.allclose(got[1].outline.centre, (400, 200), atol=2)
    assert asked and all(np.hypot(*(o.centre - (300, 330))) > 60 for o in asked)


def test_without_a_card_read_there_is_no_size_and_nothing_is_guessed(deck):
    from companion.vision.bodies import cards_by_bodies
    image = _table_with_bodies((400, 200))
    assert cards_by_bodies(image, [], _reader([(400, 200)]), deck) == []


def test_a_body_read_unsurely_or_as_a_card_the_deck_has_no_copy_left_of_is_no_card(deck):
    from companion.vision.bodies import SURE_ONE_END, cards_by_bodies
    image = _table_with_bodies((400, 200))
    found = [_reading(_card_at(150, 200))]
    unsure_tail = _reader([(400, 200)], "tail", ("red",), SURE_ONE_END - 0.05)
    assert len(cards_by_bodies(image, found, unsure_tail, deck)) == 1
    sure_tail = _reader([(400, 200)], "tail", ("red",), SURE_ONE_END + 0.05)
    assert len(cards_by_bodies(image, found, sure_tail, deck)) == 2
    # every copy of the card on the table already
    copies = deck.count(Card.parse("M-red-blue"))
    crowd = [_reading(_card_at(60 + 90 * k, 330)) for k in range(copies)]
    assert len(cards_by_bodies(image, crowd, _reader([(400, 200)]), deck)) == copies


def test_an_outline_read_as_no_face_gives_way_to_the_face_its_body_shows(deck):
    from companion.vision.bodies import MIN_CONFIDENCE, SURE_UNKNOWN, cards_by_bodies
    image = _table_with_bodies((400, 200))
    found = [_reading(_card_at(150, 200)), _reading(_card_at(408, 196), "unknown", (), SURE_UNKNOWN - 0.1)]
    got = cards_by_bodies(image, found, _reader([(400, 200)]), deck)
    assert [r.kind for r in got] == ["middle", "middle"]
    assert np.allclose(got[1].outline.centre, (400, 200), atol=2)
    # another game's card read surely as no Hisss face keeps its place: what looks like a
    # body on it is its own art (a red spot read as a tail)
    found[1] = _reading(_card_at(408, 196), "unknown", (), SURE_UNKNOWN + 0.05)
    assert cards_by_bodies(image, found, _reader([(400, 200)]), deck) == found
    # so does a face read less surely than a guess must be
    found[1] = _reading(_card_at(408, 196), "middle", ("green", "blue"), MIN_CONFIDENCE - 0.1)
    got = cards_by_bodies(image, found, _reader([(400, 200)]), deck)
    assert [r.colours for r in got] == [["red", "blue"], ["red", "blue"]]
    # a face read surely there keeps its place
    found[1] = _reading(_card_at(408, 196), "middle", ("green", "blue"), MIN_CONFIDENCE + 0.1)
    assert cards_by_bodies(image, found, _reader([(400, 200)]), deck) == found
    # ... but not a middle read, however surely, with one colour at both ends: the deck has
    # no such card (an outline fitted across part of a head reads so)
    found[1] = _reading(_card_at(408, 196), "middle", ("green", "green"), 0.9)
    got = cards_by_bodies(image, found, _reader([(400, 200)]), deck)
    assert [r.colours for r in got] == [["red", "blue"], ["red", "blue"]]
    assert np.allclose(got[1].outline.centre, (400, 200), atol=2)


def test_a_guess_takes_the_size_of_the_cards_nearest_it(deck):
    """Seen in perspective, cards far from the camera look smaller than near ones."""
    from companion.vision.bodies import cards_by_bodies
    image = _table_with_bodies((400, 120))
    others = [("green", "yellow"), ("purple", "orange"), ("blue", "green"),
              ("orange", "yellow"), ("red", "green"), ("purple", "blue")]
    near = [_reading(_card_at(x, 60, 76, 52), colours=c) for x, c in zip((200, 300, 500), others)]
    far = [_reading(_card_at(x, 330, 100, 70), colours=c) for x, c in zip((150, 300, 450), others[3:])]
    got = cards_by_bodies(image, near + far, _reader([(400, 120)]), deck)[-1]
    assert np.allclose(got.outline.centre, (400, 120), atol=2)
    assert abs(got.outline.long_side - 76) < 2 and abs(got.outline.short_side - 52) < 2


def test_on_a_rendered_table_cards_are_read_on_bodies_the_finder_had_no_outline_for(
        monkeypatch, analyzer, development_table):
    import companion.vision.analyze as analyze
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(14, "hard", 24)
    with_bodies = score_table(scene.truth, analyzer.analyze(image), covered)
    monkeypatch.setattr(analyze, "cards_by_bodies", lambda image, readings, *_: readings)
    without = score_table(scene.truth, analyzer.analyze(image), covered)
    assert with_bodies.matched >= without.matched + 2
    assert with_bodies.found_cards - with_bodies.matched <= without.found_cards - without.matched
    assert with_bodies.chains_right > without.chains_right
