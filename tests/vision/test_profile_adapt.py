"""A calibration profile changes what `analyze` reads, not only the card aspect it looks for."""
import pytest

from companion.vision.profile import Profile


def test_aspect_range_never_below_square():
    assert Profile(card_aspect=1.0).aspect_range[0] == 1.0
    lo, hi = Profile(card_aspect=1.4).aspect_range
    assert 1.0 < lo < 1.4 < hi


def _colour_sets(result):
    return sorted((c["kind"], tuple(sorted(c["colours"]))) for c in result["cards"])


@pytest.fixture(scope="module")
def deck_without_yellow_green(tmp_path_factory):
    """A profile `companion calibrate` wrote from a rendered photo of a deck whose
    yellow-green middles were swapped for other pairs: this deck holds no yellow-green middle."""
    from companion.calibrate.profile_writer import write_profile
    from companion.calibrate.run import calibrate_images
    from companion.game.cards import Card
    from companion.game.deck import load_deck
    from companion.synth.deck_layout import deck_look, render_deck_photo

    swaps = iter(["M-red-blue", "M-orange-purple", "M-red-green"])
    cards = [Card.parse(next(swaps)) if c == Card.parse("M-yellow-green") else c for c in load_deck().cards()]
    photo = render_deck_photo(4321, deck_look("cartoon", 17), cards=cards, size=(1280, 960))
    cal = calibrate_images([photo.image])
    assert cal.profile["deck"]["cards"].get("M-yellow-green", 0) == 0
    return write_profile(cal.profile, tmp_path_factory.mktemp("profile") / "deck.json")


def test_analyze_with_a_profile_reads_only_pairs_the_deck_holds(analyzer, small_scene, deck_without_yellow_green):
    from companion.vision.analyze import Analyzer

    plain = analyzer.analyze(small_scene.image)
    # the table shows a yellow-green middle, which the plain models read as it is
    assert ("middle", ("green", "yellow")) in _colour_sets(plain)
    calibrated = Analyzer(deck_without_yellow_green)
    assert calibrated.adapter is not None
    adapted = calibrated.analyze(small_scene.image)
    assert ("middle", ("green", "yellow")) not in _colour_sets(adapted)
    # every other card reads as before: the profile only removed a pair this deck lacks
    rest = _colour_sets(adapted)
    for card in _colour_sets(plain):
        if card != ("middle", ("green", "yellow")):
            rest.remove(card)
    assert len(rest) == 1 and rest[0][0] == "middle"


def test_a_profile_without_colour_models_leaves_reading_alone(analyzer, small_scene):
    from companion.vision.analyze import Analyzer

    calibrated = Analyzer(Profile(card_aspect=None))
    assert calibrated.adapter is None
    assert calibrated.analyze(small_scene.image) == analyzer.analyze(small_scene.image)
