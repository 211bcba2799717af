"""`companion demo` and `companion serve` as a user runs them."""
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from .webhelpers import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]


def run(*args, timeout=30):
    return subprocess.run([sys.executable, "-m", "companion", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_demo_serves_the_sample_game_on_localhost(tmp_path):
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", str(port),
                               "--pace", "0.1", "--data", str(tmp_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        state = wait_for(lambda: (s := json.loads(urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/state", timeout=5).read()))["moves"] >= 2 and s)
        assert state["players"] and state["table"]
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/live", timeout=5).read().decode()
        assert "Hisss" in page
    finally:
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=10)
    assert server.returncode == 0
    assert f"http://localhost:{port}/live" in out and "referee PIN:" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("stop_with", [signal.SIGINT, signal.SIGTERM])
def test_demo_without_a_data_folder_leaves_nothing_behind(tmp_path, stop_with):
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    # Ctrl+C as a terminal delivers it: a suite started in the background (nohup, CI) hands its
    # children SIGINT ignored, and the demo would rightly not stop
    server = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", str(port), "--pace", "0.1"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_for(lambda: json.loads(urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/state", timeout=5).read())["moves"] >= 1)
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith("hisss-demo-")]
    finally:
        server.send_signal(stop_with)
        out, _ = server.communicate(timeout=15)
    assert server.returncode == 0 and "Traceback" not in out, out
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("hisss-demo-")]


@pytest.mark.parametrize("args, message", [
    (["serve", "--source", "game.json"], "--players"),
    (["serve", "--source", "/no/such/game.json", "--players", "Ann,Ben"], "cannot read game record"),
    (["serve", "--players", "Solo", "--source", "upload"], "2 to 5 players"),
    (["serve", "--port", "not-a-port"], "not a port number"),
    (["serve", "--port", "70000"], "not a port number"),
    (["serve", "--pace", "inf"], "not a number of seconds"),
    (["demo", "--pace", "nan"], "not a number of seconds"),
    (["demo", "--pace", "0"], "not a number of seconds"),
    (["serve", "--profile", "/no/such/profile.json"], "no such profile file"),
    (["serve", "--pin", "12"], "not a six-digit PIN"),
    (["serve", "--pin", ""], "not a six-digit PIN"),
])
def test_serve_refuses_bad_input_in_one_line(tmp_path, args, message):
    result = run(*args, "--data", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.startswith("error:") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_serve_refuses_a_port_in_use(tmp_path):
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = run("serve", "--port", str(taken.getsockname()[1]), "--data", str(tmp_path))
    assert result.returncode == 2 and "cannot listen" in result.stderr
    assert not (tmp_path / "companion.sqlite3").exists()   # nothing was started
