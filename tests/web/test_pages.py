"""Every page and form through the Flask test client, refusals included."""
import csv
import io
import re

import pytest

from companion.web.i18n import LANGUAGES, strings

from .webhelpers import PIN, referee_session

PAGES = ["/live", "/scoreboard", "/history", "/history?illegal=1", "/setup", "/end",
         "/moves/1", "/login"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_a_running_game(client, game, path):
    game()
    response = client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert b'<html lang="en">' in response.data


def test_without_a_game_the_start_page_is_set_up(client):
    response = client.get("/")
    assert response.status_code == 302 and response.location.endswith("/setup")
    assert client.get("/live").status_code == 200
    assert b"No game yet" in client.get("/scoreboard").data


def test_an_unknown_game_or_move_is_a_404_page(client, game):
    game(3)
    assert client.get("/live?game=nope").status_code == 404
    assert client.get("/moves/99").status_code == 404
    assert client.get("/export/nope.json").status_code == 404


def test_live_shows_turn_verdict_cards_left_and_glyphs_with_colour_names(client, game, service):
    g = game(6)
    html = client.get("/live").data.decode()
    state = service.state_json(g)
    assert f'<dd class="turn">{state["turn"]}</dd>' in html
    assert f'<dd class="left">{state["cards_left"]}</dd>' in html
    assert "Legal" in html
    # every card glyph names its colours in text, not only in paint
    glyphs = re.findall(r'<figure class="card card-(\w+)"', html)
    assert len(glyphs) == sum(len(c) for c in state["table"])
    assert html.count('class="sw sw-') >= len(glyphs)
    assert 'aria-label="middle-section · green → yellow"' in html
    assert '<img src="/video.mjpg"' in html


def test_scoreboard_shows_piles_totals_and_the_winner_with_the_tie_break(client, game, service):
    g = game()
    service.finish(g)
    html = client.get("/scoreboard").data.decode()
    view = service.view(g)
    winner = view.winners[0]
    assert f"{winner} wins!" in html
    assert "Most cards collected" in html or "longest snake" in html
    for p in g.players:
        assert f'<h2 class="name">{p}</h2>' in html
    assert html.count('class="chain small"') == sum(len(s) for s in view.piles.values())


def test_a_shared_win_is_explained(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    for table in ([["M-red-blue"]], [["H-red", "M-red-blue"]], [["H-red", "M-red-blue", "T-blue"]],
                  [], [["M-green-yellow"]], [["H-green", "M-green-yellow"]],
                  [["H-green", "M-green-yellow", "T-yellow"]], []):
        service.observe(g, table)
    service.finish(g)
    scores = service.scores_json(service.store.game(g.id))
    assert scores["winners"] == ["Ann", "Ben"] and scores["tiebreak"]["rule"] == "shared"
    html = client.get("/scoreboard").data.decode()
    assert "Shared win: Ann &amp; Ben" in html and "shared win" in html


def test_history_filters_to_illegal_moves(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    service.observe(g, [["M-red-blue"]])
    service.observe(g, [["M-red-blue", "M-green-yellow"]])      # colours do not match
    service.observe(g, [["M-red-blue", "M-green-yellow"], ["H-purple"]])
    all_rows = client.get("/history").data.decode().count("<tr class=")
    illegal = client.get("/history?illegal=1").data.decode()
    assert all_rows == 2 and illegal.count('<tr class="illegal">') == 1
    assert illegal.count("<tr class=") == 1


def test_player_names_are_escaped_everywhere(client, service):
    evil = '<script>alert("x")</script>'
    g = service.new_game([evil, "Ben"], "upload")
    service.observe(g, [["M-red-blue"]])
    service.observe(g, [["M-red-blue", "M-blue-green"]])
    for path in ["/live", "/scoreboard", "/history", "/end", "/moves/1", "/parts/live", "/setup"]:
        body = client.get(path).data.decode()
        assert evil not in body, path
    assert "&lt;script&gt;" in client.get("/scoreboard").data.decode()


def test_language_from_the_browser_and_the_switch(client, game):
    game(2)
    assert "Historique" in client.get("/live", headers={"Accept-Language": "fr-FR,fr;q=0.9"}).data.decode()
    assert "Historial" in client.get("/live", headers={"Accept-Language": "es"}).data.decode()
    response = client.get("/lang/ko?next=/scoreboard")
    assert response.status_code == 302 and response.location.endswith("/scoreboard")
    page = client.get("/scoreboard", headers={"Accept-Language": "fr"}).data.decode()
    assert '<html lang="ko">' in page and "점수판" in page
    assert client.get("/lang/xx").status_code == 404
    assert client.get("/lang/fr?next=//evil.example").location.endswith("/")


def test_every_translation_has_every_english_key():
    english = set(strings("en"))
    for lang in LANGUAGES:
        assert set(strings(lang)) == english, lang
        assert all(isinstance(v, str) and v for v in strings(lang).values())


def test_large_type_is_a_switch(client, game):
    game(1)
    client.get("/large?next=/live")
    assert 'class="page-live large"' in client.get("/live").data.decode()
    client.get("/large?next=/live")
    assert 'class="page-live"' in client.get("/live").data.decode()


def test_login_with_a_wrong_pin_then_the_right_one(client):
    client.get("/login")
    with client.session_transaction() as s:
        token = s["csrf"]
    assert client.post("/login", data={"pin": PIN}).status_code == 403          # no CSRF token
    assert client.post("/login", data={"pin": "000000", "csrf_token": token}).status_code == 403
    response = client.post("/login", data={"pin": PIN, "csrf_token": token, "next": "/history"})
    assert response.status_code == 302 and response.location.endswith("/history")
    assert "Referee ✓" in client.get("/live").data.decode()


def test_pin_guessing_is_slowed_down(client):
    client.get("/login")
    with client.session_transaction() as s:
        token = s["csrf"]
    codes = [client.post("/login", data={"pin": f"00000{i}", "csrf_token": token}).status_code
             for i in range(6)]
    assert codes[:5] == [403] * 5 and codes[5] == 429
    assert client.post("/login", data={"pin": PIN, "csrf_token": token}).status_code == 429


FORMS = [("/setup/new-game", {"player": ["Ann", "Ben"], "source_kind": "upload"}),
         ("/moves/1/0/override", {"verdict": "illegal_stands", "reason": "x"}),
         ("/moves/1/correct", {"from": "M-green-yellow", "to": "M-green-blue", "reason": "x"}),
         ("/undo", {"seq": "1", "reason": "x"}),
         ("/finish", {}),
         ("/setup/calibrate", {}),
         ("/setup/restart-source", {})]


@pytest.mark.parametrize("path, data", FORMS)
def test_every_form_refuses_spectators_and_forged_posts(client, game, path, data):
    game(3)
    assert client.post(path, data=data).status_code == 401
    referee_session(client)
    assert client.post(path, data=data).status_code == 403                       # no token
    assert client.post(path, data=dict(data, csrf_token="forged")).status_code == 403


def test_new_game_form_starts_a_game_in_turn_order(client, service):
    token = referee_session(client)
    response = client.post("/setup/new-game", data={
        "csrf_token": token, "player": ["Cy", "Ann", "", "Ben", ""], "source_kind": "upload"})
    assert response.status_code == 302
    game = service.game()
    assert game.players == ("Cy", "Ann", "Ben") and game.source == "upload"
    bad = client.post("/setup/new-game", data={"csrf_token": token, "player": ["Solo"],
                                               "source_kind": "upload"})
    assert bad.status_code == 400 and b"2 to 5 players" in bad.data


def test_new_game_with_an_unopenable_source_says_why(client):
    token = referee_session(client)
    response = client.post("/setup/new-game", data={
        "csrf_token": token, "player": ["Ann", "Ben"], "source_kind": "file",
        "source_file": "/no/such/game.json"})
    assert response.status_code == 400 and b"cannot read game record" in response.data


def test_override_form_changes_the_verdict_and_keeps_it_in_the_history(client, game, service):
    g = game(3)
    token = referee_session(client)
    response = client.post("/moves/2/0/override", data={
        "csrf_token": token, "verdict": "illegal_stands", "reason": "he peeked"})
    assert response.status_code == 302
    move = service.view(g).move_at(2)
    assert move["legal"] is False and move["stands"] is True
    page = client.get("/history").data.decode()
    assert "Illegal, but it stands" in page and "he peeked" in page
    undo_seq = re.search(r'name="seq" value="(\d+)"', page).group(1)
    client.post("/undo", data={"csrf_token": token, "seq": undo_seq, "reason": "my mistake"})
    assert service.view(g).move_at(2)["legal"] is True


def test_calibration_step_reports_when_calibration_is_missing(client, service):
    token = referee_session(client)
    seen = []

    def fake_calibrate(paths, out):
        from companion.web.calibrate import CalibrationResult
        seen.append([p.read_bytes() for p in paths])
        return CalibrationResult(out, "learned 50 cards, sure")
    service.calibrate = fake_calibrate
    response = client.post("/setup/calibrate", content_type="multipart/form-data", data={
        "csrf_token": token, "photo": (io.BytesIO(b"deckphoto"), "deck.jpg")})
    assert response.status_code == 200 and b"learned 50 cards, sure" in response.data
    assert seen == [[b"deckphoto"]]


def test_the_calibration_step_keeps_no_uploaded_photo(client, service):
    token = referee_session(client)
    kept = []

    def refusing_calibrate(paths, out):
        from companion.web.calibrate import CalibrationUnavailable
        kept.extend(paths)
        raise CalibrationUnavailable("3 cards missing")
    service.calibrate = refusing_calibrate
    for _ in range(2):   # once refused, once more to be sure nothing piles up
        response = client.post("/setup/calibrate", content_type="multipart/form-data", data={
            "csrf_token": token, "photo": (io.BytesIO(b"deckphoto"), "deck.jpg")})
        assert b"3 cards missing" in response.data
    assert len(kept) == 2 and not any(p.exists() or p.parent.exists() for p in kept)


def test_spectator_view_is_read_only_on_a_stable_url(client, app, game):
    game(4)
    token = app.extensions["spectator_token"]
    assert client.get("/watch/wrong").status_code == 404
    html = client.get(f"/watch/{token}").data.decode()
    assert "<form" not in html and "<nav" not in html
    overlay = client.get(f"/watch/{token}?overlay=1").data.decode()
    assert 'class="page-watch overlay"' in overlay and '<html lang="en" class="overlay">' in overlay


def test_spectator_token_and_pin_survive_a_restart(tmp_path):
    from companion.web.app import create_app, open_service
    first = create_app(open_service(tmp_path))
    token, pin = first.extensions["spectator_token"], first.extensions["pin_guard"].pin
    second = create_app(open_service(tmp_path))
    assert second.extensions["spectator_token"] == token
    assert second.extensions["pin_guard"].pin == pin and re.fullmatch(r"\d{6}", pin)


@pytest.mark.parametrize("name", ["live", "scoreboard", "history", "watch", "banner"])
def test_parts_render_alone(client, game, name):
    game(3)
    response = client.get(f"/parts/{name}")
    assert response.status_code == 200 and b"<html" not in response.data
    assert client.get("/parts/secret").status_code == 404


def test_desync_banner(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    service.observe(g, [["M-red-blue"]])
    assert b"Desync" not in client.get("/live").data
    service.observe(g, [["M-red-blue"]], desync=True)
    assert b"Desync" in client.get("/live").data
    assert client.get("/api/state").get_json()["desync"] is True


def test_export_json_and_csv(client, game, service):
    g = game()
    data = client.get(f"/export/{g.id}.json")
    assert data.status_code == 200 and "attachment" in data.headers["Content-Disposition"]
    body = data.get_json()
    assert body["scores"] == service.view(g).scores
    from companion.game.referee import judge_record
    assert judge_record(body["record"])["scores"] == body["scores"]
    rows = list(csv.reader(io.StringIO(client.get(f"/export/{g.id}.csv").data.decode())))
    assert rows[0][:4] == ["frame", "turn", "player", "card"]
    assert len(rows) == 1 + len(service.view(g).moves)


def test_csv_cells_that_look_like_formulas_stay_text(client, service):
    g = service.new_game(["=HYPERLINK(1)", "Ben"], "upload")
    service.observe(g, [["M-red-blue"]])
    service.observe(g, [["M-red-blue", "M-blue-green"]])
    text = client.get(f"/export/{g.id}.csv").data.decode()
    assert "'=HYPERLINK(1)" in text


def test_evidence_is_served_only_for_real_stills(client, game, service):
    g = game(1)
    service.observe(g, [["M-blue-green", "M-green-yellow"]], jpeg=b"\xff\xd8still\xff\xd9")
    url = service.moves_json(g)["moves"][0]["evidence"]["pictures"]["after"]
    assert client.get(url).data == b"\xff\xd8still\xff\xd9"
    assert client.get(f"/evidence/{g.id}/..%2Fcompanion.sqlite3").status_code == 404
    assert client.get(f"/evidence/{g.id}/passwd").status_code == 404


def test_pages_carry_security_headers(client, game):
    game(1)
    response = client.get("/live")
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_every_referee_verdict_code_has_words_in_every_language():
    from companion.game import chains, rules
    codes = {v for module in (chains, rules) for k, v in vars(module).items()
             if k.isupper() and isinstance(v, str) and v.islower() and "_" in v}
    assert "colour_mismatch" in codes
    for lang in LANGUAGES:
        missing = {c for c in codes if f"code_{c}" not in strings(lang)}
        assert not missing, (lang, missing)


def test_an_illegal_verdict_is_named_in_the_page_language(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    service.observe(g, [["M-red-blue"]])
    service.observe(g, [["M-red-blue", "M-green-yellow"]])
    page = client.get("/live", headers={"Accept-Language": "es"}).data.decode()
    assert "No válida" in page and "Los colores no coinciden." in page


def test_the_photo_form_on_the_live_page(client, game, service):
    game(1)
    token = referee_session(client)
    assert 'action="/upload"' in client.get("/live").data.decode()
    bad = client.post("/upload", content_type="multipart/form-data", data={
        "csrf_token": token, "photo": (io.BytesIO(b"GIF89a-not-really"), "t.gif"),
        "table": '[["M-blue-green", "M-green-yellow"]]'})
    assert bad.status_code == 415 and b"<html" in bad.data
    import cv2
    import numpy as np
    ok, png = cv2.imencode(".png", np.zeros((20, 30, 3), np.uint8))
    good = client.post("/upload", content_type="multipart/form-data", data={
        "csrf_token": token, "photo": (io.BytesIO(png.tobytes()), "t.png"),
        "table": '[["M-blue-green", "M-green-yellow"]]'})
    assert good.status_code == 302
    assert service.state_json(service.game())["last_move"]["card"] == "M-green-yellow"


@pytest.mark.parametrize("target", ["//evil.example", "/\\evil.example", "https://evil.example",
                                    "/\tevil", "/live\r\nSet-Cookie: x=1"])
def test_redirects_stay_on_this_site(client, target):
    from urllib.parse import urlsplit

    def stays_here(location: str) -> bool:
        url = urlsplit(location)
        return url.netloc in ("", "localhost") and url.path.startswith("/") \
            and url.path[1:2] not in ("/", "\\") and "\n" not in location
    assert stays_here(client.get("/lang/fr", query_string={"next": target}).location)
    client.get("/login")
    with client.session_transaction() as s:
        token = s["csrf"]
    response = client.post("/login", data={"pin": PIN, "csrf_token": token, "next": target})
    assert response.status_code == 302 and stays_here(response.location)


def test_ending_the_game_by_mistake_can_be_undone(client, game, service, sample_record):
    g = game(5)
    token = referee_session(client)
    client.post(f"/finish?game={g.id}", data={"csrf_token": token})
    assert service.view(service.store.game(g.id)).finished
    assert service.store.game(g.id).finished_at is not None
    with pytest.raises(ValueError, match="over"):
        service.observe(service.store.game(g.id), sample_record["frames"][5]["table"])
    page = client.get("/history").data.decode()
    assert "game ended" in page
    finish_seq = max(e["seq"] for e in service.view(service.store.game(g.id)).log if e["kind"] == "finish")
    client.post("/undo", data={"csrf_token": token, "seq": str(finish_seq), "reason": "too early"})
    reopened = service.store.game(g.id)
    assert reopened.finished_at is None and not service.view(reopened).finished
    service.observe(reopened, sample_record["frames"][5]["table"])
    assert service.state_json(reopened)["turn"] is not None


def test_the_calibration_step_refuses_a_photo_that_is_not_a_deck(client, service):
    import cv2
    import numpy as np
    token = referee_session(client)
    ok, blank = cv2.imencode(".jpg", np.full((240, 320, 3), 90, np.uint8))
    response = client.post("/setup/calibrate", content_type="multipart/form-data", data={
        "csrf_token": token, "photo": (io.BytesIO(blank.tobytes()), "deck.jpg")})
    assert response.status_code == 400
    assert b"<html" in response.data and b"Traceback" not in response.data
    assert not (service.evidence_dir.parent / "profile.json").exists()


def test_the_calibration_step_learns_a_rendered_deck_and_new_photos_use_it(client, service):
    import cv2
    from companion.synth.deck_layout import deck_look, render_deck_photo
    from companion.synth.styles import STYLES
    from companion.web.service import PhotoReader
    scene = render_deck_photo(1001, deck_look(next(iter(STYLES)), 73), size=(1280, 960))
    ok, jpeg = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    token = referee_session(client)
    response = client.post("/setup/calibrate", content_type="multipart/form-data", data={
        "csrf_token": token, "photo": (io.BytesIO(jpeg.tobytes()), "deck.jpg")})
    assert response.status_code == 200, response.data[-500:]
    profile = service.evidence_dir.parent / "profile.json"
    assert profile.exists() and b'class="result"' in response.data
    assert isinstance(service.read_photo, PhotoReader) and service.read_photo.profile == str(profile)
