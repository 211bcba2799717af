"""The dashboard's blueprints: pages (read-only), api (JSON, events, video), referee (forms)."""
from __future__ import annotations

import json

from flask import current_app, request

from companion.store.db import Game

from ..service import ActionError


def service():
    return current_app.extensions["service"]


def table_field(text: str | None):
    """An optional form field holding a table as JSON chains of card codes."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ActionError('the table must be JSON chains of card codes, e.g. [["H-red", "M-red-blue"]]') from None


def take_upload(game: Game, missing: str) -> None:
    """The request's photo (field 'photo', optional typed 'table') as the turn's table."""
    photo = request.files.get("photo")
    if photo is None or not photo.filename:
        raise ActionError(missing)
    service().upload_photo(game, photo.read(), photo.filename,
                           table=table_field(request.form.get("table")))


def selected_game() -> Game:
    """The game named by ?game=..., else the current one; 404 when there is none."""
    return service().game(request.values.get("game") or None)
