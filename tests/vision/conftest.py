import pytest

from companion.vision.recognise import MODEL_FILE, MODELS_DIR


@pytest.fixture(scope="session")
def analyzer():
    """One Analyzer with the committed models, shared by the whole session."""
    if not (MODELS_DIR / MODEL_FILE).exists():
        pytest.fail("models/recognition.joblib is missing: run `companion train` and commit it")
    from companion.vision.analyze import Analyzer
    return Analyzer()


@pytest.fixture(scope="session")
def small_scene():
    """A small rendered table (training style) with known truth: a short snake and lone cards."""
    from companion.synth.scene import render_scene
    table = [["H-red", "M-red-blue", "T-blue"], ["M-green-yellow"], ["H-purple"]]
    return render_scene(11, tier="easy", style="cartoon", size=(960, 720), table=table)
