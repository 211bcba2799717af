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
