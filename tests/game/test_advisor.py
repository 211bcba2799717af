"""The move advisor: ranking, hints, the outlook without a card in hand."""
from collections import Counter
from fractions import Fraction

from companion.game.advisor import (advise, best_placement, hint_panel, outlook, rank_placements,
                                   snake_badges, table_after)
from companion.game.cards import Card
from companion.game.chains import as_chain
from companion.game.counting import give_away, remaining_cards
from companion.game.deck import load_deck
from companion.game.hints import LANGUAGES, TEXTS, Hint, badge, card_name, text
from companion.game.rules import as_table, legal_placements

C = Card.parse
DECK = load_deck()


def table(*chains):
    return as_table([as_chain(c.split()) for c in chains])


def ranked_for(tbl, code):
    card = C(code)
    return rank_placements(tbl, card, remaining_cards(DECK, tbl, extra=[card]))


def test_every_legal_placement_is_ranked_once():
    tbl = table("M-red-blue", "M-green-yellow", "H-blue")
    ranked = ranked_for(tbl, "M-blue-green")
    assert sorted(r.placement.table for r in ranked) == sorted(
        p.table for p in legal_placements(tbl, C("M-blue-green")))


def test_a_completing_placement_ranks_above_the_others():
    tbl = table("H-red M-red-blue", "M-blue-green")
    ranked = ranked_for(tbl, "RT")
    assert len(ranked) >= 2
    top = ranked[0]
    assert top.placement.completes and top.gain == 3
    assert all(not r.placement.completes and r.gain == 0 for r in ranked[1:])
    assert top.score > max(r.score for r in ranked[1:])


def test_the_bigger_snake_is_preferred_when_two_can_be_completed():
    tbl = table("H-red M-red-blue", "H-green M-green-yellow M-yellow-blue")
    ranked = ranked_for(tbl, "T-blue")
    assert [r.gain for r in ranked] == [4, 3]


def test_opening_a_join_for_the_next_player_is_penalised():
    # Laid on the lone head, M-red-orange leaves [H-red M-red-orange], which three
    # M-orange-yellow join to the tail chain, and T-orange or RT close: laid on the
    # purple chain it hands over less.
    tbl = table("H-red", "M-orange-purple", "M-yellow-blue T-blue")
    ranked = ranked_for(tbl, "M-red-orange")
    by_chain = {r.placement.used: r for r in ranked}
    on_head, on_other = by_chain[(0,)], by_chain[(1,)]
    # on the head: M-orange-yellow x3 (5 cards); T-orange, RT, RH and H-yellow (3 each)
    assert on_head.given.collecting_cards == 7
    # elsewhere: M-red-yellow x2 (4 cards), RH and H-yellow (3 each)
    assert on_other.given.collecting_cards == 4
    n = on_head.given.cards_left
    assert on_head.given.expected_cards == Fraction(3 * 5 + 4 * 3, n)
    assert on_other.given.expected_cards == Fraction(2 * 4 + 2 * 3, n)
    assert ranked[0] is on_other and on_other.score > on_head.score


def test_score_is_cards_now_less_the_cards_expected_to_be_given_away():
    tbl = table("H-red M-red-blue", "M-blue-green", "T-yellow")
    card = C("RT")
    remaining = remaining_cards(DECK, tbl, extra=[card])
    for r in rank_placements(tbl, card, remaining):
        assert r.given == give_away(table_after(r.placement), remaining)
        assert r.score == r.gain - r.given.expected_cards
    ranked = rank_placements(tbl, card, remaining)
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_a_collected_snake_is_off_the_table_the_next_player_sees():
    tbl = table("H-red M-red-blue", "M-blue-green")
    top = ranked_for(tbl, "RT")[0]
    assert top.placement.completes
    assert table_after(top.placement) == table("M-blue-green")


def test_on_the_last_draw_nothing_is_given_away():
    tbl = table("H-red M-red-blue", "M-blue-green")
    ranked = rank_placements(tbl, C("RT"), Counter())
    assert all(r.given.chance == 0 for r in ranked)
    advice = advise(tbl, C("RT"), DECK, Counter())
    assert "last_card" in [h.key for h in advice.hints]


def test_best_placement_is_the_top_of_the_ranking():
    tbl = table("H-red", "M-orange-purple", "M-yellow-blue T-blue")
    card = C("M-red-orange")
    remaining = remaining_cards(DECK, tbl, extra=[card])
    assert best_placement(tbl, card, remaining) == rank_placements(tbl, card, remaining)[0].placement


def keys(advice):
    return [h.key for h in advice.hints]


def test_hint_when_the_card_can_join_two_snakes():
    tbl = table("M-red-blue", "M-green-yellow")
    card = C("M-blue-green")
    advice = advise(tbl, card, DECK, remaining_cards(DECK, tbl, extra=[card]))
    assert "join_two" in keys(advice)
    joins = [r for r in advice.ranked if r.placement.action == "join"]
    assert joins and all("join_two" in [h.key for h in r.hints] for r in joins)


def test_hint_when_a_join_completes_a_snake():
    tbl = table("H-red M-red-blue", "M-green-yellow T-yellow")
    card = C("M-blue-green")
    advice = advise(tbl, card, DECK, remaining_cards(DECK, tbl, extra=[card]))
    assert advice.hints[0] == Hint("join_complete", {"cards": 5})
    assert advice.hints[0].text("en") == ("This card can join two snakes into a whole snake: "
                                          "you collect 5 cards!")
    assert advice.ranked[0].placement.action == "join" and advice.ranked[0].gain == 5


def test_hint_when_the_card_fits_nowhere():
    tbl = table("H-red M-red-blue")
    card = C("M-green-yellow")
    advice = advise(tbl, card, DECK, remaining_cards(DECK, tbl, extra=[card]))
    assert keys(advice) == ["fits_nowhere"]
    assert [r.placement.action for r in advice.ranked] == ["new"]


def test_the_starter_card_is_not_said_to_fit_nowhere():
    advice = advise((), C("RH"), DECK, remaining_cards(DECK, extra=[C("RH")]))
    assert [r.placement.action for r in advice.ranked] == ["new"]
    assert "fits_nowhere" not in keys(advice)


def test_outlook_offers_every_possible_next_card_with_its_exact_chance():
    tbl = table("H-red M-red-blue", "M-blue-green T-green", "M-yellow-purple")
    remaining = remaining_cards(DECK, tbl)
    view = outlook(tbl, DECK, remaining)
    assert view.pile.size == DECK.size - 5
    assert {d.card for d in view.next_draws} == set(remaining)
    assert sum(d.chance for d in view.next_draws) == 1
    for d in view.next_draws:
        after = Counter(remaining)
        after[d.card] -= 1
        assert d.best == rank_placements(tbl, d.card, after)[0]
    # whoever draws next: T-blue or RT completes the first snake, H-blue or RH the second
    assert view.next_collects.collecting_cards == 4
    badges = {s.index: s.cards_left for s in view.snakes}
    assert badges == {0: 2, 1: 2, 2: 0}


def test_every_language_words_every_hint():
    english = set(TEXTS["en"])
    values = {"cards": 5, "percent": 12, "n": 2, "card": "M-red-blue"}
    for lang in LANGUAGES:
        assert set(TEXTS[lang]) == english, lang
        for key in english:
            message = text(key, lang, **values)
            assert "{" not in message and "M-red-blue" not in message and message.strip()
    assert len({text("join_two", lang) for lang in LANGUAGES}) == 4


def test_badge_plurals():
    assert badge(1) == "can be completed by 1 card left"
    assert badge(3) == "can be completed by 3 cards left"
    assert badge(0) == "no single card left completes it"
    assert badge(1, "fr") == "peut être complété par 1 carte restante"
    assert badge(2, "fr") == "peut être complété par 2 cartes restantes"
    assert badge(1, "es") == "se puede completar con 1 carta que queda"
    assert badge(4, "ko") == "남은 카드 4장으로 완성할 수 있어요"
    assert badge(2, "de") == badge(2, "en")      # a language not offered falls back to English


def test_card_names_agree_with_their_nouns():
    assert card_name("T-blue") == "blue tail" and card_name("M-red-green") == "red-green middle"
    assert card_name("T-blue", "fr") == "une queue bleue"
    assert card_name("M-green-blue", "fr") == "un milieu vert-bleu"
    assert card_name("H-yellow", "es") == "una cabeza amarilla"
    assert card_name("RT", "ko") == "무지개 꼬리"
    assert card_name("H-teal", "fr") == "une tête teal"     # a calibrated deck's own colour


def test_outlook_hints_name_the_cards_worth_hoping_for():
    tbl = table("H-red M-red-blue", "M-green-yellow T-yellow")
    view = outlook(tbl, DECK, remaining_cards(DECK, tbl))
    first = view.hints[0]
    # the biggest first; a card is named by its deck identity (colours in palette order)
    assert first == Hint("hope_join", {"card": "M-green-blue", "cards": 5})
    assert first.text() == "Whoever draws the green-blue middle can join two snakes into a whole snake!"
    assert {h.values["card"] for h in view.hints[1:]} == {"T-blue", "RT", "H-green", "RH"}
    assert all(h.key == "hope_complete" for h in view.hints[1:])


def test_hint_panel_for_the_dashboard():
    tbl = table("H-red M-red-blue", "M-green-yellow T-yellow", "M-purple-orange")
    remaining = remaining_cards(DECK, tbl)
    panel = hint_panel(tbl, DECK, remaining, "es")
    assert panel["cards_left"] == 45 and panel["cards_left_text"] == "quedan 45 cartas por robar"
    # M-green-blue x3 joins the first two; T-blue/RT and H-green/RH finish one each
    assert [b["cards_left"] for b in panel["badges"]] == [5, 5, 0]
    assert panel["badges"] == snake_badges(tbl, remaining, "es")
    assert panel["hints"][0].startswith("¡Quien robe un cuerpo verde y azul") and panel["best"] is None
    card = C("M-blue-green")
    remaining[card] -= 1
    with_card = hint_panel(tbl, DECK, remaining, "en", card)
    assert with_card["best"]["action"] == "complete" and with_card["best"]["collects"] == 5
    assert with_card["hints"][0] == ("This card can join two snakes into a whole snake: "
                                     "you collect 5 cards!")


def test_hints_serialise_with_their_words():
    h = Hint("gives_away", {"percent": 25})
    assert h.to_json("es") == {"key": "gives_away", "values": {"percent": 25},
                               "text": "Cuidado: el siguiente jugador tiene un 25 % de probabilidad "
                                       "de terminar una serpiente."}
