"""The dashboard's blueprints: pages (read-only), api (JSON, events, video), referee (forms)."""
from __future__ import annotations

from flask import current_app, request

from companion.store.db import Game


def service():
    return current_app.extensions["service"]


def selected_game() -> Game:
    """The game named by ?game=..., else the current one; 404 when there is none."""
    return service().game(request.values.get("game") or None)
