"""A straight row cut again where its cards read badly (`companion.vision.rows`)."""
import numpy as np

from companion.vision.outline import CardOutline, polygon_iou
from companion.vision.recognise import CardReading
from companion.vision.rows import rows_cut_again

SHORT, LONG = 60.0, 90.0
IMAGE = np.zeros((300, 600, 3), np.uint8)


def _card(x, y, length=LONG):
    """A card lying along x whose top-left corner is (x, y)."""
    return np.array([[x, y], [x + length, y], [x + length, y + SHORT], [x, y + SHORT]], float)


ROW = [_card(100 + k * LONG, 100) for k in range(4)]           # four cards end to end
ALONE = [_card(100, 200), _card(400, 200)]                      # two more, to size the cards by


def _reading(corners, confidence, colours=("red", "blue")):
    outline = CardOutline(np.asarray(corners, float), 0.5)
    return CardReading(outline, "middle", list(colours), [], confidence, {"middle": confidence})


def _reads_true_cards(asked, kind="middle"):
    """A stand-in recogniser: sure of an outline lying on one of the row's cards, unsure elsewhere."""
    def read(image, outlines):
        asked.extend(outlines)
        out = []
        for o in outlines:
            sure = max(polygon_iou(o.corners, c) for c in ROW + ALONE) > 0.85
            out.append(CardReading(o, kind, ["red", "blue"], [], 0.9 if sure else 0.1, {kind: 0.9}))
        return out
    return read


def _cut_in_three():
    """The row of four cut as three cards, each across a seam; the middle one read unsure."""
    third = 4 * LONG / 3
    cuts = [_card(100 + k * third, 100, third) for k in range(3)]
    return [_reading(cuts[0], 0.6), _reading(cuts[1], 0.1), _reading(cuts[2], 0.6)]


def test_a_row_cut_at_wrong_seams_is_cut_again_into_the_cards_that_read_surest():
    alone = [_reading(c, 0.9) for c in ALONE]
    asked = []
    got = rows_cut_again(IMAGE, alone + _cut_in_three(), _reads_true_cards(asked))
    assert asked                                       # the row was read again
    assert got[:2] == alone                            # cards outside the row stay as they were
    row = got[2:]
    assert len(row) == 4
    for reading, card in zip(sorted(row, key=lambda r: r.outline.centre[0]), ROW):
        assert polygon_iou(reading.outline.corners, card) > 0.85


def test_a_row_read_surely_is_not_read_again():
    readings = [_reading(c, 0.9) for c in ALONE + ROW]
    asked = []
    assert rows_cut_again(IMAGE, readings, _reads_true_cards(asked)) == readings
    assert asked == []


def test_a_middle_of_one_colour_at_both_ends_is_doubted_however_sure():
    # an outline across the seam of a ...-red card and a red-... one reads as a red-red middle,
    # a card the deck does not hold
    readings = [_reading(c, 0.9) for c in ALONE + ROW]
    readings[3] = _reading(ROW[1], 0.95, ("red", "red"))
    asked = []
    rows_cut_again(IMAGE, readings, _reads_true_cards(asked))
    assert asked


def test_the_row_is_kept_when_no_cutting_reads_surer_or_reads_as_faces():
    readings = [_reading(c, 0.9) for c in ALONE] + _cut_in_three()
    unsure = lambda image, outlines: [CardReading(o, "middle", ["red", "blue"], [], 0.1, {"middle": 0.1})
                                      for o in outlines]
    assert rows_cut_again(IMAGE, readings, unsure) == readings
    assert rows_cut_again(IMAGE, readings, _reads_true_cards([], kind="unknown")) == readings


def test_cards_not_in_line_make_no_row():
    # the doubtful card's neighbours turned across it or beside it: read again alone
    alone = [_reading(c, 0.9) for c in ALONE]
    doubtful = _reading(ROW[1], 0.1)
    across = _reading(np.array([[290, 85], [350, 85], [350, 175], [290, 175]], float), 0.9)  # turned 90
    beside = _reading(ROW[2] + [0, 1.5 * SHORT], 0.9)                                         # a row below
    asked = []
    rows_cut_again(IMAGE, alone + [doubtful, across, beside], _reads_true_cards(asked))
    assert asked and all(polygon_iou(o.corners, ROW[1]) > 0.85 for o in asked)


def test_on_a_rendered_table_a_long_row_cut_at_wrong_seams_reads_right_when_cut_again(monkeypatch, analyzer):
    # a development table (bench seed 5, never the held-out seed) seen from low down in 4K: a
    # long straight row whose seams hide, cut as middles of one colour across them
    import companion.vision.analyze as analyze
    from companion.bench.metrics import covered_cards, score_table
    from companion.bench.run import bench_scene_seed
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.imageio import decode_image
    scene = render_scene(bench_scene_seed(5, "hard", 39), tier="hard", style=HELD_OUT_STYLE)
    image = decode_image(scene.jpeg, "table.jpg").pixels
    covered = covered_cards(scene.meta)
    now = score_table(scene.truth, analyzer.analyze(image), covered)
    monkeypatch.setattr(analyze, "rows_cut_again", lambda image, readings, recognise: readings)
    before = score_table(scene.truth, analyzer.analyze(image), covered)
    assert now.matched >= before.matched + 2 and now.kind_right >= before.kind_right + 2
    assert now.found_cards - now.matched <= before.found_cards - before.matched
