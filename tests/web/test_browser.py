"""The dashboard in a real Chromium (Debian's, through Playwright) against a running server."""
import os
import threading
import time
from pathlib import Path

import pytest

from werkzeug.serving import make_server

from .webhelpers import PIN

CHROMIUM = "/usr/bin/chromium"
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]
SHOTS = os.environ.get("COMPANION_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


@pytest.fixture
def server(app):
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.port}"
    srv.shutdown()


@pytest.fixture
def page(browser):
    # bypass_csp: Playwright's wait_for_function evaluates strings, which the page's CSP forbids
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-GB",
                                  bypass_csp=True)
    pg = context.new_page()
    yield pg
    context.close()


def shot(page, name):
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def wait_for_viewer(service, count=1, timeout=5.0):
    deadline = time.monotonic() + timeout
    while service.bus.count < count:
        assert time.monotonic() < deadline, "the page never opened its event stream"
        time.sleep(0.02)


def test_live_page_shows_a_settled_move_within_a_second(server, page, service, game, sample_record):
    g = game(4)
    page.goto(server + "/live")
    wait_for_viewer(service)
    shot(page, "live-before")
    delays = []
    for n in range(4, 8):
        settled = time.monotonic()
        service.observe(g, sample_record["frames"][n]["table"])
        moves = service.state_json(service.store.game(g.id))["moves"]
        page.wait_for_function(
            f"document.querySelector('.verdict-box').dataset.moves === '{moves}'", timeout=2000)
        delays.append(time.monotonic() - settled)
    assert max(delays) < 1.0, delays
    print(f"settled -> shown on the live page: {', '.join(f'{d * 1000:.0f} ms' for d in delays)}")
    last = service.state_json(service.store.game(g.id))["last_move"]
    shown = page.inner_text(".verdict-box")
    assert last["player"] in shown and last["reason"] in shown
    assert page.inner_text("dd.turn") == service.state_json(service.store.game(g.id))["turn"]
    shot(page, "live-after")


def test_the_hint_panel_switches_on_and_follows_the_game_live(server, page, service, game, sample_record):
    g = game(4)
    page.goto(server + "/live")
    toggle = page.locator(".hints-toggle")
    assert toggle.get_attribute("aria-pressed") == "false"      # off until the players ask
    assert page.locator(".tip-list, .draw-pile").count() == 0
    badge_counts = [int(n) for n in page.locator(".badge").evaluate_all("bs => bs.map(b => b.dataset.n)")]
    assert badge_counts == service.state_json(service.store.game(g.id))["completable_by"]
    toggle.click()
    page.wait_for_selector(".draw-pile")
    assert page.locator(".hints-toggle").get_attribute("aria-pressed") == "true"
    wait_for_viewer(service)
    settled = time.monotonic()
    service.observe(g, sample_record["frames"][4]["table"])
    left = service.state_json(service.store.game(g.id))["cards_left"]
    page.wait_for_function(
        f"(document.querySelector('.pile-total') || {{}}).textContent === '{left} cards left to draw'",
        timeout=3000)
    print(f"settled -> hint panel updated: {(time.monotonic() - settled) * 1000:.0f} ms")
    shot(page, "live-hints")
    page.select_option("select[name=card]", label="rainbow tail")   # the card just drawn
    page.click(".drawn-form button")
    page.wait_for_selector(".drawn")
    assert "This card finishes a snake" in page.text_content(".drawn")
    shot(page, "live-hints-drawn")
    page.locator(".hints-toggle").click()
    page.wait_for_selector(".draw-pile", state="detached")
    assert page.locator(".hints-toggle").get_attribute("aria-pressed") == "false"


def test_the_desync_banner_comes_and_goes_live(server, page, service, game, sample_record):
    g = game(3)
    page.goto(server + "/live")
    wait_for_viewer(service)
    assert page.locator(".banner.desync").count() == 0
    service.observe(g, sample_record["frames"][2]["table"], desync=True)
    page.wait_for_selector(".banner.desync", timeout=2000)
    assert "Desync" in page.inner_text(".banner.desync")
    service.observe(g, sample_record["frames"][3]["table"])
    page.wait_for_selector(".banner.desync", state="detached", timeout=2000)


def test_the_override_flow_changes_the_score(server, browser, page, service, game):
    g = game()
    view = service.view(g)
    collect = next(m for m in view.moves if m["collected"])
    collector = collect["collected"]["player"]
    other = next(p for p in g.players if p != collector)
    before = view.scores[other]["cards"]

    board = browser.new_page(viewport={"width": 1400, "height": 900}, bypass_csp=True)  # a TV
    board.goto(server + "/scoreboard")
    wait_for_viewer(service)

    page.goto(server + f"/moves/{collect['frame']}/{collect['index']}")
    page.click("text=Log in as the referee")
    page.fill("input[name=pin]", PIN)
    page.press("input[name=pin]", "Enter")
    page.wait_for_url(f"**/moves/{collect['frame']}/{collect['index']}")
    page.select_option("select[name=player]", other)
    page.fill("form[action*=override] input[name=reason]", "Ben laid the last card")
    shot(page, "dispute")
    page.click("form[action*=override] button[type=submit]")
    page.wait_for_load_state()
    assert "Changed by the referee" in page.inner_text(".verdict-box")

    expected = before + collect["collected"]["cards"]
    board.wait_for_function(
        "([name, n]) => [...document.querySelectorAll('article.player')].some("
        "a => a.querySelector('.name').textContent === name && a.querySelector('.total .num').textContent === String(n))",
        arg=[other, expected], timeout=3000)
    assert service.view(service.store.game(g.id)).scores[other]["cards"] == expected
    shot(board, "scoreboard-after-override")
    board.close()


def test_the_language_switch(server, page, game):
    game(6)
    page.goto(server + "/live")
    assert page.inner_text("header nav") .startswith("Live")
    page.click("a[data-lang=fr]")
    page.wait_for_selector("html[lang=fr]")
    assert "Historique" in page.inner_text("header nav")
    assert "Cartes restantes" in page.text_content(".facts")
    page.click("a[data-lang=ko]")
    page.wait_for_selector("html[lang=ko]")
    assert "점수판" in page.inner_text("header nav")
    shot(page, "live-ko")
    page.goto(server + "/scoreboard")
    assert page.locator("html").get_attribute("lang") == "ko"     # the choice is remembered


def test_keyboard_navigation(server, page, game):
    game(3)
    page.goto(server + "/live")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("3")
    page.wait_for_url("**/history")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "A"


def test_pages_for_the_record(server, page, app, service, game):
    """Screenshots of the remaining pages (set COMPANION_SCREENSHOTS=DIR to keep them)."""
    g = game()
    service.finish(g)
    for path, name in [("/scoreboard", "scoreboard-end"), ("/history", "history"),
                       ("/setup", "setup"), ("/end", "end"),
                       (f"/watch/{app.extensions['spectator_token']}", "spectator"),
                       (f"/watch/{app.extensions['spectator_token']}?overlay=1", "overlay")]:
        page.goto(server + path)
        assert page.title().endswith("Hisss")
        shot(page, name)
