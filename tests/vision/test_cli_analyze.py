"""`companion analyze` end to end, above all with bad input in the batch."""
import json
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from companion.cli import main


@pytest.fixture
def batch(tmp_path, small_scene):
    (tmp_path / "a_good.jpg").write_bytes(small_scene.jpeg)
    (tmp_path / "b_empty.jpg").write_bytes(b"")
    (tmp_path / "c_text.png").write_bytes(b"not an image at all\n")
    (tmp_path / "d_cut.jpg").write_bytes(small_scene.jpeg[: len(small_scene.jpeg) // 3])
    (tmp_path / "notes.txt").write_text("ignored: not an image name")
    return tmp_path


def test_bad_files_are_reported_and_the_batch_goes_on(batch, capsys):
    code = main(["analyze", "--json", str(batch)])
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["image"]["path"].split("/")[-1] for r in rows] == ["a_good.jpg", "b_empty.jpg", "c_text.png", "d_cut.jpg"]
    good, *bad = rows
    assert good["image"]["width"] == 960 and good["cards"] and "error" not in good
    for r in bad:
        assert r["error"] and set(r) == {"image", "error"}
    assert code == 2
    err_lines = err.strip().splitlines()
    assert len(err_lines) == 3 and all(line.startswith("error: ") for line in err_lines)
    assert "b_empty.jpg" in err_lines[0] and "d_cut.jpg" in err_lines[2]


def test_json_follows_the_contract(batch, capsys):
    main(["analyze", "--json", str(batch / "a_good.jpg")])
    result = json.loads(capsys.readouterr().out)
    ids = [c["id"] for c in result["cards"]]
    assert ids == list(range(len(ids)))
    for c in result["cards"]:
        assert c["kind"] in {"head", "tail", "middle", "rainbow_head", "rainbow_tail", "back", "unknown"}
        n = {"middle": 2, "head": 1, "tail": 1}.get(c["kind"], 0)
        assert len(c["colours"]) == n
        assert len(c["ends"]) == (n if c["kind"] not in ("rainbow_head", "rainbow_tail") else 1)
        assert len(c["corners"]) == 4 and 0.0 <= c["confidence"] <= 1.0
    faces = {c["id"] for c in result["cards"] if c["kind"] not in ("back", "unknown")}
    in_chains = [i for s in result["snakes"] for i in s["cards"]]
    assert sorted(in_chains) == sorted(faces)  # every face-up card in exactly one chain
    for snake in result["snakes"]:  # the chain as read: neighbours' touching colours agree here
        assert len(snake["codes"]) == len(snake["cards"])
    assert result["problems"] == []


def test_summary_and_annotation(batch, tmp_path, capsys):
    out_dir = tmp_path / "drawn"
    code = main(["analyze", str(batch / "a_good.jpg"), "--annotate", str(out_dir)])
    assert code == 0
    assert "a_good.jpg:" in capsys.readouterr().out
    assert (out_dir / "a_good.png").stat().st_size > 1000


def test_missing_profile_is_one_line_error(batch):
    proc = subprocess.run([sys.executable, "-m", "companion", "analyze", str(batch / "a_good.jpg"),
                           "--profile", str(batch / "nope.json")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("content", [
    {"players": ["Ann", "Ben"], "frames": []},            # a game record given by mistake
    {},
    {"format": "hisss-calibration/9", "colours": ["red"]},
])
def test_a_json_file_that_is_no_profile_is_refused(batch, tmp_path, content):
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(content))
    proc = subprocess.run([sys.executable, "-m", "companion", "analyze", str(batch / "a_good.jpg"),
                           "--profile", str(wrong)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"error: {wrong}: not a calibration profile (no \"format\": \"hisss-calibration/1\"); " \
                          "make one with companion calibrate\n"


def test_the_bundled_default_profile_is_accepted(batch):
    proc = subprocess.run([sys.executable, "-m", "companion", "analyze", str(batch / "a_good.jpg"), "--json",
                           "--profile", str(Path(__file__).parents[2] / "calibration" / "default_profile.json")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cards"]


def test_pictures_too_small_to_hold_a_card_hold_none(tmp_path, small_scene, capsys):
    import cv2
    import numpy as np
    (tmp_path / "a_good.jpg").write_bytes(small_scene.jpeg)
    for name, (h, w) in {"b_dot.png": (1, 1), "c_square.png": (48, 48), "d_strip.png": (60, 2000)}.items():
        cv2.imwrite(str(tmp_path / name), np.full((h, w, 3), 128, np.uint8))
    code = main(["analyze", "--json", str(tmp_path)])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and len(rows) == 4 and rows[0]["cards"]
    assert all(r["cards"] == [] and "error" not in r for r in rows[1:])


def test_annotations_never_draw_over_an_input_or_each_other(tmp_path, small_scene, capsys):
    import cv2
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.jpg").write_bytes(small_scene.jpeg)
    png = tmp_path / "one" / "y.png"
    cv2.imwrite(str(png), cv2.imdecode(np.frombuffer(small_scene.jpeg, np.uint8), cv2.IMREAD_COLOR))
    before = png.read_bytes()
    code = main(["analyze", str(tmp_path / "one" / "x.jpg"), str(tmp_path / "two" / "x.jpg"), str(png),
                 "--annotate", str(tmp_path / "one")])
    capsys.readouterr()
    assert code == 0 and png.read_bytes() == before
    drawn = sorted(p.name for p in (tmp_path / "one").glob("*.png"))
    assert drawn == ["x-2.png", "x.png", "y-2.png", "y.png"]
