"""Real photographs of other games' cards and of rooms without cards (never committed).

They live in ../shared/real_photos beside the repository; without them these tests skip.
"""
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / ".." / "shared" / "real_photos"
MANIFEST = ROOT / "manifest.json"

pytestmark = [
    pytest.mark.skipif(not MANIFEST.exists(), reason="real photos not present"),
    # Known gap: trained on renders only, the models reject most real playing cards as
    # `none`, call a few real cards faces, and the finder misses touching real cards.
    pytest.mark.xfail(reason="real photos: recognition trained on renders does not transfer yet",
                      strict=False),
]


def _entries(folder):
    if not MANIFEST.exists():
        return []
    return [e for e in json.loads(MANIFEST.read_text()) if e["file"].startswith(folder)]


@pytest.mark.parametrize("entry", _entries("negatives/"), ids=lambda e: e["file"])
def test_rooms_without_cards_show_no_cards(entry, analyzer):
    from companion.vision.imageio import load_image
    img = load_image(str(ROOT / entry["file"]))
    result = analyzer.analyze(img.pixels, entry["file"])
    assert result["cards"] == [], [c["kind"] for c in result["cards"]]


@pytest.mark.parametrize("entry", _entries("cards/"), ids=lambda e: e["file"])
def test_other_games_cards_are_found_and_never_hisss(entry, analyzer):
    from companion.vision.imageio import load_image
    img = load_image(str(ROOT / entry["file"]))
    result = analyzer.analyze(img.pixels, entry["file"])
    faces = [c["kind"] for c in result["cards"] if c["kind"] not in ("unknown", "back")]
    assert faces == [], "another game's card was taken for a Hisss card"
    assert len(result["cards"]) >= entry["cards_visible"]
