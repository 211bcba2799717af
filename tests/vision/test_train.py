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
    result = Analyzer(models_dir=tmp_path).analyze(small_scene.image)
    assert result["cards"]  # a model fitted on six scenes still reads a plain table


@pytest.mark.slow
def test_the_same_seed_gives_the_same_model_bytes(tmp_path):
    from companion.vision.recognise import MODEL_FILE
    from companion.vision.train import train

    runs = [tmp_path / "a", tmp_path / "b"]
    for out in runs:
        train(seed=5, out_dir=out, scenes=3, validate=1, progress=lambda _: None)
    for name in (MODEL_FILE, "training.json", "README.md"):
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name
