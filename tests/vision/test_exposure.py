"""A dim picture brightened as a camera's exposure would (`companion.vision.exposure`)."""
import numpy as np

from companion.vision.exposure import LEAST_GAIN, MAX_GAIN, WELL_EXPOSED, well_exposed


def _picture(paper: int, table: int = 40) -> np.ndarray:
    """A table with a card on it whose paper is `paper` grey and whose ink is orange-ish."""
    image = np.full((240, 320, 3), table, np.uint8)
    image[60:180, 100:180] = paper
    image[100:140, 120:160] = (20, 60, 110)   # BGR: an orange body, as dim as the paper
    return image


def test_a_dim_picture_is_brightened_until_its_paper_is_well_exposed():
    dim = _picture(paper=100)
    got = well_exposed(dim)
    assert abs(int(got[70, 110, 0]) - WELL_EXPOSED) <= 2
    # one factor for every pixel and channel: each colour's hue and the ratios between colours stay
    gain = got[70, 110, 0] / 100.0
    assert np.allclose(got[120, 140].astype(float), np.array([20, 60, 110]) * gain, atol=1.5)
    assert np.allclose(got[10, 10].astype(float), 40 * gain, atol=1.5)


def test_a_picture_exposed_well_enough_is_left_as_it_is():
    bright = _picture(paper=int(WELL_EXPOSED / LEAST_GAIN) + 5)
    assert well_exposed(bright) is bright


def test_a_picture_in_the_dark_is_brightened_at_most_so_much():
    dark = _picture(paper=30, table=10)
    got = well_exposed(dark)
    assert abs(int(got[70, 110, 0]) - round(30 * MAX_GAIN)) <= 1


def test_on_a_dim_rendered_table_brightening_finds_cards_the_dim_picture_hides(monkeypatch, analyzer,
                                                                               development_table):
    import companion.vision.analyze as analyze
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(13, "hard", 77)
    brightened = score_table(scene.truth, analyzer.analyze(image), covered)
    monkeypatch.setattr(analyze, "well_exposed", lambda picture: picture)
    dim = score_table(scene.truth, analyzer.analyze(image), covered)
    assert brightened.matched >= dim.matched + 4
    assert brightened.found_cards - brightened.matched <= dim.found_cards - dim.matched + 1
