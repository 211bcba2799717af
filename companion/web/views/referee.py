"""The referee's forms: log in, new game, calibration, override, correction, undo, end.

Every form posts the session's CSRF token and needs a referee session
(`security.referee_required`); each action is the same service call the JSON API makes.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from flask import Blueprint, current_app, redirect, render_template, request, session, url_for

from ..feed import open_feed
from ..security import check_csrf, local_path, referee_required
from ..service import ActionError, PhotoReader
from . import selected_game, service, take_upload

bp = Blueprint("referee", __name__)


def _back(default: str) -> str:
    return local_path(request.form.get("next"), default)


@bp.get("/login")
def login_form():
    return render_template("login.html", page="login", next=request.args.get("next", "/live"))


@bp.post("/login")
def login():
    check_csrf()
    if not current_app.extensions["pin_guard"].check(request.form.get("pin", "").strip()):
        return render_template("login.html", page="login", wrong=True,
                               next=request.form.get("next", "/live")), 403
    session["referee"] = True
    session.permanent = True
    return redirect(_back(url_for("pages.live")))


@bp.post("/logout")
def logout():
    check_csrf()
    session.pop("referee", None)
    return redirect(url_for("pages.live"))


def _open(source: str, players) -> object:
    try:
        return open_feed(source, pace=current_app.config.get("FEED_PACE", 4.0), players=list(players),
                         profile=current_app.config.get("PROFILE"))
    except ValueError as exc:   # FeedUnavailable, a missing model, a bad camera spec...
        raise ActionError(str(exc)) from None


@bp.post("/setup/new-game")
@referee_required
def new_game():
    players = [p for p in request.form.getlist("player") if p.strip()]
    kind = request.form.get("source_kind", "upload")
    value = request.form.get(f"source_{kind}", "").strip()
    if kind == "upload":
        source = "upload"
    elif kind in ("camera", "url", "file"):
        if not value:
            raise ActionError("say which camera, stream or file to use")
        source = value
    else:
        raise ActionError(f"unknown source {kind!r}")
    service().new_game(players, source, _open(source, players))
    return redirect(url_for("pages.live"))


@bp.post("/setup/restart-source")
@referee_required
def restart_source():
    """Open the current game's source again (a camera unplugged, a stream that died)."""
    game = selected_game()
    if service().view(game).finished:
        raise ActionError("this game is over: start a new one")
    service().start_feed(game, _open(game.source, game.players))
    return redirect(url_for("pages.live"))


@bp.post("/setup/calibrate")
@referee_required
def calibrate():
    photos = [f for f in request.files.getlist("photo") if f.filename]
    if not photos:
        raise ActionError("choose a photo of the whole deck laid out face up")
    out = service().evidence_dir.parent / "profile.json"
    # The photos are needed only while the profile is learnt; a server left
    # running for months must not keep every deck photo ever uploaded.
    with tempfile.TemporaryDirectory(prefix="calibrate-") as folder:
        paths = [Path(folder) / f"deck-{i}.jpg" for i in range(len(photos))]
        for photo, path in zip(photos, paths):
            photo.save(path)
        result = service().calibrate(paths, out)
    current_app.config["PROFILE"] = str(result.profile)   # new games and photos use it
    service().read_photo = PhotoReader(str(result.profile))
    return render_template("setup.html", page="setup", calibration=result,
                           **_setup_context())


def _setup_context():
    from .pages import current_or_none, page_context
    return page_context(current_or_none())


@bp.post("/moves/<int:frame>/<int:index>/override")
@referee_required
def override(frame: int, index: int):
    game = selected_game()
    verdict = request.form.get("verdict")   # legal | illegal_stands | illegal_void | keep
    legal, stands = {"legal": (True, True), "illegal_stands": (False, True),
                     "illegal_void": (False, False)}.get(verdict, (None, None))
    service().override(game, frame, index, legal=legal, stands=stands,
                       player=request.form.get("player") or None,
                       reason=request.form.get("reason"))
    return redirect(url_for("pages.move", frame=frame, index=index, game=game.id))


@bp.post("/moves/<int:frame>/correct")
@referee_required
def correct(frame: int):
    game = selected_game()
    service().correct(game, frame, request.form.get("from", ""), request.form.get("to", ""),
                      request.form.get("reason"))
    return redirect(url_for("pages.move", frame=frame, game=game.id))


@bp.post("/undo")
@referee_required
def undo():
    game = selected_game()
    service().undo(game, request.form.get("seq"), request.form.get("reason"))
    return redirect(_back(url_for("pages.history")))


@bp.post("/finish")
@referee_required
def finish():
    game = selected_game()
    service().stop_feed()
    service().finish(game)
    return redirect(url_for("pages.end"))


@bp.post("/upload")
@referee_required
def upload():
    """The set-up/live page's photo form: same as POST /api/upload."""
    take_upload(selected_game(), "choose a photo of the table")
    return redirect(url_for("pages.live"))
