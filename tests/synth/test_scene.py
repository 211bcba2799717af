"""Scenes: determinism, truth geometry on the drawn pixels, the contract format, tier ranges."""
import json
import math

import cv2
import numpy as np
import pytest

from companion.cli import main as cli_main
from companion.synth.scene import render_scene
from companion.synth.styles import PALETTE_HSV
from companion.synth.tiers import TIERS

KINDS = {"head", "tail", "middle", "rainbow_head", "rainbow_tail", "back", "unknown"}
SMALL = (480, 360)


def test_same_seed_same_bytes_other_seed_other_picture():
    a = render_scene(11, "medium", size=SMALL)
    b = render_scene(11, "medium", size=SMALL)
    c = render_scene(12, "medium", size=SMALL)
    assert a.jpeg == b.jpeg and a.truth == b.truth
    assert a.jpeg != c.jpeg


def test_truth_is_in_the_analyze_format():
    scene = render_scene(4, "hard", size=SMALL)
    t = scene.truth
    assert set(t) == {"image", "cards", "snakes", "problems"}
    assert t["image"]["width"] == SMALL[0] and t["image"]["height"] == SMALL[1]
    ids = [c["id"] for c in t["cards"]]
    assert ids == list(range(len(ids)))
    in_snakes = [k for s in t["snakes"] for k in s["cards"]]
    faces = [c["id"] for c in t["cards"] if c["kind"] not in ("back", "unknown")]
    assert sorted(in_snakes) == faces           # every face in exactly one chain
    for c in t["cards"]:
        assert c["kind"] in KINDS and c["confidence"] == 1.0 and len(c["corners"]) == 4
        n = {"middle": 2, "head": 1, "tail": 1}.get(c["kind"], 0)
        assert len(c["colours"]) == n
        assert len(c["ends"]) == (n if c["kind"] in ("middle", "head", "tail") else
                                  1 if c["kind"].startswith("rainbow") else 0)
    json.dumps(t)


def _edge_samples(quad: np.ndarray, offset: float):
    """Points `offset` px inside (>0) or outside (<0) each edge, at 1/4, 1/2, 3/4 along it."""
    centre = quad.mean(0)
    out = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        n = np.array([-d[1], d[0]])
        if np.dot(centre - (a + b) / 2, n) < 0:
            n = -n
        for f in (0.25, 0.5, 0.75):
            out.append(a + (b - a) * f + n * offset)
    return out


@pytest.mark.parametrize("tier,seed", [("easy", 1), ("easy", 2), ("medium", 3), ("medium", 5), ("hard", 7), ("hard", 8)])
def test_truth_outline_lands_on_the_drawn_card_within_2px(tier, seed):
    """2 px inside every truth edge is that card; 2 px outside is not."""
    scene = render_scene(seed, tier, size=(640, 480))
    vis = scene.meta["visibility"]
    checked = 0
    for card in scene.truth["cards"]:
        if vis[str(card["id"])] < 0.98:          # partly covered (a fan): outline not all visible
            continue
        quad = np.array(card["corners"])
        short = min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
        if short < 14:
            continue
        for sign, want in ((2.0, True), (-2.0, False)):
            for x, y in _edge_samples(quad, sign):
                xi, yi = int(round(x)), int(round(y))
                if not (0 <= xi < 640 and 0 <= yi < 480):
                    continue
                assert (scene.label[yi, xi] == card["id"] + 1) == want, (card["id"], x, y, sign)
        checked += 1
    assert checked >= 1


def _hue_of(img, x, y):
    patch = img[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].reshape(1, -1, 3)
    hsv = cv2.cvtColor(patch, cv2.COLOR_BGR2HSV)[0].astype(float)
    a = hsv[:, 0] * np.pi / 90
    return math.degrees(math.atan2(np.sin(a).mean(), np.cos(a).mean())) / 2 % 180


def test_truth_ends_sit_on_the_body_in_their_colour():
    """Just inside each end (towards the card centre) the picture shows that end's colour."""
    hits = total = 0
    for seed in range(3):
        scene = render_scene(seed, "easy", size=(960, 540))
        for card in scene.truth["cards"]:
            if card["kind"] not in ("middle", "head", "tail"):
                continue
            centre = np.array(card["corners"]).mean(0)
            for (x, y), colour in zip(card["ends"], card["colours"]):
                p = np.array([x, y]) + (centre - np.array([x, y])) * 0.12
                hue = _hue_of(scene.image, *p)
                nearest = min(PALETTE_HSV, key=lambda c: min(abs(hue - PALETTE_HSV[c][0]) % 180,
                                                             180 - abs(hue - PALETTE_HSV[c][0]) % 180))
                hits += nearest == colour
                total += 1
    assert total >= 10
    assert hits / total >= 0.95


@pytest.mark.parametrize("tier", list(TIERS))
def test_scenes_follow_their_tier_ranges(tier):
    t = TIERS[tier]
    for seed in range(3):
        m = render_scene(seed, tier, size=(320, 240)).meta
        assert t.tilt_deg[0] <= m["camera"]["tilt"] <= t.tilt_deg[1]
        assert t.k1[0] <= m["camera"]["k1"] <= t.k1[1]
        look = m["look"]
        assert t.jpeg_quality[0] <= look["jpeg_quality"] <= t.jpeg_quality[1]
        assert t.noise_sigma[0] <= look["noise_sigma"] <= t.noise_sigma[1]
        assert t.kelvin[0] <= look["kelvin"] <= t.kelvin[1]
        assert t.shadows[0] <= len(look["shadows"]) <= t.shadows[1]


def test_tiers_get_harder():
    e, m, h = TIERS["easy"], TIERS["medium"], TIERS["hard"]
    assert e.tilt_deg[1] < m.tilt_deg[1] < h.tilt_deg[1] == 45
    assert e.noise_sigma[1] < m.noise_sigma[1] < h.noise_sigma[1]
    assert e.jpeg_quality[0] > m.jpeg_quality[0] > h.jpeg_quality[0] == 50
    assert e.neighbour_angle_deg < m.neighbour_angle_deg < h.neighbour_angle_deg == 30
    assert h.card_px == (40, 250)


def test_given_table_is_drawn_as_given():
    table = [["H-red", "M-red-blue", "T-blue"], ["M-green-yellow"]]
    scene = render_scene(3, "easy", size=(960, 540), table=table)
    cards = scene.truth["cards"]
    chains = [[cards[k] for k in s["cards"]] for s in scene.truth["snakes"]]
    codes = sorted(tuple(c["kind"] + ":" + "-".join(c["colours"]) for c in ch) for ch in chains)
    assert codes == sorted([("head:red", "middle:red-blue", "tail:blue"), ("middle:green-yellow",)])
    assert sorted(s["complete"] for s in scene.truth["snakes"]) == [False, True]


def test_cli_writes_pictures_and_truth(tmp_path, capsys):
    assert cli_main(["synth", "scenes", "--out", str(tmp_path), "--count", "2", "--seed", "9",
                     "--tier", "easy", "--size", "320x240", "--style", "retro", "--labels"]) == 0
    jpgs = sorted(tmp_path.glob("*.jpg"))
    assert len(jpgs) == 2
    truth = json.loads(jpgs[0].with_suffix(".json").read_text())
    assert truth["image"]["path"] == str(jpgs[0])
    assert cv2.imread(str(jpgs[0])).shape == (240, 320, 3)
    label = cv2.imread(str(jpgs[0].with_suffix(".label.png")), cv2.IMREAD_UNCHANGED)
    assert label.dtype == np.uint16 and set(np.unique(label)) - {0} == {c["id"] + 1 for c in truth["cards"]}
    assert cli_main(["synth", "scenes", "--out", str(tmp_path), "--tier", "nope"]) == 2
    assert "error: unknown tier" in capsys.readouterr().err
    # the speed measurement refuses what it cannot measure before it spends a minute warming up
    assert cli_main(["synth", "speed", "--tiers", "easy,nope"]) == 2
    assert "error: unknown tier 'nope'" in capsys.readouterr().err
    assert cli_main(["synth", "speed", "--count", "0"]) == 2
    assert "error: --count must be at least 1" in capsys.readouterr().err


def test_real_table_photos_are_used_when_given():
    from pathlib import Path
    folder = Path(__file__).resolve().parents[2].parent / "shared" / "textures"
    if not folder.is_dir():
        pytest.skip("no ../shared/textures here")
    surfaces = {render_scene(seed, "medium", size=(320, 240), textures_dir=folder).meta["surface"] for seed in range(8)}
    assert "photo" in surfaces


def test_missing_textures_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        render_scene(1, "easy", size=(320, 240), textures_dir=tmp_path / "nope")


def test_the_documented_tier_table_is_the_one_in_code():
    from pathlib import Path
    from companion.synth.tiers import tier_table
    doc = (Path(__file__).resolve().parents[2] / "companion" / "synth" / "README.md").read_text()
    assert tier_table() in doc


def test_foreign_cards_asked_for_are_laid_and_none_asked_changes_nothing():
    plain = render_scene(7, "medium", size=SMALL)
    assert render_scene(7, "medium", size=SMALL, foreign=0).jpeg == plain.jpeg
    rich = render_scene(7, "medium", size=SMALL, foreign=4)
    def unknowns(scene):
        return sum(c["kind"] == "unknown" for c in scene.truth["cards"])
    assert unknowns(rich) > unknowns(plain)
