"""The Flask application factory."""
from __future__ import annotations

import secrets
from pathlib import Path

from flask import Flask, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from companion.store.db import Store, StoreError, UnknownGame

from . import i18n
from .calibrate import CalibrationUnavailable
from .security import PinGuard, csrf_token, is_referee, new_pin
from .service import ActionError, GameService

MAX_UPLOAD_BYTES = 12 * 1024 * 1024   # a phone photo is 2-6 MB


def open_service(data_dir: str | Path) -> GameService:
    data_dir = Path(data_dir)
    store = Store(data_dir / "companion.sqlite3")
    return GameService(store, data_dir / "evidence")


def create_app(service: GameService, pin: str | None = None, testing: bool = False) -> Flask:
    app = Flask(__name__)
    store = service.store
    # The secret key, PIN and spectator token live in the database, so a restart
    # keeps sessions, the printed PIN and the spectator URL valid.
    app.config.update(
        SECRET_KEY=store.setting_or_create("secret_key", lambda: secrets.token_hex(32)),
        MAX_CONTENT_LENGTH=MAX_UPLOAD_BYTES,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        TESTING=testing,
    )
    app.json.sort_keys = False   # keep the contract's field order in the JSON answers
    if pin:
        store.set_setting("pin", pin)
    app.extensions["service"] = service
    app.extensions["pin_guard"] = PinGuard(store.setting_or_create("pin", new_pin))
    app.extensions["spectator_token"] = store.setting_or_create(
        "spectator_token", lambda: secrets.token_urlsafe(9))

    from .views import api, pages, referee
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(referee.bp)

    @app.before_request
    def choose_language():
        g.lang = i18n.choose_language()
        g.t = i18n.translator(g.lang)

    @app.context_processor
    def page_globals():
        return {"t": g.t, "lang": g.lang, "languages": i18n.LANGUAGES,
                "csrf_token": csrf_token, "is_referee": is_referee(),
                "large": request.cookies.get("large") == "1",
                "spectator_token": app.extensions["spectator_token"]}

    @app.after_request
    def headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if response.mimetype == "text/html":
            response.headers.setdefault(
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                "frame-ancestors *")
            response.vary.add("Accept-Language")
            response.vary.add("Cookie")
        return response

    def wants_json() -> bool:
        return request.path.startswith("/api/") or request.path.endswith((".json", ".csv"))

    def error(status: int, message: str):
        if wants_json():
            return jsonify({"error": message}), status
        return render_template("error.html", status=status, message=message), status

    @app.errorhandler(UnknownGame)
    def unknown_game(exc):
        return error(404, str(exc))

    @app.errorhandler(ActionError)
    @app.errorhandler(StoreError)
    @app.errorhandler(CalibrationUnavailable)
    def bad_action(exc):
        return error(400, str(exc))

    from companion.vision.imageio import ImageLoadError

    @app.errorhandler(ImageLoadError)
    def not_an_image(exc):
        return error(415, str(exc))

    @app.errorhandler(HTTPException)
    def http_error(exc):
        return error(exc.code or 500, exc.description or exc.name)

    return app
