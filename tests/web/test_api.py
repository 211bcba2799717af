"""The JSON API of CONTRACT.md, the event stream and the video, refusals included."""
import io
import json

import cv2
import numpy as np
import pytest

from companion.game.referee import judge_record

from .webhelpers import PIN, referee_session

MOVE_KEYS = {"frame", "turn", "player", "card", "action", "legal", "code", "reason", "collected"}


def png_bytes(width=64, height=48) -> bytes:
    ok, buf = cv2.imencode(".png", np.full((height, width, 3), 120, np.uint8))
    return buf.tobytes()


@pytest.mark.parametrize("path", ["/api/state", "/api/moves", "/api/scores"])
def test_reading_without_a_game_is_a_404_with_a_reason(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "set-up" in response.get_json()["error"]


@pytest.mark.parametrize("path", ["/api/state", "/api/moves", "/api/scores"])
def test_an_unknown_game_is_a_404(client, game, path):
    game(2)
    response = client.get(path + "?game=doesnotexist")
    assert response.status_code == 404 and "doesnotexist" in response.get_json()["error"]


def test_state_moves_and_scores_follow_the_referee(client, game, sample_record):
    g = game()
    expected = judge_record(sample_record)
    state = client.get("/api/state").get_json()
    assert state["game"] == g.id and state["players"] == sample_record["players"]
    assert state["table"] == sample_record["frames"][-1]["table"]
    assert state["desync"] is False and isinstance(state["cards_left"], int)
    assert state["turn"] in sample_record["players"]
    moves = client.get("/api/moves").get_json()["moves"]
    assert [{k: m[k] for k in MOVE_KEYS} for m in moves] == expected["moves"]
    scores = client.get("/api/scores").get_json()
    assert scores["scores"] == expected["scores"] and scores["winners"] == expected["winners"]
    illegal = client.get("/api/moves?illegal=1").get_json()["moves"]
    assert all(not m["legal"] for m in illegal)


def test_the_event_stream_sends_the_state_at_connect_then_each_move(client, service, game, sample_record):
    g = game(2)
    response = client.get("/api/events", buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = iter(response.response)
    hello = json.loads(next(chunks).decode().split("data: ", 1)[1])
    assert hello["type"] == "hello" and hello["state"]["table"] == sample_record["frames"][1]["table"]
    service.observe(g, sample_record["frames"][2]["table"])
    message = json.loads(next(chunks).decode().split("data: ", 1)[1])
    assert message["type"] == "table"
    assert message["state"]["last_move"]["card"] == "H-purple"
    assert [m["card"] for m in message["moves"]] == ["H-purple"]
    assert message["settled_at"] <= message["at"]
    response.close()
    assert service.bus.count == 0


def test_the_video_is_mjpeg(client, service):
    service.video.put(b"\xff\xd8first\xff\xd9")
    response = client.get("/video.mjpg", buffered=False)
    assert response.mimetype == "multipart/x-mixed-replace"
    chunks = iter(response.response)
    stream = next(chunks) + next(chunks)
    assert stream.startswith(b"--frame\r\nContent-Type: image/jpeg\r\n\r\n\xff\xd8first\xff\xd9\r\n--frame")
    service.video.put(b"\xff\xd8second\xff\xd9")
    assert next(chunks).startswith(b"\xff\xd8second\xff\xd9\r\n--frame")
    response.close()


def collect_move(client):
    return next(m for m in client.get("/api/moves").get_json()["moves"] if m["collected"])


def test_override_needs_the_pin(client, game):
    game()
    body = {"frame": 1, "legal": False, "reason": "x"}
    assert client.post("/api/override", json=body).status_code == 401
    assert client.post("/api/override", json=body, headers={"X-Referee-PIN": "000000"}).status_code == 403


def test_override_changes_the_score(client, game, sample_record):
    game()
    move = collect_move(client)
    collector = move["collected"]["player"]
    other = next(p for p in sample_record["players"] if p != collector)
    before = client.get("/api/scores").get_json()["scores"]
    response = client.post("/api/override", headers={"X-Referee-PIN": PIN}, json={
        "frame": move["frame"], "index": move["index"], "player": other, "reason": "Ben finished it"})
    assert response.status_code == 200, response.get_json()
    after = client.get("/api/scores").get_json()["scores"]
    assert after[other]["cards"] == before[other]["cards"] + move["collected"]["cards"]
    listed = client.get("/api/moves").get_json()
    changed = next(m for m in listed["moves"] if m["frame"] == move["frame"] and m["index"] == move["index"])
    assert changed["override"]["reason"] == "Ben finished it"
    assert listed["overrides"][0]["kind"] == "override"


def test_the_event_stream_names_the_moves_each_change_touched(client, service, game):
    g = game(4)
    response = client.get("/api/events", buffered=False)
    chunks = iter(response.response)
    next(chunks)
    service.override(g, 2, legal=False, stands=True, reason="he peeked")
    message = json.loads(next(chunks).decode().split("data: ", 1)[1])
    assert message["type"] == "override"
    assert [(m["frame"], m["stands"], m["override"]["reason"]) for m in message["moves"]] == \
        [(2, True, "he peeked")]
    response.close()


def test_correcting_a_card_rejudges_the_move(client, game):
    game(2)
    response = client.post("/api/override", headers={"X-Referee-PIN": PIN}, json={
        "frame": 1, "card": {"from": "M-green-yellow", "to": "M-green-purple"}, "reason": "glare"})
    assert response.status_code == 200, response.get_json()
    move = client.get("/api/moves").get_json()["moves"][0]
    assert move["card"] == "M-green-purple"
    assert client.get("/api/state").get_json()["table"] == [["M-blue-green", "M-green-purple"]]


def test_a_referee_can_have_a_table_judged_as_another_table(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    for table in ([["H-red"]], [["H-red"], ["T-purple"]], [["H-red", "M-red-purple"], ["T-purple"]],
                  [["H-orange"]]):
        service.observe(g, table)
    body = {"frame": 2, "table": [["T-purple", "M-purple-red", "H-red"]], "reason": "one snake"}
    assert client.post("/api/override", json=body).status_code == 401
    response = client.post("/api/override", headers={"X-Referee-PIN": PIN}, json=body)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["scores"]["scores"]["Ben"]["cards"] == 3
    (change,) = client.get("/api/moves").get_json()["overrides"]
    assert change["kind"] == "retable" and change["data"]["reason"] == "one snake"
    # the dispute page shows the table judged, and what the camera read there
    page = client.get("/moves/2").data.decode()
    assert "the camera read: <code>H-red M-red-purple</code> · <code>T-purple</code>" in page
    assert "the camera read" not in client.get("/moves/1").data.decode()


def test_a_referee_can_have_a_table_judged_just_before_another(client, service):
    # H-red was taken in a turn of its own, before the one the camera first saw without it
    g = service.new_game(["Ann", "Ben"], "upload")
    for table in ([["M-blue-green"], ["H-red"]], [["M-blue-green", "M-green-yellow"], ["H-red"]],
                  [["M-blue-green", "M-green-yellow", "M-yellow-red"]]):
        service.observe(g, table)
    body = {"frame": 1, "table": [["M-blue-green", "M-green-yellow"]],
            "before": [["M-blue-green"]], "reason": "H-red went first"}
    response = client.post("/api/override", headers={"X-Referee-PIN": PIN}, json=body)
    assert response.status_code == 200, response.get_json()
    moves = client.get("/api/moves").get_json()
    assert [(m["frame"], m["player"], m["action"]) for m in moves["moves"]] == [
        (1, None, "collect"), (2, "Ann", "extend"), (3, "Ben", "extend")]
    (change,) = moves["overrides"]
    assert change["kind"] == "retable" and change["data"]["before"] == [["M-blue-green"]]
    bad = client.post("/api/override", headers={"X-Referee-PIN": PIN},
                      json=dict(body, before=[["M-pink-red"]]))
    assert bad.status_code == 400 and "pink" in bad.get_json()["error"]


@pytest.mark.parametrize("body, message", [
    ({"frame": 2, "table": [["H-red", "M-pink-red"]], "reason": "x"}, "pink"),
    ({"frame": 2, "table": "H-red", "reason": "x"}, "list of chains"),
    ({"frame": 9, "table": [["H-red"]], "reason": "x"}, "no frame"),
    ({"frame": 2, "table": [[]], "reason": "x"}, "non-empty"),
])
def test_bad_tables_to_judge_instead_are_refused_with_a_reason(client, game, body, message):
    game(3)
    response = client.post("/api/override", headers={"X-Referee-PIN": PIN}, json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]


@pytest.mark.parametrize("body, message", [
    ({"legal": False, "reason": "x"}, "frame"),
    ({"frame": 99, "legal": False, "reason": "x"}, "no move"),
    ({"frame": 1, "legal": False}, "reason"),
    ({"frame": 1, "legal": "perhaps", "reason": "x"}, "true or false"),
    ({"frame": 1, "player": "Zed", "reason": "x"}, "Zed"),
    ({"frame": 1, "card": {"from": "M-green-yellow", "to": "M-pink-blue"}, "reason": "x"}, "pink"),
    ({"frame": 1, "card": {"from": "H-red", "to": "H-blue"}, "reason": "x"}, "not on the table"),
])
def test_bad_overrides_are_refused_with_a_reason(client, game, body, message):
    game(3)
    response = client.post("/api/override", headers={"X-Referee-PIN": PIN}, json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_a_browser_session_needs_the_csrf_token(client, game):
    game(3)
    token = referee_session(client)
    body = {"frame": 1, "legal": False, "reason": "x"}
    assert client.post("/api/override", json=body).status_code == 403
    assert client.post("/api/override", json=body, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert client.post("/api/override", json=body, headers={"X-CSRF-Token": token}).status_code == 200


def test_undo_through_the_api(client, game, sample_record):
    game(3)
    state = client.get("/api/state").get_json()
    assert client.post("/api/undo", json={"seq": state["seq"], "reason": "hand"}).status_code == 401
    response = client.post("/api/undo", headers={"X-Referee-PIN": PIN},
                           json={"seq": state["seq"], "reason": "a hand in the picture"})
    assert response.status_code == 200
    assert client.get("/api/state").get_json()["table"] == sample_record["frames"][1]["table"]


def upload(client, data: bytes, table=None, pin=PIN, name="table.png"):
    form = {"photo": (io.BytesIO(data), name)}
    if table is not None:
        form["table"] = json.dumps(table)
    headers = {"X-Referee-PIN": pin} if pin else {}
    return client.post("/api/upload", data=form, headers=headers, content_type="multipart/form-data")


def test_upload_refusals(client, app, game):
    game(1)
    assert upload(client, png_bytes(), pin=None).status_code == 401
    assert upload(client, png_bytes(), pin="111111").status_code == 403
    not_image = upload(client, b"%PDF-1.4 not a picture", table=[["M-blue-green"]], name="x.png")
    assert not_image.status_code == 415 and "not an image" in not_image.get_json()["error"]
    app.config["MAX_CONTENT_LENGTH"] = 10_000
    assert upload(client, png_bytes() + b"\0" * 20_000, table=[["M-blue-green"]]).status_code == 413
    app.config["MAX_CONTENT_LENGTH"] = 12 * 1024 * 1024
    missing = client.post("/api/upload", data={}, headers={"X-Referee-PIN": PIN})
    assert missing.status_code == 400 and "photo" in missing.get_json()["error"]
    bad_table = upload(client, png_bytes(), table=[["M-blue-greenish"]])
    assert bad_table.status_code == 400


def test_an_uploaded_photo_becomes_the_turns_table_and_its_evidence(client, game):
    game(1)
    response = upload(client, png_bytes(), table=[["M-blue-green", "M-green-yellow"]])
    assert response.status_code == 201, response.get_json()
    move = client.get("/api/moves").get_json()["moves"][-1]
    assert move["card"] == "M-green-yellow" and move["legal"]
    picture = client.get(move["evidence"]["pictures"]["after"])
    assert picture.status_code == 200 and picture.data[:2] == b"\xff\xd8"


def test_uploads_to_an_unknown_game_are_404(client, game):
    game(1)
    response = client.post("/api/upload?game=zzz", headers={"X-Referee-PIN": PIN},
                           data={"photo": (io.BytesIO(png_bytes()), "t.png")})
    assert response.status_code == 404


def test_games_list(client, game):
    g = game(1)
    assert client.get("/api/games").get_json()["games"][0]["game"] == g.id


def test_a_photo_without_a_typed_table_is_read_by_the_recogniser(client, service, game):
    game(1)
    seen = []

    def reader(pixels):
        seen.append(pixels.shape)
        return [["M-blue-green", "M-green-yellow"]]
    service.read_photo = reader
    assert upload(client, png_bytes(80, 60)).status_code == 201
    assert seen == [(60, 80, 3)]
    assert client.get("/api/moves").get_json()["moves"][-1]["card"] == "M-green-yellow"


def test_a_photo_the_recogniser_cannot_read_says_so(client, service, game):
    from companion.web.service import ActionError
    game(1)

    def reader(pixels):
        raise ActionError("cannot read the photo (no trained models); send the table's cards with it")
    service.read_photo = reader
    response = upload(client, png_bytes())
    assert response.status_code == 400 and "send the table" in response.get_json()["error"]
    assert client.get("/api/state").get_json()["moves"] == 0


def test_viewers_beyond_the_cap_are_turned_away(client, service, monkeypatch):
    import companion.web.views.api as api
    monkeypatch.setattr(api, "MAX_STREAMS", 2)
    held = [service.bus.subscribe(), service.bus.subscribe()]
    assert client.get("/api/events").status_code == 503
    service.bus.unsubscribe(held[0])
    response = client.get("/api/events", buffered=False)
    assert response.status_code == 200
    response.close()


def test_a_rendered_photo_is_read_by_the_real_pipeline(client, service, tmp_path):
    """Upload without a typed table: the vision pipeline reads it (skipped without models)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    if not (root / "models" / "recognition.joblib").exists():
        pytest.skip("no trained models")
    service.new_game(["Ann", "Ben"], "upload")
    data = (root / "sample_images" / "stills" / "easy_00000101.jpg").read_bytes()
    response = upload(client, data, name="table.jpg")
    assert response.status_code == 201, response.get_json()
    table = response.get_json()["state"]["table"]
    assert table and all(service.deck.parse(code) for chain in table for code in chain)
    picture = service.view(service.game()).frames[-1].picture
    assert (service.evidence_dir / service.game().id / picture).read_bytes()[:2] == b"\xff\xd8"
