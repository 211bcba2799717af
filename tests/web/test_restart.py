"""Kill a real server mid-game (SIGKILL: no clean-up at all) and restart it: nothing is lost."""
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from companion.game.referee import judge_record

from .webhelpers import PIN, free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "sample_images" / "sample_game.json"


def get(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return json.loads(r.read())


def post(port: int, path: str, body: dict) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-Referee-PIN": PIN})
    with urllib.request.urlopen(request, timeout=5) as r:
        return json.loads(r.read())


def start(data: Path, port: int, log) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--source", str(RECORD), "--players", "Ann,Ben,Cy",
         "--data", str(data), "--port", str(port), "--pin", PIN, "--pace", "0.35"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def test_a_killed_server_resumes_the_same_game_with_nothing_lost(tmp_path):
    record = json.loads(RECORD.read_text())
    expected = judge_record(record)["moves"]
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    server = start(tmp_path / "data", port, log)
    try:
        state = wait_for(lambda: (s := get(port, "/api/state"))["moves"] >= 3 and s)
        first = get(port, "/api/moves")["moves"]
        post(port, "/api/override", {"frame": first[0]["frame"], "legal": False, "stands": True,
                                     "reason": "kept across the crash"})
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
        before_kill = get_moves_offline(tmp_path / "data", state["game"])
        assert 3 <= len(before_kill) < len(expected)   # killed mid-game

        server = start(tmp_path / "data", port, log)
        final = wait_for(lambda: (s := get(port, "/api/state"))["moves"] == len(expected) and s,
                         timeout=30)
        assert final["game"] == state["game"]          # the same game, resumed
        moves = get(port, "/api/moves")
        judged = [{k: m[k] for k in expected[0]} for m in moves["moves"]]
        # every frame once: the verdicts are the judge's (the overridden move aside)
        assert [m["frame"] for m in judged] == [m["frame"] for m in expected]
        assert judged[1:] == expected[1:]
        assert moves["moves"][0]["override"]["reason"] == "kept across the crash"
        assert moves["moves"][0]["stands"] is True
        assert before_kill == [m["card"] for m in moves["moves"][:len(before_kill)]]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def get_moves_offline(data: Path, game_id: str) -> list:
    """What the killed server had committed, read straight from its database."""
    from companion.store.db import Store
    from companion.game.history import replay
    store = Store(data / "companion.sqlite3")
    try:
        game = store.game(game_id)
        return [m["card"] for m in replay(game.players, store.events(game.id)).moves]
    finally:
        store.close()
