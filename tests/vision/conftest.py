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


@pytest.fixture(scope="session")
def development_table():
    """`development_table(seed, tier, index)`: a rendered development table (the held-out art
    style, from tuning seeds that neither training nor the bench renders) as the scene, its
    picture decoded as a camera's would be, and the ids of the cards mostly covered by others."""
    import cv2
    import numpy as np
    from companion.bench.metrics import covered_cards
    from companion.synth.scene import render_scene
    from companion.synth.styles import HELD_OUT_STYLE
    from companion.vision.seeds import scene_seed

    def render(seed: int, tier: str, index: int):
        scene = render_scene(scene_seed("tune", seed, index), tier=tier, style=HELD_OUT_STYLE)
        image = cv2.imdecode(np.frombuffer(scene.jpeg, np.uint8), cv2.IMREAD_COLOR)
        covered = covered_cards(scene.meta)
        return scene, image, covered
    return render
