"""Running the dashboard: `companion serve` and `companion demo`.

Werkzeug's threaded WSGI server: one thread per connection suits a family
table (a few dozen viewers at most) and streams server-sent events and MJPEG
without buffering, which the event latency depends on.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
from pathlib import Path

from werkzeug.serving import make_server

from companion.game.deck import PROJECT_ROOT

from .app import create_app, open_service
from .feed import FeedUnavailable, FilmFeed, RecordFeed, open_feed
from .service import PhotoReader

SAMPLE_RECORD = PROJECT_ROOT / "sample_images" / "sample_game.json"
SAMPLE_FILM = PROJECT_ROOT / "sample_images" / "game" / "truth.json"
DEFAULT_PORT = 8000


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "hisss-companion"


def _serve(app, host: str, port: int, pin: str, headline: str) -> int:
    # one line per request would bury the banner and the warnings that matter
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    server = make_server(host, port, app, threaded=True)
    server.daemon_threads = True
    local = host in ("127.0.0.1", "::1", "localhost")
    shown = "localhost" if local else (_lan_address() if host in ("0.0.0.0", "::", "") else host)
    url = f"http://{shown}:{server.port}"
    token = app.extensions["spectator_token"]
    print(f"{headline}\n"
          f"  dashboard:   {url}/live\n"
          f"  spectators:  {url}/watch/{token}\n"
          f"  referee PIN: {pin}\n"
          f"Press Ctrl+C to stop.", flush=True)
    if not local:
        print("  listening on the network: changes need the referee PIN", flush=True)

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        app.extensions["service"].stop_feed()
        server.server_close()
    return 0


def _lan_address() -> str:
    """This computer's address on the local network, for the printed links."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))   # UDP connect: picks a route, sends nothing
            return probe.getsockname()[0]
        except OSError:
            return socket.gethostname()


def _check_free(host: str, port: int) -> None:
    """Fail with one line if the address is taken (werkzeug would print a paragraph and exit)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _pin_of(app) -> str:
    return app.extensions["pin_guard"].pin


def serve(source: str | None, players: list[str] | None, host: str, port: int,
          data_dir: str | None, pin: str | None, pace: float, profile: str | None = None) -> int:
    """Resume the current game if it is the one asked for; otherwise start it."""
    _check_free(host, port)   # before touching the games: a busy port changes nothing
    if profile:
        from companion.vision.profile import load_profile
        load_profile(profile)     # a profile that cannot be read is refused now, not at the first picture
    service = open_service(data_dir or default_data_dir())
    app = create_app(service, pin=pin)
    app.config.update(FEED_PACE=pace, PROFILE=profile)
    service.read_photo = PhotoReader(profile)
    current = service.store.current_game()
    if current is not None:
        service.show_last_picture(current)

    def feed_for(game_source: str, game_players):
        return open_feed(game_source, pace=pace, players=list(game_players), profile=profile)
    if players:
        wanted_source = source or "upload"
        same = (current is not None and current.finished_at is None
                and list(current.players) == players and current.source == wanted_source)
        if same:
            service.start_feed(current, feed_for(current.source, current.players))
            headline = f"Resuming game {current.id}: {', '.join(current.players)}"
        else:
            feed = feed_for(wanted_source, players)
            game = service.new_game(players, wanted_source, feed)
            headline = f"New game {game.id}: {', '.join(players)}"
    elif source:
        raise FeedUnavailable("--source needs --players (in turn order), e.g. --players Ann,Ben,Cy")
    elif current is not None and current.finished_at is None:
        service.start_feed(current, feed_for(current.source, current.players))
        headline = f"Resuming game {current.id}: {', '.join(current.players)}"
    elif current is not None:
        headline = f"Game {current.id} is over: start the next one on the set-up page."
    else:
        headline = "No game yet: start one on the set-up page."
    return _serve(app, host, port, _pin_of(app), headline)


def demo(host: str, port: int, pace: float, data_dir: str | None = None,
         pause: float = 12.0) -> int:
    """The bundled sample game with no camera and no set-up, played again and again.

    The renderer's filmed sample game (sample_images/game/) when it is there:
    its frames as the camera picture at their own frame rate, its record's
    tables settled as the film shows them.  Otherwise the symbolic sample
    game, one table every `pace` seconds, drawn as card glyphs.  After the
    last turn the final scores stay up for `pause` seconds, then a new game
    starts, so a screen left on the demo never goes stale.
    """
    _check_free(host, port)
    if SAMPLE_FILM.exists():
        FilmFeed(SAMPLE_FILM)   # fail now, in one line, if it cannot be read
        what = "the rendered sample game, at its own speed"

        def make_feed():
            feed = FilmFeed(SAMPLE_FILM)
            return feed, feed.players, "sample_images/game"
    elif SAMPLE_RECORD.exists():
        record = json.loads(SAMPLE_RECORD.read_text(encoding="utf-8"))
        RecordFeed(record)
        what = f"the sample game, one turn every {pace:g} s"

        def make_feed():
            return RecordFeed(record, pace=pace, first_delay=2.0), record["players"], SAMPLE_RECORD.name
    else:
        raise FeedUnavailable(f"the sample game is missing: {SAMPLE_RECORD}")
    folder = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="hisss-demo-"))
    service = open_service(folder)
    app = create_app(service)
    stop, started = threading.Event(), threading.Event()

    def play_forever():
        while not stop.is_set():
            feed, players, source = make_feed()
            service.new_game(players, source, feed)
            started.set()
            service.wait_for_feed()
            if stop.wait(pause):
                return

    demo = threading.Thread(target=play_forever, name="demo", daemon=True)
    demo.start()
    try:
        started.wait()
        players = service.store.current_game().players
        return _serve(app, host, port, _pin_of(app), f"Demo: {what} ({', '.join(players)})")
    finally:
        stop.set()
        service.stop_feed()
        if not data_dir:    # a demo's games were never meant to outlive it
            demo.join(timeout=5)
            service.close()
            shutil.rmtree(folder, ignore_errors=True)
