"""The advisor on the dashboard: snake badges, the draw pile, the optional hint panel."""
import json
import re
import time

import pytest

from companion.game import advisor, hints
from companion.game.counting import remaining_cards
from companion.game.deck import load_deck
from companion.game.rules import as_table, legal_placements
from companion.web.i18n import LANGUAGES

DECK = load_deck()
# Three open chains, each of which one card left can finish (alone or by a join).
SMALL_GAME = [
    [["M-red-blue"]],
    [["M-red-blue"], ["H-green", "M-green-yellow"]],
    [["H-red", "M-red-blue"], ["H-green", "M-green-yellow"]],
    [["H-red", "M-red-blue"], ["H-green", "M-green-yellow"], ["M-orange-purple"]],
    [["H-red", "M-red-blue"], ["H-green", "M-green-yellow"], ["M-orange-purple", "T-purple"]],
]


@pytest.fixture
def small_game(service):
    g = service.new_game(["Ann", "Ben"], "upload")
    for table in SMALL_GAME:
        service.observe(g, table)
    return service.store.game(g.id)


def seen_remaining(table):
    """The draw pile of a game whose every seen card is still on the table."""
    return remaining_cards(DECK, as_table(table))


def brute_force_completers(table, remaining) -> list[int]:
    """Per chain: the copies left whose drawer could lay them to make a whole snake using
    that chain, by trying every legal placement of every card on the whole table."""
    tbl = as_table(table)
    out = [0] * len(tbl)
    for card, copies in remaining.items():
        used = {i for p in legal_placements(tbl, card) if p.completes for i in p.used}
        for i in used:
            out[i] += copies
    return out


def badges(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<p class="badge \w+" data-n="(\d+)">', html)]


def switch_hints(client, game_id):
    response = client.get(f"/hints?game={game_id}&next=/live")
    assert response.status_code == 302 and response.location.endswith("/live")


def test_badges_count_exactly_the_cards_left_that_complete_each_snake(client, small_game):
    state = client.get("/api/state").get_json()
    table = SMALL_GAME[-1]
    assert state["table"] == table
    expected = brute_force_completers(table, seen_remaining(table))
    assert state["completable_by"] == expected
    assert expected[0] and expected[1] and expected[2]   # each can be finished
    assert badges(client.get("/live").data.decode()) == expected


def test_badges_match_the_advisors_outlook_on_the_sample_game(client, game, sample_record):
    game(6)
    state = client.get("/api/state").get_json()
    html = client.get("/live").data.decode()
    remaining = seen_remaining(state["table"])   # nothing collected yet in the first frames
    assert sum(remaining.values()) == state["cards_left"]
    expected = [b["cards_left"] for b in advisor.snake_badges(as_table(state["table"]), remaining)]
    assert state["completable_by"] == expected == badges(html)
    assert state["completable_by"] == brute_force_completers(state["table"], remaining)


def test_state_only_adds_the_draw_pile_per_colour_and_the_badges(client, small_game):
    state = client.get("/api/state").get_json()
    assert list(state)[:12] == ["game", "players", "turn", "table", "cards_left", "desync",
                                "finished", "frame", "moves", "last_move", "placed", "seq"]
    by_colour = state["cards_left_by_colour"]
    remaining = seen_remaining(SMALL_GAME[-1])
    assert by_colour["green"]["heads"] == remaining[DECK.parse("H-green")] == 0
    assert by_colour["blue"]["tails"] == remaining[DECK.parse("T-blue")]
    middles = sum(n for c, n in remaining.items() if c.kind.name == "MIDDLE")
    assert sum(v["middles"] for v in by_colour.values()) == 2 * middles   # two colours each


def test_the_hint_panel_is_off_by_default_and_on_after_switching(client, small_game):
    html = client.get("/live").data.decode()
    assert 'aria-pressed="false"' in html and "Hints: off" in html
    assert "tip-list" not in html and "draw-pile" not in html
    part = client.get("/parts/hints").data.decode()
    assert "tip-list" not in part and "Hints: off" in part

    switch_hints(client, small_game.id)
    html = client.get("/live").data.decode()
    assert "Hints: on" in html and 'class="draw-pile"' in html
    left = sum(seen_remaining(SMALL_GAME[-1]).values())
    assert f"{left} cards left to draw" in html
    panel = advisor.hint_panel(as_table(SMALL_GAME[-1]), DECK, seen_remaining(SMALL_GAME[-1]))
    assert panel["hints"]
    for tip in panel["hints"]:
        assert f"<li>{tip}</li>" in html.replace("&#39;", "'")

    switch_hints(client, small_game.id)
    assert "tip-list" not in client.get("/live").data.decode()


def test_switching_is_remembered_per_game_and_needs_no_pin(client, service, small_game):
    switch_hints(client, small_game.id)           # no referee session, no PIN: a preference
    assert "tip-list" in client.get("/parts/hints").data.decode()
    service.new_game(["Cy", "Di"], "upload")
    service.observe(service.game(), [["M-red-blue"]])
    assert "Hints: off" in client.get("/live").data.decode()   # a new game starts with hints off
    # switching is only this browser's: another viewer still sees none
    other = client.application.test_client()
    switch_hints(client, service.game().id)
    assert "Hints: off" in other.get("/live").data.decode()


def test_spectator_pages_never_show_hints(client, app, small_game):
    switch_hints(client, small_game.id)
    token = app.extensions["spectator_token"]
    for path in (f"/watch/{token}", f"/watch/{token}?overlay=1", "/parts/watch",
                 "/parts/watch?overlay=1", "/scoreboard"):
        html = client.get(path).data.decode()
        assert "tip-list" not in html and "badge" not in html and "Hints" not in html, path


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_badges_and_hints_are_in_the_page_language(client, small_game, lang):
    switch_hints(client, small_game.id)
    html = client.get(f"/live?lang={lang}").data.decode().replace("&#39;", "'")
    table = SMALL_GAME[-1]
    remaining = seen_remaining(table)
    panel = advisor.hint_panel(as_table(table), DECK, remaining, lang)
    for n in brute_force_completers(table, remaining):
        assert hints.badge(n, lang) in html
    assert panel["cards_left_text"] in html
    for tip in panel["hints"]:
        assert tip in html


def test_the_cached_panel_says_what_the_advisor_says(service, small_game):
    for lang in LANGUAGES:
        mine = service.hint_panel(small_game, lang)
        table = as_table(SMALL_GAME[-1])
        assert mine == advisor.hint_panel(table, DECK, seen_remaining(SMALL_GAME[-1]), lang)
    assert len(service.advisor.timings) == 1   # worked out once for all four languages


def test_the_panel_is_worked_out_ahead_only_once_someone_looks(service, small_game):
    panels = service.advisor
    service.observe(small_game, SMALL_GAME[-1] + [["H-orange"]])
    panels._panel_pool.submit(lambda: None).result()
    assert panels.timings == []                    # nobody has the panel on: no work
    service.hint_panel(small_game, "en")
    service.observe(small_game, SMALL_GAME[-1] + [["H-orange"], ["M-yellow-purple"]])
    panels._panel_pool.submit(lambda: None).result()     # the worker ran what the change queued
    assert len(panels.timings) == 2
    service.hint_panel(small_game, "fr")
    assert len(panels.timings) == 2                # the table's panel came from the cache


def test_the_event_stream_carries_the_badges(service, small_game):
    q = service.bus.subscribe()
    service.observe(small_game, SMALL_GAME[-1] + [["H-orange"]])
    message = json.loads(q.get(timeout=5))
    state = message["state"]
    assert state["table"][-1] == ["H-orange"]
    assert state["completable_by"] == brute_force_completers(state["table"],
                                                             seen_remaining(state["table"]))
    assert state["cards_left_by_colour"]["orange"]["heads"] == 0


def test_a_table_that_cannot_be_counted_has_no_badges_and_no_hints(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    service.observe(g, [["M-red-blue"]])
    service.observe(g, [["M-red-blue"], ["H-red"]])
    service.observe(g, [["M-red-blue"], ["H-red"], ["H-red"]])   # the deck has one red head
    state = client.get("/api/state").get_json()
    assert state["completable_by"] is None and state["cards_left_by_colour"] is None
    switch_hints(client, g.id)
    html = client.get("/live").data.decode()
    assert badges(html) == [] and "cannot be counted" in html


def test_a_finished_game_shows_no_panel(client, service, small_game):
    switch_hints(client, small_game.id)
    service.finish(small_game)
    html = client.get("/live").data.decode()
    assert "tip-list" not in html and "Hints:" not in html
    state = client.get("/api/state").get_json()
    assert all(n == 0 for n in state["completable_by"])


def test_badges_too_slow_for_the_event_follow_it_in_an_advice_event(service, small_game, monkeypatch):
    from companion.web import advice
    counted = advice.badge_numbers

    def slow(table, remaining):
        time.sleep(0.3)   # as a crowded table can take
        return counted(table, remaining)
    monkeypatch.setattr(advice, "badge_numbers", slow)
    q = service.bus.subscribe()
    service.observe(small_game, SMALL_GAME[-1] + [["H-orange"]])
    first = json.loads(q.get(timeout=5))
    assert first["type"] == "table" and first["state"]["completable_by"] is None
    follow = json.loads(q.get(timeout=5))
    assert follow["type"] == "advice" and follow["state"]["seq"] == first["state"]["seq"]
    assert follow["state"]["completable_by"] == brute_force_completers(
        follow["state"]["table"], seen_remaining(follow["state"]["table"]))


def test_the_card_just_drawn_gets_its_own_hints_until_the_table_moves_on(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    for table in ([["M-red-blue"]], [["H-red", "M-red-blue"]], [["H-red", "M-red-blue"], ["M-green-yellow"]]):
        service.observe(g, table)
    switch_hints(client, g.id)
    seq = service.state_json(service.game())["seq"]
    html = client.get("/live").data.decode()
    assert '<option value="M-green-blue">green-blue middle</option>' in html   # the deck's names
    assert '<option value="H-red">' not in html            # on the table: not in the pile

    html = client.get(f"/live?card=M-blue-green&at={seq}").data.decode()   # read either way round
    assert "About the green-blue middle" in html
    assert "<li>This card can join two snakes!</li>" in html
    table = as_table([["H-red", "M-red-blue"], ["M-green-yellow"]])
    card = DECK.parse("M-blue-green")
    expected = advisor.hint_panel(table, DECK, remaining_cards(DECK, table, extra=[card]), "es",
                                  card=card)["hints"]
    html = client.get(f"/live?card=M-blue-green&at={seq}&lang=es").data.decode()
    assert expected and all(f"<li>{h}</li>" in html for h in expected)

    service.observe(g, [["H-red", "M-red-blue", "M-blue-green", "M-green-yellow"]])
    html = client.get(f"/live?card=M-blue-green&at={seq}").data.decode()
    assert "About the" not in html and "draw-pile" in html   # laid: back to the whole pile
    assert "About the" not in client.get(f"/live?card=H-red&at={seq + 1}").data.decode()


def test_a_whole_snake_waiting_to_be_collected_is_badged_as_such(client, service):
    g = service.new_game(["Ann", "Ben"], "upload")
    for table in ([["M-red-blue"]], [["H-red", "M-red-blue"]], [["H-red", "M-red-blue"], ["M-green-yellow"]],
                  [["H-red", "M-red-blue", "T-blue"], ["M-green-yellow"]]):
        service.observe(g, table)
    html = client.get("/live").data.decode()
    assert 'class="badge whole"' in html and "a whole snake: collect it!" in html
    assert html.count('class="badge ') == 2
    assert "no single card left completes it" in html   # the lone middle needs two more cards


def test_badges_that_come_after_the_service_is_closed_tell_no_one(service):
    """The badge worker publishes late numbers from a thread of its own: when they come after
    the service was closed (a server stopping, a demo's games cleared away), they are dropped,
    never a traceback about a closed database."""
    g = service.new_game(["Ann", "Ben"], "upload")
    service.observe(g, [["H-red", "M-red-blue"]])
    seq = service.view(g).last_seq
    watching = service.bus.subscribe()
    service.close()
    service._publish_advice(g, seq)     # what the worker's thread does with numbers come late
    assert watching.empty()
