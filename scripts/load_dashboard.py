#!/usr/bin/env python3
"""Load check of the dashboard: many viewers on the event stream and the video at once.

Starts `companion serve` on loopback with a simulated game replayed from a
record, connects N viewers to /api/events and N to /video.mjpg, and reports
how long each move took from the moment its table was settled on the server
(`settled_at` in the event) to the moment each viewer had read it.  Both
clocks are this machine's, so the figure is end to end: store, replay,
fan-out and the socket.  Bounded in time; loopback only.

    .venv/bin/python scripts/load_dashboard.py [--viewers 20] [--pace 0.3] [--seed 7] [--limit 60]
"""
from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"   # loopback only, whatever happens


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class EventViewer(threading.Thread):
    """Reads /api/events; keeps (received - settled_at) for every table event."""

    def __init__(self, port: int, stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.stop = port, stop
        self.latencies: list[float] = []
        self.by_seq: dict[int, float] = {}
        self.messages = 0
        self.finished = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            conn.request("GET", "/api/events")
            response = conn.getresponse()
            while not self.stop.is_set():
                line = response.readline()
                if not line:
                    break
                if not line.startswith(b"data: "):
                    continue
                received = time.time()
                message = json.loads(line[6:])
                self.messages += 1
                if message.get("type") == "table" and message.get("settled_at"):
                    self.latencies.append(received - message["settled_at"])
                    self.by_seq[message["state"]["seq"]] = received - message["settled_at"]
                if message.get("state") and message["state"].get("finished"):
                    self.finished.set()
            conn.close()
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if not self.stop.is_set():   # the server going away at the end is expected
                self.error = str(exc)


class VideoViewer(threading.Thread):
    """Reads /video.mjpg and counts the pictures and bytes received."""

    def __init__(self, port: int, stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.stop = port, stop
        self.pictures = 0
        self.bytes = 0
        self.error: str | None = None

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            conn.request("GET", "/video.mjpg")
            response = conn.getresponse()
            while not self.stop.is_set():
                chunk = response.read1(65536)
                if not chunk:
                    break
                self.bytes += len(chunk)
                self.pictures += chunk.count(b"\xff\xd8\xff")
            conn.close()
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if not self.stop.is_set():   # the server going away at the end is expected
                self.error = str(exc)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=20, help="viewers on each stream (default 20)")
    parser.add_argument("--pace", type=float, default=0.3, help="seconds between settled tables")
    parser.add_argument("--seed", type=int, default=7, help="seed of the simulated game")
    parser.add_argument("--limit", type=float, default=60.0, help="stop after this many seconds")
    parser.add_argument("--target-ms", type=float, default=100.0, help="latency target, 95th percentile")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from companion.game.simulate import simulate_game
    game = simulate_game(["Ann", "Ben", "Cy"], args.seed, illegal_rate=0.1)
    work = Path(tempfile.mkdtemp(prefix="hisss-load-"))
    record = work / "game.json"
    record.write_text(json.dumps(game.record))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--source", str(record),
         "--players", "Ann,Ben,Cy", "--data", str(work / "data"), "--host", HOST,
         "--port", str(port), "--pace", str(args.pace)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    stop = threading.Event()
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("error: the server did not start", file=sys.stderr)
                    return 2
                time.sleep(0.05)
        events = [EventViewer(port, stop) for _ in range(args.viewers)]
        videos = [VideoViewer(port, stop) for _ in range(args.viewers)]
        for viewer in events + videos:
            viewer.start()
        started = time.monotonic()
        end = started + args.limit
        while time.monotonic() < end and not all(v.finished.is_set() for v in events):
            time.sleep(0.1)
        elapsed = time.monotonic() - started
        time.sleep(0.3)
    finally:
        stop.set()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()

    latencies = [x * 1000 for v in events for x in v.latencies]
    per_viewer = [len(v.latencies) for v in events]
    errors = [v.error for v in events + videos if v.error]
    frames = len(game.record["frames"])
    print(f"viewers: {args.viewers} on /api/events, {args.viewers} on /video.mjpg; "
          f"game of {frames} tables at {args.pace:g} s each; {elapsed:.1f} s")
    if latencies:
        print(f"event latency, settled -> read by a viewer (ms), {len(latencies)} deliveries: "
              f"median {statistics.median(latencies):.1f}, p95 {percentile(latencies, 0.95):.1f}, "
              f"max {max(latencies):.1f}")
    print(f"table events per viewer: min {min(per_viewer)}, max {max(per_viewer)} "
          f"(the game has {frames - 1} after the one shown at connect)")
    pictures = [v.pictures for v in videos]
    print(f"video pictures per viewer: min {min(pictures)}, max {max(pictures)}; "
          f"{sum(v.bytes for v in videos) / 1e6:.1f} MB in all")
    worst = sorted({seq: max(v.by_seq.get(seq, 0) for v in events)
                    for seq in events[0].by_seq}.items(), key=lambda kv: -kv[1])[:5]
    print("slowest events (seq: worst ms): " + ", ".join(f"{s}: {ms * 1000:.0f}" for s, ms in worst))
    if errors:
        print(f"viewer errors: {len(errors)} (first: {errors[0]})")
    ok = bool(latencies) and percentile(latencies, 0.95) < args.target_ms and not errors
    print(f"target p95 < {args.target_ms:g} ms: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
