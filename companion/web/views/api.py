"""The JSON API, the event stream and the video (see the README's API section)."""
from __future__ import annotations

import queue

from flask import Blueprint, Response, abort, jsonify, request, stream_with_context

from ..security import referee_required
from ..service import ActionError
from . import selected_game, service, take_upload

bp = Blueprint("api", __name__)
KEEPALIVE_SECONDS = 15.0
VIDEO_REPEAT_SECONDS = 2.0   # resend the picture this often so a stalled stream recovers
MAX_STREAMS = 200            # each open stream holds a server thread: refuse beyond this


@bp.get("/api/state")
def state():
    game = selected_game()
    return jsonify(service().state_json(game))


@bp.get("/api/moves")
def moves():
    game = selected_game()
    out = service().moves_json(game)
    if request.args.get("illegal"):
        out["moves"] = [m for m in out["moves"] if not m["legal"]]
    return jsonify(out)


@bp.get("/api/scores")
def scores():
    return jsonify(service().scores_json(selected_game()))


@bp.get("/api/games")
def games():
    return jsonify({"games": [{"game": g.id, "players": list(g.players), "source": g.source,
                               "created_at": g.created_at, "finished": g.finished_at is not None}
                              for g in service().store.games()]})


@bp.get("/api/events")
def events():
    svc = service()
    if svc.bus.count >= MAX_STREAMS:
        abort(503, description="too many viewers; try again later")
    q = svc.bus.subscribe()
    first = svc.connect_message()

    def stream():
        try:
            yield f"retry: 2000\ndata: {first}\n\n"
            while True:
                try:
                    message = q.get(timeout=KEEPALIVE_SECONDS)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                yield f"data: {message}\n\n"
        finally:
            svc.bus.unsubscribe(q)

    return Response(stream_with_context(stream()), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.get("/video.mjpg")
def video():
    buffer = service().video
    part_head = b"\r\n--frame\r\nContent-Type: image/jpeg\r\n\r\n"

    def stream():
        version, jpeg = buffer.latest()
        yield part_head[2:]
        while True:
            # Each part's headers go out with the previous picture: browsers show a
            # part only once the next one has begun, so a picture is shown the
            # moment it is sent rather than when the one after it arrives.
            yield jpeg + part_head
            version, jpeg = buffer.wait_newer(version, VIDEO_REPEAT_SECONDS)

    return Response(stream(), mimetype="multipart/x-mixed-replace; boundary=frame",
                    headers={"Cache-Control": "no-cache"}, direct_passthrough=True)


def _json_body() -> dict:
    body = request.get_json(silent=True)
    if body is None:
        body = request.form.to_dict()
    if not isinstance(body, dict):
        abort(400, description="send a JSON object")
    return body


def _boolean(value):
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "1", "yes", "on", "legal"):
        return True
    if text in ("false", "0", "no", "off", "illegal"):
        return False
    raise ActionError(f"not true or false: {value!r}")


@bp.post("/api/override")
@referee_required
def override():
    """Change a move's verdict (legal, stands, player), correct a misread card, or have the
    table at a frame judged as another table ('table': chains of codes; with 'before', also
    a table judged just before it), with a reason."""
    body = _json_body()
    game = selected_game() if not body.get("game") else service().game(body["game"])
    if "frame" not in body:
        raise ActionError("say which move: 'frame' (and 'index' when a frame has several)")
    card = body.get("card")
    if "table" in body:
        service().retable(game, body["frame"], body["table"], body.get("reason"),
                          before=body.get("before"))
    elif card:
        if not isinstance(card, dict) or not card.get("from") or not card.get("to"):
            raise ActionError("'card' is {\"from\": code as read, \"to\": the right code}")
        service().correct(game, body["frame"], card["from"], card["to"], body.get("reason"))
    else:
        service().override(game, body["frame"], body.get("index", 0),
                           legal=_boolean(body.get("legal")), stands=_boolean(body.get("stands")),
                           player=body.get("player") or None, reason=body.get("reason"))
    return jsonify({"ok": True, "state": service().state_json(game),
                    "scores": service().scores_json(game)})


@bp.post("/api/undo")
@referee_required
def undo():
    body = _json_body()
    game = selected_game() if not body.get("game") else service().game(body["game"])
    service().undo(game, body.get("seq"), body.get("reason"))
    return jsonify({"ok": True, "state": service().state_json(game)})


@bp.post("/api/upload")
@referee_required
def upload():
    """A photo of the table for the current turn (multipart field 'photo').

    An optional 'table' field (JSON chains of card codes) gives the table as a
    person reads it, for when no recogniser is installed or it misread.
    """
    game = selected_game()
    take_upload(game, "send the picture as the multipart field 'photo'")
    return jsonify({"ok": True, "state": service().state_json(game)}), 201
