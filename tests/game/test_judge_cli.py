import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_images" / "sample_game.json"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_sample_game_is_legal_with_a_join_and_a_collection(capsys):
    status, out, err = run(capsys, "judge", str(SAMPLE), "--json")
    assert status == 0 and err == ""
    result = json.loads(out)
    actions = [m["action"] for m in result["moves"]]
    assert all(m["legal"] for m in result["moves"])
    assert "join" in actions and "collect" in actions
    assert result["winners"] == ["Ann"]


def test_readable_account_ends_with_the_score_table(capsys):
    status, out, _ = run(capsys, "judge", str(SAMPLE))
    assert status == 0
    lines = out.strip().splitlines()
    assert lines[0].startswith("frame 1, turn 1: Ann")
    assert "player" in out and "cards" in out and lines[-1] == "Winner: Ann"


def test_standard_input(monkeypatch, capsys):
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO(SAMPLE.read_text()))
    status, out, _ = run(capsys, "judge", "-", "--json")
    assert status == 0 and json.loads(out)["moves"]


def test_an_illegal_move_is_a_verdict_not_an_error(tmp_path, capsys):
    f = tmp_path / "g.json"
    f.write_text(json.dumps({"players": ["A", "B"], "frames": [
        {"table": [["M-red-blue"]]}, {"table": [["M-red-blue", "M-green-yellow"]]}]}))
    status, out, err = run(capsys, "judge", str(f), "--json")
    assert status == 0 and err == ""
    assert json.loads(out)["moves"][0]["code"] == "colour_mismatch"


@pytest.mark.parametrize("text, expected", [
    ("{not json", "not valid JSON"),
    ("[" * 100_000, "nested too deeply"),
    ('{"players": ["A", "B"], "frames": [{"table": [["H-pink"]]}]}', "frame 0"),
    ('{"players": ["A", "B"], "frames": [{"table": []}, {"table": [["Q"]]}]}', "frame 1"),
    ('{"players": ["A", "B"], "frames": [{"table": []}, {"tabel": []}]}', "frame 1: missing field 'table'"),
    ('{"frames": []}', "missing field 'players'"),
])
def test_bad_records_give_one_error_line_and_exit_2(tmp_path, capsys, text, expected):
    f = tmp_path / "bad.json"
    f.write_text(text)
    status, out, err = run(capsys, "judge", str(f))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and expected in err


def test_missing_file(tmp_path, capsys):
    status, _, err = run(capsys, "judge", str(tmp_path / "nope.json"))
    assert status == 2 and "no such file" in err


def test_python_dash_m_runs_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"players": ["A", "B"], "frames": [{"table": [["X-1"]]}]}')
    proc = subprocess.run([sys.executable, "-m", "companion", "judge", str(bad)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: frame 0")
    ok = subprocess.run([sys.executable, "-m", "companion", "judge", str(SAMPLE), "--json"],
                        capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0 and json.loads(ok.stdout)["winners"] == ["Ann"]
