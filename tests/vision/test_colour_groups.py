"""Two neighbouring colours told apart by the groups this picture's own ends of them make."""
from dataclasses import replace

import numpy as np

from companion.vision.colour_groups import colours_by_groups

from .test_recognise import _middle, _with_labs

COLOURS = ["red", "orange", "yellow"]
YELLOW_LAB = (66, -4, 68)


def _lab_at(hue: float, chroma: float = 60.0) -> tuple[float, float, float]:
    return (40.0, chroma * np.cos(np.radians(hue)), chroma * np.sin(np.radians(hue)))


def _sure_red(hue: float = 33.0):
    return _with_labs(_middle([0.98, 0.01, 0.01], [0.01, 0.01, 0.98], COLOURS), _lab_at(hue), YELLOW_LAB)


def _doubtful(p_red: float, hue: float = 42.0, chroma: float = 60.0):
    """A middle whose first end the model leans to red (the rest orange), measured at `hue`."""
    return _with_labs(_middle([p_red, 1.0 - p_red, 0.0], [0.01, 0.01, 0.98], COLOURS),
                      _lab_at(hue, chroma), YELLOW_LAB)


def test_ends_in_the_group_apart_from_the_sure_reds_are_orange():
    # a print whose orange the model calls red: this table's reds are read a hundred to one,
    # its oranges at most five to one
    table = [_sure_red(32.0), _sure_red(33.0), _sure_red(34.5), _doubtful(0.82, 42.5),
             _doubtful(0.53, 43.0), _doubtful(0.6, 42.0)]
    got = colours_by_groups(table, COLOURS)
    assert [r.colours[0] for r in got] == ["red"] * 3 + ["orange"] * 3
    assert got[:3] == table[:3]


def test_without_a_gap_between_groups_nothing_changes():
    # odds spread evenly from sure red to doubtful: no two groups
    table = [_sure_red(), _doubtful(0.95), _doubtful(0.9), _doubtful(0.8), _doubtful(0.65)]
    assert colours_by_groups(table, COLOURS) == table


def test_the_odds_group_an_end_not_the_hue_it_is_measured_at():
    # an orange measured at the reds' hue (its ink thin, say) is in the orange group; a red
    # measured at the orange hue, read as surely as the reds are, is in theirs
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.95, 42.0), _doubtful(0.6, 33.0)]
    got = colours_by_groups(table, COLOURS)
    assert got[2] is table[2]
    assert got[3].colours == ["orange", "yellow"]


def test_greyish_ends_do_not_make_groups():
    # a dim picture's ends have little colour, and the model's odds for them are mostly noise
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.7, 42.0, chroma=20.0),
             _doubtful(0.6, 43.0, chroma=20.0)]
    assert colours_by_groups(table, COLOURS) == table


def test_an_end_the_model_gives_no_chance_of_the_other_colour_keeps_its_own():
    # far less red than the reds, but no orange either: yellow is its second guess
    unlikely = _with_labs(_middle([0.5, 0.04, 0.46], [0.01, 0.01, 0.98], COLOURS), _lab_at(42.0), YELLOW_LAB)
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.8, 42.0), unlikely]
    got = colours_by_groups(table, COLOURS)
    assert got[2].colours == ["orange", "yellow"] and got[3] is unlikely


def test_a_middle_is_never_given_one_colour_at_both_ends():
    # orange at its far end already: its near end, in the orange group, stays red
    both = _with_labs(_middle([0.8, 0.2, 0.0], [0.3, 0.7, 0.0], COLOURS), _lab_at(42.0), _lab_at(43.0))
    table = [_sure_red(32.0), _sure_red(33.0), _doubtful(0.6, 42.0), both]
    got = colours_by_groups(table, COLOURS)
    assert got[2].colours == ["orange", "yellow"]
    assert got[3] is both


def test_an_end_read_as_a_third_colour_is_not_the_pair_s_to_move():
    # the table's sure ends made this end orange (`colours_by_the_table`); red against purple
    # it lies with the reds, but whether it is red or orange is the red-orange groups' to say
    colours = ["red", "orange", "yellow", "purple"]
    purple_lab = (30.0, 45.0, -40.0)

    def middle(a, b, *labs):
        return _with_labs(_middle(a, b, colours), *labs)
    reds = [middle([0.98, 0.01, 0.0, 0.01], [0.0, 0.01, 0.99, 0.0], _lab_at(33.0), YELLOW_LAB) for _ in range(2)]
    purples = [middle([0.01, 0.0, 0.0, 0.99], [0.0, 0.01, 0.99, 0.0], purple_lab, YELLOW_LAB) for _ in range(2)]
    doubter = middle([0.3, 0.0, 0.0, 0.7], [0.0, 0.01, 0.99, 0.0], purple_lab, YELLOW_LAB)
    orange = replace(middle([0.6, 0.25, 0.0, 0.15], [0.0, 0.01, 0.99, 0.0], _lab_at(40.0), YELLOW_LAB),
                     colours=["orange", "yellow"])
    got = colours_by_groups(reds + purples + [doubter, orange], colours)
    assert got[-1].colours == ["orange", "yellow"]


def test_on_a_rendered_table_an_orange_read_red_is_mended_by_the_tables_own_groups(monkeypatch, analyzer,
                                                                                   development_table):
    import companion.vision.analyze as analyze
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(11, "easy", 104)
    assert score_table(scene.truth, analyzer.analyze(image), covered).tables_exact
    monkeypatch.setattr(analyze, "colours_by_groups", lambda readings, colours: readings)
    mistakes = score_table(scene.truth, analyzer.analyze(image), covered).mistakes
    assert "end orange of middle read as ['blue', 'red']" in mistakes
