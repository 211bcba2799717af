"""Calibration photos of a given deck in a given room: the room's lamp and camera are kept."""
from __future__ import annotations

import numpy as np

from companion.synth.deck_layout import LightSetup, deck_and_light_of, deck_look, render_deck_photo
from companion.synth.plan import plan_game

SIZE = (800, 600)


def _brightness(exposure: float) -> float:
    photo = render_deck_photo(31, deck_look("retro", 5), size=SIZE, light=LightSetup("lamp", 4500.0, 0.6, exposure))
    return float(photo.image.mean())


def test_a_darker_camera_gives_a_darker_photo_of_the_same_layout():
    assert _brightness(0.5) < 0.7 * _brightness(1.0)


def test_a_game_s_deck_and_room_are_what_its_frames_were_drawn_with():
    world = plan_game(["A", "B"], 4242, "hard", "retro", max_frames=2).world
    deck, light = deck_and_light_of(world)
    assert (deck.style, deck.aspect, deck.card_w_mm) == ("retro", world.aspect, world.card_mm[0])
    assert deck.print_ is world.print_
    assert (light.kelvin, light.white_balance, light.exposure) == \
        (world.look.kelvin, world.look.white_balance, world.look.exposure)
    photo = render_deck_photo(7, deck, size=SIZE, light=light)
    assert photo.meta["aspect"] == world.aspect and photo.meta["light"] == light.name
    assert np.array_equal(photo.image, render_deck_photo(7, deck, size=SIZE, light=light).image)


def test_a_game_scene_of_a_deck_says_how_much_of_each_card_is_in_view():
    """As any rendered still's: the truth holds the cards one can judge in the picture, each
    with the share of it in view, so that a fan's lower cards, mostly covered, are not
    required of the analyser (`covered_cards`)."""
    from companion.bench.metrics import covered_cards
    from companion.synth.deck_layout import render_deck_scene

    scene = render_deck_scene(3, deck_look("retro", 3), tier="hard", size=(640, 480))
    assert set(scene.meta["visibility"]) == {str(c["id"]) for c in scene.truth["cards"]}
    covered = covered_cards(scene.meta)
    assert covered and {scene.truth["cards"][k]["kind"] for k in covered} == {"back"}
    # the label paints the truth's cards by their ids
    assert set(np.unique(scene.label)) - {0} <= {c["id"] + 1 for c in scene.truth["cards"]}
