"""`companion bench --calibrated` scores what the tables bench scores."""
from companion.bench.calibrated import bench_calibrated
from companion.bench.metrics import covered_cards
from companion.synth.deck_layout import deck_look, render_deck_scene
from companion.synth.styles import HELD_OUT_STYLE
from companion.vision.seeds import scene_seed


def test_the_cards_covered_in_a_fan_are_not_required_of_either_analyser():
    seed = 2
    deck = deck_look(HELD_OUT_STYLE, scene_seed("bench", seed, 7_000_000))
    scene = render_deck_scene(scene_seed("bench", seed, 7_200_000), deck, tier="hard")
    covered = covered_cards(scene.meta)
    assert covered   # (this scene has a fan)
    report = bench_calibrated(1, seed, decks=1)
    assert report["covered_cards_not_required"] == len(covered)
    assert report["cards"] == len(scene.truth["cards"]) - len(covered)
