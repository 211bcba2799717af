"""`companion train` end to end on a handful of renders, and the seed discipline."""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.vision.seeds import scene_seed


@given(st.integers(0, 10_000), st.integers(0, 10**7), st.integers(0, 10_000), st.integers(0, 10**7))
def test_training_never_renders_a_bench_scene(base_a, i, base_b, j):
    assert scene_seed("train", base_a, i) != scene_seed("bench", base_b, j)
    assert scene_seed("validate", base_a, i) != scene_seed("bench", base_b, j)
    assert scene_seed("tune", base_a, i) != scene_seed("bench", base_b, j)
    assert scene_seed("tune", base_a, i) not in (scene_seed("train", base_b, j), scene_seed("validate", base_b, j))


@pytest.mark.slow
def test_train_writes_loadable_models_and_their_report(tmp_path, small_scene):
    from companion.cli import main
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.analyze import Analyzer

    assert main(["train", "--seed", "3", "--scenes", "6", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "training.json").read_text())
    assert report["held_out_style"] == HELD_OUT_STYLE and HELD_OUT_STYLE not in report["train_styles"]
    assert report["train_scenes"] == 6
    assert "held out" in (tmp_path / "README.md").read_text()
    assert report["paper"]["held_out"]["pixels"] > 0
    result = Analyzer(models_dir=tmp_path).analyze(small_scene.image)
    assert result["cards"]  # a model fitted on six scenes still reads a plain table


@pytest.mark.slow
def test_the_same_seed_gives_the_same_model_bytes(tmp_path):
    from companion.vision.paper import PAPER_FILE
    from companion.vision.recognise import MODEL_FILE
    from companion.vision.train import train

    runs = [tmp_path / "a", tmp_path / "b"]
    for out in runs:
        train(seed=5, out_dir=out, scenes=3, validate=1, progress=lambda _: None)
    for name in (MODEL_FILE, PAPER_FILE, "training.json", "README.md"):
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name


@pytest.mark.slow
def test_a_map_trained_before_is_taken_as_it_is_and_the_recogniser_learns_on_it(tmp_path):
    from companion.vision.paper import PAPER_FILE, PaperModel
    from companion.vision.recognise import MODELS_DIR, Recogniser
    from companion.vision.train import train

    report = train(seed=6, out_dir=tmp_path, scenes=3, validate=1, progress=lambda _: None,
                   paper_file=MODELS_DIR / PAPER_FILE)
    assert (tmp_path / PAPER_FILE).read_bytes() == (MODELS_DIR / PAPER_FILE).read_bytes()
    a = PaperModel.load(MODELS_DIR / PAPER_FILE)
    assert report["paper"]["reused_from"] == PAPER_FILE and report["seed"] == 6
    assert report["paper"]["held_out"] == a.meta["held_out"]     # the map's own figures, not made up
    assert "--paper models/paper.joblib" in (tmp_path / "README.md").read_text()
    assert Recogniser.load(tmp_path).kinds                        # the recogniser was fitted all the same


def test_train_with_a_missing_or_foreign_map_says_so_in_one_line(tmp_path, capsys):
    from companion.cli import main

    (tmp_path / "notes.txt").write_text("not a model")
    for name, says in (("none.joblib", "no learnt map"), ("notes.txt", "not a learnt map")):
        assert main(["train", "--paper", str(tmp_path / name), "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("error:") and name in err and says in err


def test_face_threshold_has_fewest_errors_and_prefers_the_stricter():
    import numpy as np
    from companion.vision.train import fewest_errors_threshold

    grid = [0.5, 0.6, 0.7, 0.8, 0.9]
    # faces sure (0.95) but one at 0.65; non-faces named a face at 0.55, 0.62 and 0.75
    p = np.array([0.95, 0.95, 0.65, 0.55, 0.62, 0.75])
    is_face = np.array([True, True, True, False, False, False])
    named = np.ones(6, bool)
    # 0.5: 3 errors, 0.6: 2, 0.7: 1+1 = 2, 0.8: 1, 0.9: 1 -> the stricter of the two best
    assert fewest_errors_threshold(p, named, is_face, grid) == 0.9
    # a non-face the model already calls not-a-face costs nothing; a second face at 0.72
    # makes 0.8 and 0.9 cost two: 0.6 and 0.7 tie at one error, the stricter wins
    p = np.append(p, 0.72)
    is_face = np.append(is_face, True)
    named = np.append(named, True)
    named[5] = False
    assert fewest_errors_threshold(p, named, is_face, grid) == 0.7


def test_unknown_threshold_ties_take_the_middle_of_the_best_stretch():
    import numpy as np
    from companion.vision.train import fewest_errors_threshold

    grid = [0.5, 0.6, 0.7, 0.8, 0.9]
    # one foreign card at 0.85 and one non-card named unknown at 0.55: 0.6, 0.7 and 0.8 make
    # no error, 0.5 lets the non-card in, 0.9 drops the foreign card
    p = np.array([0.85, 0.55])
    is_unknown = np.array([True, False])
    named = np.array([True, True])
    assert fewest_errors_threshold(p, named, is_unknown, grid) == 0.8
    assert fewest_errors_threshold(p, named, is_unknown, grid, ties="middle") == 0.7
