"""The pages: live, scoreboard, history, one move (dispute), set-up, end of game, spectator."""
from __future__ import annotations

import re

from flask import (Blueprint, Response, abort, current_app, g, redirect, render_template, request,
                   send_from_directory, url_for)

from companion.game.cards import Card
from companion.store.db import Game, UnknownGame

from .. import glyphs
from ..advice import badge_text, drawable, is_complete_snake
from ..export import game_csv, game_json
from ..i18n import LANGUAGES
from ..security import local_path
from ..service import explain_winners
from . import selected_game, service

bp = Blueprint("pages", __name__)
PARTS = {"live", "scoreboard", "history", "watch", "banner", "hints"}
HINTS_COOKIE = "hints"   # the game whose hint panel this browser switched on
PICTURE_NAME = re.compile(r"^[0-9]+-[0-9a-f]+\.jpg$")


def page_context(game: Game | None) -> dict:
    """Everything a page or part shows, from one replayed view."""
    if game is None:
        return {"game": None}
    svc = service()
    view = svc.view(game)
    moves = [svc.move_json(game, m, view) for m in view.moves]
    illegal_only = bool(request.args.get("illegal"))
    ranking = sorted(game.players, key=lambda p: (-view.scores.get(p, {}).get("cards", 0),
                                                  -view.scores.get(p, {}).get("longest", 0)))
    return {
        "game": game, "view": view, "state": svc.state_json(game, view), "moves": moves,
        "shown_moves": [m for m in moves if not m["legal"]] if illegal_only else moves,
        "illegal_only": illegal_only, "last_move": moves[-1] if moves else None,
        "scores": view.scores, "winners": view.winners, "piles": view.piles,
        "ranking": ranking, "tiebreak": explain_winners(view.scores, view.winners),
        "leader": ranking[0] if ranking and view.scores.get(ranking[0], {}).get("cards") else None,
        "chain_glyphs": glyphs.chain_glyphs, "feed_error": svc.feed_error,
        "gradients": glyphs.gradient_pairs(), "rainbow": glyphs.COLOUR_HEX,
        "badge_text": badge_text, "is_complete_snake": is_complete_snake,
    }


def hints_on(game: Game | None) -> bool:
    """The hint panel is off unless this browser switched it on for this very game."""
    return game is not None and request.cookies.get(HINTS_COOKIE) == game.id


def hint_context(context: dict) -> dict:
    """The hint panel's switch and, only when it is on, its contents (Live page only)."""
    game = context.get("game")
    on = hints_on(game)
    if not on:
        return {"hints_on": False, "panel": None, "drawn": None, "drawable": []}
    view = context["view"]
    panel = service().hint_panel(game, g.lang, view)
    # a card drawn is asked about for the table it was drawn at: once the table
    # moves on (the card was laid), the panel goes back to the whole draw pile
    drawn, code = None, request.args.get("card")
    if panel is not None and code and request.args.get("at") == str(view.last_seq):
        drawn = service().drawn_card(game, code, g.lang, view)
    return {"hints_on": True, "panel": panel, "drawn": drawn,
            "drawable": drawable(service().counts(game, view), g.lang)}


def current_or_none() -> Game | None:
    try:
        return selected_game()
    except UnknownGame:
        if request.values.get("game"):
            raise
        return None


@bp.get("/")
def index():
    return redirect(url_for("pages.live") if current_or_none() else url_for("pages.setup"))


@bp.get("/live")
def live():
    context = page_context(current_or_none())
    return render_template("live.html", page="live", **context, **hint_context(context))


@bp.get("/scoreboard")
def scoreboard():
    return render_template("scoreboard.html", page="scoreboard", **page_context(current_or_none()))


@bp.get("/history")
def history():
    return render_template("history.html", page="history", **page_context(current_or_none()))


@bp.get("/moves/<int:frame>")
@bp.get("/moves/<int:frame>/<int:index>")
def move(frame: int, index: int = 0):
    game = selected_game()
    context = page_context(game)
    found = [m for m in context["moves"] if m["frame"] == frame]
    if not 0 <= index < len(found):
        abort(404, description=f"no move {index} at frame {frame}")
    m = found[index]
    view = context["view"]
    before = view.frames[m["evidence"]["frames"]["before"]].table \
        if m["evidence"]["frames"]["before"] is not None else []
    after = view.frames[frame].table if frame < len(view.frames) else []
    # a table judged as another (a retable) also shows what the camera read there
    sides = {"before": m["evidence"]["frames"]["before"], "after": frame}
    camera_read = {side: view.frames[i].observed for side, i in sides.items()
                   if i is not None and i < len(view.frames) and view.frames[i].retable}
    # ... and a table put in before another one, that the camera never sent, says so
    camera_inserted = [side for side, i in sides.items()
                       if i is not None and i < len(view.frames) and view.frames[i].inserted]
    # the card the move laid, read either way round, is outlined on the "after" table
    marked = [m["card"], Card.parse(m["card"]).flipped().code] if m.get("card") else []
    return render_template("move.html", page="history", move=m, table_before=before,
                           marked=marked, camera_read=camera_read,
                           camera_inserted=camera_inserted,
                           table_after=after, frame_seq=view.frames[frame].seq,
                           deck_cards=sorted({c.code for c in service().deck.cards()}),
                           **context)


@bp.get("/setup")
def setup():
    game = current_or_none()
    return render_template("setup.html", page="setup", **page_context(game))


@bp.get("/end")
def end():
    game = current_or_none()
    return render_template("end.html", page="end", games=service().store.games(),
                           **page_context(game))


@bp.get("/watch/<token>")
def watch(token: str):
    if token != current_app.extensions["spectator_token"]:
        abort(404, description="no such spectator view")
    return render_template("watch.html", page="watch", overlay=bool(request.args.get("overlay")),
                           **page_context(current_or_none()))


@bp.get("/parts/<name>")
def part(name: str):
    """One live region of a page, re-rendered after an event (the page never polls)."""
    if name not in PARTS:
        abort(404)
    context = page_context(current_or_none())
    if name == "hints":
        context.update(hint_context(context))
    return render_template(f"parts/{name}.html", page=name,
                           overlay=bool(request.args.get("overlay")), **context)


@bp.get("/evidence/<game_id>/<name>")
def evidence(game_id: str, name: str):
    game = service().game(game_id)
    if not PICTURE_NAME.match(name):
        abort(404)
    return send_from_directory(service().evidence_dir / game.id, name, mimetype="image/jpeg",
                               max_age=86400)


@bp.get("/export/<game_id>.json")
def export_json(game_id: str):
    game = service().game(game_id)
    response = current_app.json.response(game_json(service(), game))
    response.headers["Content-Disposition"] = f'attachment; filename="hisss-{game.id}.json"'
    return response


@bp.get("/export/<game_id>.csv")
def export_csv(game_id: str):
    game = service().game(game_id)
    return Response(game_csv(service(), game), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="hisss-{game.id}.csv"'})


def _back() -> str:
    return local_path(request.args.get("next"), url_for("pages.index"))


@bp.get("/lang/<code>")
def set_language(code: str):
    if code not in LANGUAGES:
        abort(404)
    response = redirect(_back())
    response.set_cookie("lang", code, max_age=365 * 86400, samesite="Lax")
    return response


@bp.get("/hints")
def toggle_hints():
    """Switch this browser's hint panel for one game on or off.

    A viewing preference like the language, not a referee action: no PIN, and it
    changes nothing anyone else sees.  It is kept per game, so every new game
    starts with hints off."""
    game = service().game(request.args.get("game") or None)
    response = redirect(local_path(request.args.get("next"), url_for("pages.live")))
    if hints_on(game):
        response.delete_cookie(HINTS_COOKIE, samesite="Lax")
    else:
        response.set_cookie(HINTS_COOKIE, game.id, max_age=2 * 86400, samesite="Lax")
    return response


@bp.get("/large")
def toggle_large():
    response = redirect(_back())
    response.set_cookie("large", "0" if request.cookies.get("large") == "1" else "1",
                        max_age=365 * 86400, samesite="Lax")
    return response
