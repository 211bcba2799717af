"""Two neighbouring colours told apart by the groups this picture's own ends of them make."""
import numpy as np

from companion.vision.hue_groups import colours_by_hue_groups

from .test_recognise import _middle, _with_labs

COLOURS = ["red", "orange", "yellow"]
YELLOW_LAB = (66, -4, 68)


def _lab_at(hue: float, chroma: float = 60.0) -> tuple[float, float, float]:
    return (40.0, chroma * np.cos(np.radians(hue)), chroma * np.sin(np.radians(hue)))


def _sure_red(hue: float = 33.0):
    return _with_labs(_middle([0.98, 0.01, 0.01], [0.01, 0.01, 0.98], COLOURS), _lab_at(hue), YELLOW_LAB)


def _doubtful(p_red: float, hue: float = 42.0, chroma: float = 60.0):
    """A middle whose first end the model leans to red, measured at `hue`."""
    return _with_labs(_middle([p_red, 1.0 - p_red, 0.0], [0.01, 0.01, 0.98], COLOURS),
                      _lab_at(hue, chroma), YELLOW_LAB)


def test_ends_in_the_hue_group_apart_from_the_sure_reds_are_orange():
    # a print whose orange the model calls red: this table's reds lie together, its oranges
    # a gap further round the hue circle
    table = [_sure_red(32.0), _sure_red(33.0), _sure_red(34.5), _doubtful(0.82, 42.5),
             _doubtful(0.53, 43.0), _doubtful(0.6, 42.0)]
    got = colours_by_hue_groups(table, COLOURS)
    assert [r.colours[0] for r in got] == ["red"] * 3 + ["orange"] * 3
    assert got[:3] == table[:3]


def test_without_a_gap_between_groups_nothing_changes():
    # hues spread evenly from red to orange: no two groups
    table = [_sure_red(33.0), _sure_red(35.0), _doubtful(0.82, 37.0), _doubtful(0.7, 39.0),
             _doubtful(0.6, 41.0)]
    assert colours_by_hue_groups(table, COLOURS) == table


def test_a_sure_end_keeps_its_colour_wherever_its_hue_lies():
    # its measured hue may be its neighbour's, or a shadow's: the model saw more than the hue
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.95, 42.0), _doubtful(0.6, 42.5)]
    got = colours_by_hue_groups(table, COLOURS)
    assert got[2] is table[2]
    assert got[3].colours == ["orange", "yellow"]


def test_greyish_ends_do_not_make_groups():
    # a dim picture's ends have little colour, and their hue is mostly noise
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.7, 42.0, chroma=20.0),
             _doubtful(0.6, 43.0, chroma=20.0)]
    assert colours_by_hue_groups(table, COLOURS) == table


def test_an_end_the_model_gives_no_chance_of_the_other_colour_keeps_its_own():
    unlikely = _with_labs(_middle([0.97, 0.0, 0.03], [0.01, 0.01, 0.98], COLOURS), _lab_at(42.0), YELLOW_LAB)
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.6, 42.0), unlikely]
    got = colours_by_hue_groups(table, COLOURS)
    assert got[2].colours == ["orange", "yellow"] and got[3] is unlikely


def test_a_middle_is_never_given_one_colour_at_both_ends():
    # orange at its far end already: its doubtful near end stays red
    both = _with_labs(_middle([0.6, 0.4, 0.0], [0.01, 0.98, 0.01], COLOURS), _lab_at(42.0), _lab_at(43.0))
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.6, 42.0), both]
    got = colours_by_hue_groups(table, COLOURS)
    assert got[3] is both


def test_on_a_rendered_table_an_orange_read_red_is_mended_by_the_tables_own_groups(monkeypatch, analyzer,
                                                                                   development_table):
    import companion.vision.analyze as analyze
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(11, "easy", 104)
    assert score_table(scene.truth, analyzer.analyze(image), covered).tables_exact
    monkeypatch.setattr(analyze, "colours_by_hue_groups", lambda readings, colours: readings)
    mistakes = score_table(scene.truth, analyzer.analyze(image), covered).mistakes
    assert "end orange of middle read as ['blue', 'red']" in mistakes
