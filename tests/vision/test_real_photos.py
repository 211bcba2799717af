"""Real photographs of other games' cards and of rooms without cards (never committed).

They live in ../shared/real_photos beside the repository; without them these tests skip.
"""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2] / ".." / "shared" / "real_photos"
MANIFEST = ROOT / "manifest.json"

pytestmark = pytest.mark.skipif(not MANIFEST.exists(), reason="real photos not present")


def _entries(folder):
    if not MANIFEST.exists():
        return []
    return [e for e in json.loads(MANIFEST.read_text()) if e["file"].startswith(folder)]


def _analyse(analyzer, entry):
    from companion.vision.imageio import load_image
    img = load_image(str(ROOT / entry["file"]))
    return analyzer.analyze(img.pixels, entry["file"], (img.width, img.height))


@pytest.mark.parametrize("entry", _entries("cards/"), ids=lambda e: e["file"])
def test_other_games_cards_are_never_taken_for_hisss_cards(entry, analyzer):
    kinds = [c["kind"] for c in _analyse(analyzer, entry)["cards"]]
    assert all(k in ("unknown", "back") for k in kinds), kinds


# Known gaps, measured in the closing report: trained on renders only, the models still
# reject many real playing cards as `none` (not a card), and the finder misses real cards
# that touch or stand out little from the table; two rooms show 'cards' (a framed picture;
# a panel of sky between a bridge's girders and a traffic cone).  The photos each test fails
# on with the committed models are listed: every other photo must pass, and one of these
# passing (after `companion train`) is news to write down here.  (005's cards have all been
# found since a long outline of one card's area is no longer taken for two cards, 2026-12-05.)  (014's five cards used to
# count as found: two guessed rectangles of bare cloth stood in for the king it misses.)
# (002, 013 and 014 pass since an unsure `unknown` whose outline the finder fitted as well as
# a card's stays a card, 2026-12-06; 004 reached its count then only with two printed diamonds
# of a card it misses, and counts card-sized outlines only since.)  (010's seven of diamonds has
# never been found: the photo counted as passing on a nine cut by the frame, found as a last
# resort until the spades' pips, opened off their regions, came to lie in its place, 2026-12-07.)
CARDS_MISSED = {"cards/004.jpg", "cards/009.jpg", "cards/010.jpg", "cards/017.jpg", "cards/018.jpg"}
SYMBOL_AREA = 0.3   # of the median outline's area: a symbol printed on a card, not a card
ROOMS_WITH_FALSE_CARDS = {"negatives/003.jpg", "negatives/004.jpg"}


def _known_gaps(folder, failing, reason):
    return [pytest.param(e, id=e["file"], marks=pytest.mark.xfail(reason=reason, strict=True)
                         if e["file"] in failing else ()) for e in _entries(folder)]


@pytest.mark.parametrize("entry", _known_gaps("cards/", CARDS_MISSED, "real photos: in 17 of 22 photos every "
                                              "real card is found (8 to 17 between training sets)"))
def test_other_games_cards_are_all_found(entry, analyzer):
    found = [c for c in _analyse(analyzer, entry)["cards"] if c["kind"] == "unknown"]
    areas = [cv2.contourArea(np.array(c["corners"], np.float32)) for c in found]
    # one game's cards are of one size, give or take the view's perspective
    cards = [a for a in areas if a >= SYMBOL_AREA * np.median(areas)] if areas else []
    assert len(cards) >= entry["cards_visible"]


@pytest.mark.parametrize("entry", _known_gaps("negatives/", ROOMS_WITH_FALSE_CARDS, "real photos: 2 of 6 rooms "
                                              "show a false card (1 to 4 between training sets)"))
def test_rooms_without_cards_show_no_cards(entry, analyzer):
    result = _analyse(analyzer, entry)
    assert result["cards"] == [], [c["kind"] for c in result["cards"]]
