"""Recognition on renders: kinds, end colours and where the ends are; foreign cards are unknown."""
from dataclasses import replace

import cv2
import pytest
import numpy as np

from companion.vision.outline import match_quads


def _pairs(result, truth):
    found = [np.array(c["corners"], float) for c in result["cards"]]
    real = [np.array(c["corners"], float) for c in truth["cards"]]
    return [(result["cards"][i], truth["cards"][j]) for i, j in match_quads(found, real).items()]


def test_kinds_colours_and_ends_of_a_rendered_table(analyzer, small_scene):
    result = analyzer.analyze(small_scene.image)
    pairs = _pairs(result, small_scene.truth)
    assert len(pairs) == len(small_scene.truth["cards"])
    for got, want in pairs:
        assert got["kind"] == want["kind"]
        short = min(np.linalg.norm(np.subtract(want["corners"][1], want["corners"][0])),
                    np.linalg.norm(np.subtract(want["corners"][2], want["corners"][1])))
        for colour, end in zip(want["colours"], want["ends"]):
            d = [np.hypot(e[0] - end[0], e[1] - end[1]) for e in got["ends"]]
            k = int(np.argmin(d))
            assert d[k] < 0.25 * short, "an end is not where the body meets the edge"
            assert got["colours"][k] == colour
        assert 0.5 < got["confidence"] <= 1.0


def test_turning_the_picture_changes_nothing_but_positions(analyzer, small_scene):
    turned = cv2.rotate(small_scene.image, cv2.ROTATE_90_CLOCKWISE)
    a = analyzer.analyze(small_scene.image)
    b = analyzer.analyze(turned)
    def names(r):
        return sorted((c["kind"], tuple(sorted(c["colours"]))) for c in r["cards"])
    assert names(a) == names(b)
    assert sorted(len(s["cards"]) for s in a["snakes"]) == sorted(len(s["cards"]) for s in b["snakes"])


def _foreign_cards_table() -> np.ndarray:
    """Four cards of other games on a green cloth."""
    from companion.synth.props import foreign_card
    rng = np.random.default_rng(5)
    table = np.zeros((600, 1000, 3), np.uint8)
    table[:] = (40, 90, 40)
    table = np.clip(table + rng.normal(0, 4, table.shape), 0, 255).astype(np.uint8)
    for k in range(4):
        _, sprite = foreign_card(np.random.default_rng(100 + k), 3.0)
        h, w = sprite.bgr.shape[:2]
        x, y = 20 + 245 * k, 150
        a = sprite.alpha[..., None]
        region = table[y:y + h, x:x + w].astype(np.float32)
        table[y:y + h, x:x + w] = (region * (1 - a) + sprite.bgr * a).astype(np.uint8)
    return table


def test_another_games_card_is_unknown(analyzer):
    table = _foreign_cards_table()
    result = analyzer.analyze(table)
    kinds = [c["kind"] for c in result["cards"]]
    assert len(kinds) == 4 and set(kinds) == {"unknown"}, kinds
    assert result["snakes"] == []


def test_the_models_thresholds_decide_what_is_believed(analyzer, small_scene):
    from companion.vision.recognise import CARD_LIKE_OUTLINE, Recogniser

    rec = analyzer.recogniser
    outlines = [r.outline for r in analyzer.read(small_scene.image)]
    models = {"edge": rec.edge, "kind": rec.kind, "colour": rec.colour, "typical": rec.typical,
              "face_reference": rec.face_reference}
    # no evidence is unsurprising enough: every face is reported unknown
    doubting = Recogniser({**models, "thresholds": {"max_middle_surprise": -1, "max_head_or_tail_surprise": -1}})
    assert {r.kind for r in doubting.recognise(small_scene.image, outlines)} == {"unknown"}
    # an unknown must be surer than sure: the foreign cards are not believed to be cards
    table = _foreign_cards_table()
    foreign = [r.outline for r in analyzer.read(table)]
    assert len(foreign) == 4
    sceptic = Recogniser({**models, "thresholds": {"min_unknown_probability": 1.01}})
    loose = [replace(o, score=CARD_LIKE_OUTLINE - 0.1) for o in foreign]
    assert sceptic.recognise(table, loose) == []
    # ... unless the finder fitted the outline as well as a card's: the model sees only inside it
    fitted = [replace(o, score=CARD_LIKE_OUTLINE) for o in foreign]
    assert [r.kind for r in sceptic.recognise(table, fitted)] == ["unknown"] * 4


def test_an_outline_fitted_as_a_card_that_the_model_half_calls_one_is_an_unknown_card(analyzer):
    from companion.vision.recognise import CARD_LIKE_OUTLINE, FOREIGN_DOUBT, Recogniser

    rec = analyzer.recogniser
    plain = Recogniser({"edge": rec.edge, "kind": rec.kind, "colour": rec.colour})   # no face checks

    def named_none(unknown):
        row = np.zeros(len(plain.kinds))
        row[plain.kinds.index("unknown")], row[plain.kinds.index("none")] = unknown, 1.0 - unknown
        return row

    p_kind = np.array([named_none(FOREIGN_DOUBT + 0.05), named_none(FOREIGN_DOUBT + 0.05),
                       named_none(FOREIGN_DOUBT - 0.05)])
    scores = [CARD_LIKE_OUTLINE, CARD_LIKE_OUTLINE - 0.1, CARD_LIKE_OUTLINE]
    # a card's outline the model is in two minds about is a card; a loose one, or one the model
    # hardly calls a card, is none (a cloth's cell, a shadow)
    assert plain.believed_kinds(p_kind, None, None, [0, 0, 0], None, scores) == ["unknown", "none", "none"]


def test_a_face_needs_its_edges_and_the_look_of_its_kind(analyzer):
    from companion.vision.recognise import end_evidence, face_atypicality

    # a head turned to its top edge: that edge claimed, the others stray; a middle claims two
    p_edge = np.array([[0.9, 0.1, 0.2, 0.05], [0.8, 0.3, 0.6, 0.1], [0.9, 0.9, 0.9, 0.9]])
    claimed, stray = end_evidence(p_edge, ["head", "middle", "back"], [0, 0, 0])
    assert claimed[:2].tolist() == [0.9, 0.6] and stray[:2].tolist() == [0.2, 0.3]
    assert np.isnan(claimed[2]) and np.isnan(stray[2])

    typical = analyzer.recogniser.typical
    centre, _ = typical["kinds"]["middle"]
    at_centre = typical["mean"] + centre * typical["scale"]
    far = at_centre + 6 * typical["scale"]
    a = face_atypicality(np.stack([at_centre, far, far]), ["middle", "middle", "none"], typical)
    assert a[0] < 1e-3 < a[1] and np.isnan(a[2])


def _evidence(*changes):
    """Evidence of face guesses: a sure, typical face with each row's changes."""
    base = {"face_probability": 0.95, "claimed_end": 0.9, "stray_end": 0.01, "atypicality": 1.0, "end_colour": 0.95}
    rows = [{**base, **c} for c in changes or [{}]]
    return {k: np.array([r[k] for r in rows]) for k in base}


def _reference(rng):
    """A group's true faces: sure, with their edges, few strays, typical -- each piece spread."""
    from companion.vision.recognise import EVIDENCE_SIGNS
    true = {"face_probability": rng.uniform(0.7, 1.0, 400), "claimed_end": rng.uniform(0.5, 1.0, 400),
            "stray_end": rng.uniform(0.0, 0.1, 400), "atypicality": rng.uniform(0.5, 2.5, 400),
            "end_colour": rng.uniform(0.6, 1.0, 400)}
    return {"middle": {k: np.sort(EVIDENCE_SIGNS[k] * v) for k, v in true.items()}}


def test_surprise_grows_with_every_piece_of_weaker_evidence():
    from companion.vision.recognise import face_surprise
    ref = _reference(np.random.default_rng(0))
    typical = _evidence()
    worse = _evidence({"face_probability": 0.72}, {"claimed_end": 0.52}, {"stray_end": 0.09}, {"atypicality": 2.4},
                      {"end_colour": 0.62})
    s0 = face_surprise(typical, ["middle"], ref)[0]
    s = face_surprise(worse, ["middle"] * 5, ref)
    assert (s > s0).all(), (s0, s)
    # a group without reference faces is not judged
    assert np.isnan(face_surprise(typical, ["head_or_tail"], ref)[0])


def test_evidence_a_card_cannot_show_counts_as_a_true_face_s_average_piece():
    """A rainbow end shows no ink of the deck. That piece counts as a true face's average one,
    not as a perfect one: true faces without it then meet the same bar on even terms, and a
    foreign card called a rainbow is not let off one piece of evidence."""
    from companion.vision.recognise import EVIDENCE_SIGNS, face_surprise
    rng = np.random.default_rng(3)
    ref = _reference(rng)
    without = {k: v for k, v in ref["middle"].items() if k != "end_colour"}
    rainbow = _evidence({"end_colour": np.nan, "claimed_end": 0.7})
    assert face_surprise(rainbow, ["middle"], ref)[0] == pytest.approx(
        face_surprise(rainbow, ["middle"], {"middle": without})[0] + 1.0)
    # fresh true faces, drawn as the reference was: with or without ink, alike on average
    fresh = _reference(rng)["middle"]
    faces = {k: rng.permutation(v) * EVIDENCE_SIGNS[k] for k, v in fresh.items()}
    inked = face_surprise(faces, ["middle"] * 400, ref)
    inkless = face_surprise({**faces, "end_colour": np.full(400, np.nan)}, ["middle"] * 400, ref)
    assert abs(inked.mean() - inkless.mean()) < 0.3, (inked.mean(), inkless.mean())


def test_one_weak_piece_surprises_less_than_several_middling_ones():
    """The point of weighing the evidence together: a true face hard to see in one respect
    stays believable, a foreign card a little off in three respects does not."""
    from companion.vision.recognise import face_surprise
    ref = _reference(np.random.default_rng(1))
    one_weak = _evidence({"claimed_end": 0.51})
    middling = _evidence({"face_probability": 0.76, "atypicality": 2.2, "claimed_end": 0.6})
    assert face_surprise(one_weak, ["middle"], ref)[0] < face_surprise(middling, ["middle"], ref)[0]


def test_measuring_cards_in_one_batch_gives_each_card_s_own_numbers():
    from companion.vision.outline import CardOutline
    from companion.vision.recognise import measure_all
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (120, 200, 3), dtype=np.uint8)
    image[20:100, 30:80] = (40, 200, 230)            # a cream card beside a noisy table
    outlines = [CardOutline(np.array([[30, 20], [80, 20], [80, 100], [30, 100]], float)),
                CardOutline(np.array([[110, 15], [180, 25], [170, 105], [100, 95]], float))]
    assert measure_all(image, []) == []
    for one, batch in zip([measure_all(image, [o])[0] for o in outlines], measure_all(image, outlines)):
        for field in ("lab", "raw", "paper_lab"):
            assert np.array_equal(getattr(one, field), getattr(batch, field))


def _middle(probs_a, probs_b, colours, confidence=0.5, kind="middle"):
    from companion.vision.outline import CardOutline
    from companion.vision.recognise import CardReading
    corners = np.array([[0, 0], [60, 0], [60, 90], [0, 90]], float)
    names = [colours[int(np.argmax(p))] for p in (probs_a, probs_b)]
    return CardReading(CardOutline(corners), kind, names, [[30, 0], [30, 90]], confidence, {kind: 0.9},
                       (0, 2), (np.array(probs_a), np.array(probs_b)))


def test_a_middle_read_with_one_colour_at_both_ends_gets_the_likeliest_two_that_differ():
    from companion.vision.recognise import distinct_middle_colours
    colours = ["red", "orange", "yellow"]
    same = _middle([0.9, 0.08, 0.02], [0.55, 0.40, 0.05], colours)     # the second end is less sure
    apart = _middle([0.9, 0.08, 0.02], [0.1, 0.85, 0.05], colours)
    got = distinct_middle_colours([same, apart], colours)
    assert got[0].colours == ["red", "orange"]
    assert got[0].confidence == pytest.approx(0.5 * 0.40 / 0.55, abs=1e-3)   # as sure as the pair is
    assert got[1] is apart
    # the end less sure of the shared colour is the one that gives it up, whichever it is
    flipped = distinct_middle_colours([_middle([0.55, 0.40, 0.05], [0.9, 0.08, 0.02], colours)], colours)
    assert flipped[0].colours == ["orange", "red"]


def test_on_a_rendered_table_a_middle_read_red_at_both_ends_is_read_as_its_two_colours(monkeypatch, analyzer,
                                                                                      development_table):
    import companion.vision.analyze as analyze
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(11, "easy", 42)
    assert score_table(scene.truth, analyzer.analyze(image), covered).tables_exact
    monkeypatch.setattr(analyze, "distinct_middle_colours", lambda readings, colours: readings)
    # (these mend it too)
    monkeypatch.setattr(analyze, "colours_by_the_table", lambda readings, colours: readings)
    monkeypatch.setattr(analyze, "colours_by_groups", lambda readings, colours: readings)
    monkeypatch.setattr(analyze, "within_the_deck", lambda readings, deck, colours: readings)
    mistakes = score_table(scene.truth, analyzer.analyze(image), covered).mistakes
    assert "end orange of middle read as ['red', 'red']" in mistakes


def _with_labs(reading, *labs):
    from dataclasses import replace
    return replace(reading, end_labs=tuple(np.array(lab, np.float32) for lab in labs))


RED_LAB, ORANGE_LAB = (35.0, 59.0, 25.0), (40.0, 40.0, 55.0)


def test_an_end_split_between_two_colours_takes_the_one_whose_sure_ends_it_lies_nearer():
    from companion.vision.recognise import colours_by_the_table
    colours = ["red", "orange", "yellow"]
    sure_red = _with_labs(_middle([0.97, 0.02, 0.01], [0.01, 0.01, 0.98], colours), RED_LAB, (66, -4, 68))
    sure_orange = _with_labs(_middle([0.02, 0.96, 0.02], [0.01, 0.01, 0.98], colours), ORANGE_LAB, (66, -4, 68))
    # read red by a hair, measured where this picture's orange lies
    doubtful = _with_labs(_middle([0.55, 0.45, 0.0], [0.01, 0.01, 0.98], colours), (41, 42, 53), (66, -4, 68))
    got = colours_by_the_table([sure_red, sure_red, sure_orange, sure_orange, doubtful], colours)
    assert got[-1].colours == ["orange", "yellow"]
    assert got[:4] == [sure_red, sure_red, sure_orange, sure_orange]
    # an end the model is sure enough of is left alone, wherever it lies
    clear = _with_labs(_middle([0.8, 0.2, 0.0], [0.01, 0.01, 0.98], colours), (41, 42, 53), (66, -4, 68))
    assert colours_by_the_table([sure_red, sure_red, sure_orange, sure_orange, clear], colours)[-1] is clear


def test_with_sure_ends_of_one_colour_only_a_doubtful_end_far_from_them_is_the_other():
    from companion.vision.recognise import colours_by_the_table
    colours = ["red", "orange", "yellow"]
    sure_red = _with_labs(_middle([0.97, 0.02, 0.01], [0.01, 0.01, 0.98], colours), RED_LAB, (66, -4, 68))
    far = _with_labs(_middle([0.55, 0.45, 0.0], [0.01, 0.01, 0.98], colours), (41, 42, 53), (66, -4, 68))
    near = _with_labs(_middle([0.55, 0.45, 0.0], [0.01, 0.01, 0.98], colours), (36, 57, 28), (66, -4, 68))
    got = colours_by_the_table([sure_red, sure_red, far, near], colours)
    assert got[2].colours == ["orange", "yellow"] and got[3] is near
    # nothing sure on the table: nothing to go by
    assert colours_by_the_table([far, near], colours) == [far, near]


def test_a_middle_is_never_given_one_colour_at_both_ends_by_the_table():
    from companion.vision.recognise import colours_by_the_table
    colours = ["red", "orange", "yellow"]
    sure_orange = _with_labs(_middle([0.02, 0.96, 0.02], [0.01, 0.01, 0.98], colours), ORANGE_LAB, (66, -4, 68))
    # red, then orange; the red end lies where orange does
    middle = _with_labs(_middle([0.55, 0.45, 0.0], [0.02, 0.97, 0.01], colours), (41, 42, 53), ORANGE_LAB)
    assert colours_by_the_table([sure_orange, sure_orange, middle], colours)[-1] is middle


def test_on_a_rendered_table_an_end_split_between_two_colours_is_read_by_the_table(monkeypatch, analyzer,
                                                                                 development_table):
    import companion.vision.analyze as analyze
    from companion.bench.metrics import score_table
    scene, image, covered = development_table(11, "medium", 6)
    assert score_table(scene.truth, analyzer.analyze(image), covered).tables_exact
    monkeypatch.setattr(analyze, "colours_by_the_table", lambda readings, colours: readings)
    monkeypatch.setattr(analyze, "colours_by_groups", lambda readings, colours: readings)  # (mends it too)
    unaided = score_table(scene.truth, analyzer.analyze(image), covered)
    assert not unaided.tables_exact and unaided.ends_right == unaided.ends - 1


def test_alternatives_are_the_next_likeliest_colourings_with_the_confidence_they_would_have_had():
    from companion.vision.recognise import ALTERNATIVE_SHARE, alternatives, end_odds
    colours = ["red", "orange", "yellow", "green"]
    tail = end_odds((np.array([0.6, 0.3, 0.08, 0.02]),), colours)
    assert alternatives(["red"], tail, 0.5) == ((("orange",), 0.25), (("yellow",), pytest.approx(0.5 * 0.08 / 0.6, abs=1e-4)))
    # at most ALTERNATIVES, none under ALTERNATIVE_SHARE of the reading's own odds
    assert all(p >= ALTERNATIVE_SHARE * 0.5 for _, p in alternatives(["red"], tail, 0.5))
    assert [c for c, _ in alternatives(["red"], end_odds((np.array([0.9, 0.05, 0.03, 0.02]),), colours), 0.9)] == []
    # a middle's ends are read apart, and a colouring with one colour at both ends is no card
    middle = end_odds((np.array([0.7, 0.3, 0.0, 0.0]), np.array([0.0, 0.6, 0.0, 0.4])), colours)
    got = alternatives(["red", "orange"], middle, 0.42)
    assert [c for c, _ in got] == [("red", "green"), ("orange", "green")]
    assert got[0][1] == pytest.approx(0.42 * (0.7 * 0.4) / (0.7 * 0.6), abs=1e-4)
    # a middle read with one colour at both ends keeps its odds: what follows takes one of them
    assert [c for c, _ in alternatives(["orange", "orange"], middle, 0.18)] == [("red", "orange"), ("red", "green")]


def test_on_a_rendered_table_a_misread_end_s_true_colour_is_ranked_next(analyzer, development_table):
    scene, image, _ = development_table(7, "hard", 76)
    result = analyzer.analyze(image)
    pairs = _pairs(result, scene.truth)
    misread = []
    for got, want in pairs:
        if got["kind"] == want["kind"] and want["colours"]:
            # the true colours in the order of the ends read
            truth = [want["colours"][int(np.argmin([np.hypot(e[0] - w[0], e[1] - w[1]) for w in want["ends"]]))]
                     for e in got["ends"]]
            if truth != got["colours"]:
                misread.append((truth, got))
        for alt in got["alternatives"]:
            assert alt["colours"] != got["colours"] and alt["confidence"] <= got["confidence"]
    assert misread, "the table no longer shows the case"
    for truth, got in misread:
        assert truth in [alt["colours"] for alt in got["alternatives"]]
