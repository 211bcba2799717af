"""The tracker over scripted games: settling, identity, voting, doubt, desync."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from companion.bench.games import keep_cards
from companion.game.referee import judge_record
from companion.track.referee_link import SNAKE
from companion.track.tracker import Tracker, TrackerSettings
from .scene import FakeAnalyzer, H, Player, StampedAnalyzer, W, analysis, card_dicts, game_frames, unstamp

PLAYERS = ["Ann", "Ben"]
# Three readings of every settled table, so each test knows which reading its fault hits
# (by default two readings that agree are enough; see test_two_agreeing_readings_are_enough).
FIXED = TrackerSettings(agree_readings=0)
GAME = [
    [["M-blue-green"]],
    [["M-blue-green", "M-green-yellow"]],
    [["M-blue-green", "M-green-yellow"], ["H-purple"]],
    [["H-purple", "M-purple-blue", "M-blue-green", "M-green-yellow"]],
    [["H-purple", "M-purple-blue", "M-blue-green", "M-green-yellow", "T-yellow"]],
    [],
]


def _identity(code):
    from companion.game.cards import Card
    from companion.game.deck import load_deck
    return None if code is None else load_deck().identity(Card.parse(code)).code


def summary(moves):
    """What a move is, independent of frame numbers and reading direction."""
    return [(m["player"], _identity(m["card"]), m["action"], m["legal"], m["code"]) for m in moves]


def expected(tables):
    return judge_record({"players": PLAYERS, "frames": [{"table": t} for t in tables]})


def run(tables, fault=None, **player):
    analyzer = FakeAnalyzer(fault=fault)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer, **player)
    p.play([analysis(t) for t in tables])
    return tracker, p


def test_clean_game_matches_the_referee_move_for_move():
    tracker, p = run(GAME)
    want = expected(GAME)
    assert summary(p.moves()) == summary(want["moves"])
    account = tracker.account()
    assert account["scores"] == want["scores"] and account["winners"] == want["winners"]
    # every move's frame is where its table settled, after the frame before it
    for move in p.moves():
        assert move["evidence"]["before"] < move["frame"] <= move["evidence"]["after"]


def test_unchanged_frames_are_not_analysed():
    tracker, p = run(GAME, still=30)
    # 6 tables x 3 readings; the other still frames only cost the small-image check
    assert tracker.stats["analysed"] == 18
    assert tracker.stats["unchanged"] > 6 * 20


def test_two_agreeing_readings_are_enough():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS)
    Player(tracker, analyzer).play([analysis(t) for t in GAME])
    assert analyzer.calls == 2 * len(GAME)

    def misread(data, call):
        if call == 4:   # the second reading of the second table disagrees: read a third time
            data["cards"][-1]["colours"] = ["green", "orange"]
        return data
    analyzer = FakeAnalyzer(fault=misread)
    tracker = Tracker(analyzer, PLAYERS)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in GAME[:2]])
    assert analyzer.calls == 5 and summary(p.moves()) == summary(expected(GAME[:2])["moves"])


def test_readings_that_agree_where_the_picture_changed_are_enough():
    # a card far from the one laid is read differently in the second reading: the pixels say
    # nothing happened there, so reading the picture a third time would settle nothing
    tables = [[["H-purple", "M-purple-blue"], ["M-red-orange"]],
              [["H-purple", "M-purple-blue"], ["M-red-orange", "M-orange-yellow"]]]
    far = {1: (300.0, 200.0)}

    def misread(data, call):
        if call == 4:
            data["cards"][0]["colours"] = ["green"]
        return data
    analyzer = FakeAnalyzer(fault=misread)
    tracker = Tracker(analyzer, PLAYERS)
    p = Player(tracker, analyzer)
    p.play([analysis(t, far) for t in tables])
    assert analyzer.calls == 4 and summary(p.moves()) == summary(expected(tables)["moves"])


@pytest.mark.parametrize("drift", [0.0012, -0.003])  # to +15% / -38% brightness over the game
def test_exposure_drift_is_not_a_change(drift):
    tracker, p = run(GAME[:2], still=60, drift=drift)
    assert tracker.stats["analysed"] == 6
    assert len(p.moves()) == 1


def test_hand_frames_are_never_read():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer, hand_frames=12)
    p.play([analysis(t) for t in GAME[:3]])
    assert analyzer.calls == 9  # three readings per table, none while the hand moves
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])


def test_a_nudged_chain_is_the_same_chain():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    table = [["H-purple", "M-purple-blue", "M-blue-green"], ["M-green-yellow"]]
    p.show(analysis(table))
    p.show(analysis(table), 4, hand=True)
    p.show(analysis(table, offsets={0: (25.0, 18.0), 1: (-30.0, 10.0)}))   # both pushed aside
    p.show(analysis(table), 4, hand=True)
    p.show(analysis(table, offsets={0: (60.0, 5.0)}))
    assert p.moves() == []
    assert tracker.stats["settles"] == 3 and not tracker.desync


def test_a_card_misread_in_one_frame_is_voted_away():
    def misread(data, call):
        if call == 5:  # one reading of the second table sees the yellow end as orange
            for card in data["cards"]:
                if card["colours"] == ["green", "yellow"]:
                    card["colours"] = ["green", "orange"]
        return data
    tracker, p = run(GAME, fault=misread)
    assert summary(p.moves()) == summary(expected(GAME)["moves"])


def test_a_card_misread_later_never_becomes_a_move():
    def misread(data, call):
        if call in (10, 11):  # two of three readings of a later table misread an old card
            for card in data["cards"]:
                if card["colours"] == ["blue", "green"]:
                    card["colours"] = ["blue", "purple"]
                    card["confidence"] = 0.6
        return data
    tracker, p = run(GAME, fault=misread)
    assert summary(p.moves()) == summary(expected(GAME)["moves"])


def test_a_card_missing_under_a_hand_is_not_taken():
    def hide(data, call):
        if call in (7, 8, 9):  # a hand resting still over one card of the third table
            data["cards"] = [c for c in data["cards"] if c["colours"] != ["blue", "green"]]
            for s in data["snakes"]:
                s["cards"] = [i for i in s["cards"] if i in {c["id"] for c in data["cards"]}]
        return data
    tracker, p = run(GAME, fault=hide)
    assert summary(p.moves()) == summary(expected(GAME)["moves"])


def test_jittered_corners_and_a_garbage_reading():
    import random
    rng = random.Random(4)

    def jitter(data, call):
        if call == 8:
            return {"cards": "garbage"}           # a reading that is not an analysis
        for card in data["cards"]:
            dx, dy = rng.uniform(-4, 4), rng.uniform(-4, 4)
            card["corners"] = [[x + dx, y + dy] for x, y in card["corners"]]
            card["ends"] = [[x + dx, y + dy] for x, y in card["ends"]]
        return data
    tracker, p = run(GAME, fault=jitter)
    assert summary(p.moves()) == summary(expected(GAME)["moves"])
    assert tracker.stats["unreadable"] == 1


def test_unreadable_frames_are_skipped_and_counted():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in GAME[:2]])
    before = tracker.stats["frames"]
    assert tracker.feed(p.frame, None) == []
    p.frame += 1
    p.show(analysis(GAME[2]), 4, hand=True)
    p.show(analysis(GAME[2]))
    assert tracker.stats["unreadable"] == 1 and tracker.stats["frames"] == before + 13
    assert len(p.moves()) == 2


def test_an_illegal_move_clearly_seen_is_reported_illegal():
    tables = [[["M-blue-green"]], [["M-blue-green", "M-red-yellow"]]]   # green next to red
    tracker, p = run(tables)
    (move,) = p.moves()
    assert move["legal"] is False and move["code"] == "colour_mismatch"
    assert move["cards"][0]["code"] in ("M-red-yellow", "M-yellow-red")
    assert move["evidence"]["before"] < move["evidence"]["after"]


def test_a_doubtful_new_card_is_settled_by_the_rules():
    # The new card is read red-yellow (sure), green-yellow (sure), red-yellow (unsure):
    # the legal reading wins only because the evidence could not tell them apart.
    def split(data, call):
        for card in data["cards"]:
            if card["colours"] == ["green", "yellow"] and call in (4, 6):
                card["colours"] = ["red", "yellow"]
                card["confidence"] = 0.9 if call == 4 else 0.5
            elif card["colours"] == ["green", "yellow"]:
                card["confidence"] = 0.9
        return data
    tracker, p = run(GAME[:2], fault=split)
    (move,) = p.moves()
    assert _identity(move["card"]) == "M-yellow-green" and move["legal"]


def test_rules_do_not_overrule_a_clear_reading():
    def mostly_red(data, call):
        if call > 3:
            for card in data["cards"]:
                if card["colours"] == ["green", "yellow"] and call in (4, 6):
                    card["colours"] = ["red", "yellow"]
        return data
    tracker, p = run(GAME[:2], fault=mostly_red)
    (move,) = p.moves()
    assert _identity(move["card"]) == "M-red-yellow" and not move["legal"]


def test_a_covered_table_is_a_desync_not_moves():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in GAME[:4]])
    p.show(analysis([["M-blue-green"]]), 4, hand=True)
    p.show(analysis([["M-blue-green"]]))       # most of the table vanished at once
    assert tracker.desync
    kinds = [e.kind for e in p.events]
    assert kinds[-1] == "desync"
    p.show(analysis(GAME[3]), 4, hand=True)
    p.show(analysis(GAME[3]))                  # the table is back as it was
    assert not tracker.desync and p.events[-1].kind == "resync"
    p.show(analysis(GAME[4]), 4, hand=True)
    p.show(analysis(GAME[4]))
    assert summary(p.moves()) == summary(expected(GAME[:5])["moves"])


@pytest.mark.parametrize("after", [
    # more new cards than unseen turns can be ordered
    [["M-blue-green"], ["H-red"], ["T-red"], ["H-blue"], ["H-yellow"], ["T-orange"]],
    # two cards that would both be fouls in any order: a misreading, not a game
    [["M-blue-green"], ["H-blue"], ["T-green"]],
])
def test_new_cards_after_a_drop_out_no_order_of_moves_explains_are_a_desync(after):
    tracker, p = run_with_drop_out([GAME[0], after])
    assert tracker.desync and p.moves() == []


def run_with_drop_out(tables):
    """The first table, then the camera drops out, then the rest."""
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(tables[0])])
    tracker.source_offline()
    for table in tables[1:]:
        p.show(analysis(table), 4, hand=True)
        p.show(analysis(table))
    return tracker, p


def test_two_cards_at_once_while_the_camera_watched_are_one_players_foul():
    tracker, p = run([GAME[0], [["M-blue-green"], ["H-red"], ["T-red"]]])
    (move,) = p.moves()
    assert move["code"] == "two_cards" and move["player"] == "Ann" and "after_gap" not in move


def _laid_unread_then_carried(lay_it: bool):
    """A tail laid alone that no reading sees (when `lay_it`), then carried to the snake's end
    as a middle joins them; without `lay_it` the tail and the middle come at once."""
    start = analysis([["H-red", "M-red-blue"]])
    unread = analysis([["H-red", "M-red-blue"], ["T-green"]], offsets={1: (200.0, 60.0)})
    joined = analysis([["H-red", "M-red-blue", "M-blue-green", "T-green"]])
    missed = {"on": False}

    def miss_the_tail(data, call):
        if missed["on"]:
            data["cards"] = [c for c in data["cards"] if c["colours"] != ["green"]]
            data["snakes"] = [{"cards": [c["id"] for c in data["cards"]], "complete": False}]
        return data

    analyzer = FakeAnalyzer(fault=miss_the_tail)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.show(start)
    if lay_it:
        p.show(unread, p.hand_frames, hand=True)
        missed["on"] = True
        p.show(unread)
        missed["on"] = False
    p.show(joined, p.hand_frames, hand=True)
    p.show(joined)
    return tracker, p.moves()


def test_a_card_laid_unread_then_carried_to_a_join_is_its_own_turn_not_a_foul():
    tracker, moves = _laid_unread_then_carried(lay_it=True)
    assert not tracker.desync
    assert sorted(_identity(m["card"]) for m in moves) == sorted(map(_identity, ["M-blue-green", "T-green"]))
    assert all(m["legal"] for m in moves) and [m["player"] for m in moves] == ["Ann", "Ben"]
    # where nothing was laid unread, two cards at once stay one player's foul
    _, moves = _laid_unread_then_carried(lay_it=False)
    assert [m["code"] for m in moves] == ["two_cards"]


def test_three_cards_seen_after_a_drop_out_are_three_turns_when_an_order_explains_them():
    tables = [GAME[0], [["M-blue-green"], ["H-red"], ["T-red"], ["H-blue"]]]
    tracker, p = run_with_drop_out(tables)
    assert not tracker.desync
    moves = p.moves()
    assert [m["player"] for m in moves] == ["Ann", "Ben", "Ann"]      # turn order goes on
    assert sorted(_identity(m["card"]) for m in moves) == ["H-blue", "H-red", "T-red"]
    # the one foul the table shows is reported (H-blue fits the blue end), no more
    assert [(m["legal"], m["code"]) for m in moves if not m["legal"]] == [(False, "could_attach")]
    assert all(m["after_gap"]["cards"] == 3 for m in moves)


def test_a_card_misread_when_laid_is_corrected_by_later_readings_and_the_game_rejudged():
    def misread_when_laid(data, call):
        if call in (4, 5, 6):   # every reading of the second table: yellow end read orange
            for card in data["cards"]:
                if card["colours"] == ["green", "yellow"]:
                    card["colours"] = ["green", "orange"]
        return data
    tracker, p = run(GAME, fault=misread_when_laid)
    corrections = [e for e in p.events if e.kind == "correction"]
    assert [(c.data["from"], c.data["to"]) for c in corrections] == [("M-orange-green", "M-yellow-green")]
    # the moves as first announced were wrong; the account after the correction is right
    assert _identity(p.moves()[0]["card"]) == "M-orange-green"
    want = expected(GAME)
    assert summary(tracker.moves) == summary(want["moves"])
    assert tracker.account()["scores"] == want["scores"]


def _drop(code_colours):
    """A fault: the analyser does not see the cards with these colours (they are still drawn)."""
    def fault(data, call):
        gone = {c["id"] for c in data["cards"] if c["colours"] == code_colours}
        data["cards"] = [c for c in data["cards"] if c["id"] not in gone]
        data["snakes"] = [{**s, "cards": [i for i in s["cards"] if i not in gone]}
                          for s in data["snakes"] if set(s["cards"]) - gone]
        return data
    return fault


def test_a_card_the_analyser_loses_where_nothing_changed_is_still_there():
    tables = [[["M-blue-green"], ["H-red"]], [["M-blue-green", "M-green-yellow"], ["H-red"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-red"], ["H-red"]]]
    lose_head = _drop(["red"])

    def fault(data, call):   # every reading of the second table misses the red head
        return lose_head(data, call) if 4 <= call <= 6 else data
    tracker, p = run(tables, fault=fault)
    assert summary(p.moves()) == summary(expected(tables)["moves"])
    assert tracker.stats["unseen"] >= 1


def test_a_card_the_analyser_invents_where_nothing_changed_is_never_laid():
    def ghost(data, call):
        if 4 <= call <= 6:   # a card "seen" on empty table while the real move happens elsewhere
            data["cards"].append({"id": 99, "kind": "head", "colours": ["blue"],
                                  "ends": [[500.0, 400.0]], "confidence": 0.9,
                                  "corners": [[450, 380], [506, 380], [506, 420], [450, 420]]})
            data["snakes"].append({"cards": [99], "complete": False})
        return data
    tracker, p = run(GAME[:3], fault=ghost)
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])
    assert tracker.stats["ghosts"] >= 1


def test_an_incomplete_chain_really_taken_is_reported_once_it_stays_gone():
    tables = [[["M-blue-green"], ["H-red"]], [["M-blue-green"]], [["M-blue-green", "M-green-yellow"]]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in tables[:2]])
    assert p.moves() == []                     # gone once: perhaps only hidden
    gone_at = p.frame - 8
    p.show(analysis(tables[2]), 4, hand=True)
    p.show(analysis(tables[2]))
    taken, laid = p.moves()                    # still gone: judged as of when it went
    assert taken["action"] == "collect" and taken["code"] == "collected_incomplete"
    assert gone_at <= taken["frame"] < laid["frame"]
    assert _identity(laid["card"]) == "M-yellow-green" and laid["legal"]


def _carried(before, after, offsets, fault, settings=FIXED):
    """The tracker and player once `after` is laid out carried by `offsets`, its readings
    spoilt by `fault(first)` (`first`: the call number of its first reading)."""
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=settings)
    p = Player(tracker, analyzer)
    p.show(analysis(before))
    p.show(analysis(after), 4, hand=True)
    analyzer.fault = fault(analyzer.calls + 1)
    p.show(analysis(after, offsets=offsets))
    return tracker, p


def test_a_chain_carried_far_to_make_room_is_followed_by_its_cards():
    before = [["H-purple", "M-purple-blue", "M-blue-green"], ["M-green-yellow"]]
    after = [["H-purple", "M-purple-blue", "M-blue-green", "M-yellow-blue"], ["M-green-yellow"]]

    def misread_middle(data, call):   # and one of its cards is misread while it moves
        for card in data["cards"]:
            if card["colours"] == ["purple", "blue"] and call % 2:
                card["colours"] = ["purple", "red"]
        return data
    tracker, p = _carried(before, after, {0: (20.0, 300.0), 1: (330.0, -20.0)},   # both far away
                          lambda first: misread_middle)
    (move,) = p.moves()
    assert (_identity(move["card"]), move["action"], move["legal"]) == ("M-yellow-blue", "extend", False)
    assert move["code"] == "colour_mismatch" and not tracker.desync


@pytest.mark.parametrize("settings", [FIXED, TrackerSettings(readings=2)],
                         ids=["three readings", "two readings"])
def test_a_short_chain_carried_far_and_misread_is_the_same_chain_though_one_reading_missed_a_card(settings):
    # a three-card snake is carried across the table and extended; every reading there
    # misreads its last middle (orange-yellow as red-yellow, as a misreading could), and the
    # first also misses its middle card: the cards that reading found first on those places
    # are the snake's own, seen by the other readings, never new cards beside them
    before = [["M-red-green", "M-red-orange", "M-orange-yellow"], ["T-blue"]]
    after = [["M-red-green", "M-red-orange", "M-orange-yellow", "M-yellow-purple"], ["T-blue"]]

    def fault(first):
        misread = _misread_in(range(first, first + 10), ["orange", "yellow"], ["red", "yellow"], 0.9)
        lost = _lost({first}, ["red", "orange"])
        return lambda data, call: lost(misread(data, call), call)
    tracker, p = _carried(before, after, {0: (60.0, 300.0)}, fault, settings)
    (move,) = p.moves()
    assert (_identity(move["card"]), move["action"], move["legal"]) == ("M-yellow-purple", "extend", True)
    assert not tracker.desync


def _lost_while_play_goes_on(last: list[list[str]]):
    """Most of the table swept away (no change explains it), then a card laid at each settle
    while the tracker waits in desync, and at last the table `last` added to it."""
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in GAME[:4]])
    left = [["M-green-yellow"]]
    for card in ["T-red", "H-orange", "T-orange"][:FIXED.accept_after]:
        p.show(analysis(left), 4, hand=True)
        p.show(analysis(left))
        assert tracker.desync and len(p.moves()) == 3    # nothing judged meanwhile
        left = left + [[card]]
    left = left + last
    p.show(analysis(left), 4, hand=True)
    p.show(analysis(left))
    return tracker, p, left


def test_a_table_unexplainable_for_several_readings_is_finally_taken_as_it_is():
    tracker, p, left = _lost_while_play_goes_on([])
    assert not tracker.desync
    assert len(tracker.table) == len(left)
    # each card laid while lost is dated by the picture that first showed it: three turns,
    # in the order they were played, not one foul of three cards at once
    late = p.moves()[3:]
    assert [m["card"] for m in late] == ["T-red", "H-orange", "T-orange"]
    assert [m["player"] for m in late] == [PLAYERS[(3 + i) % len(PLAYERS)] for i in range(3)]
    assert [m["frame"] for m in late] == sorted({m["frame"] for m in late})


def test_cards_that_appear_together_while_lost_are_still_judged_as_laid_together():
    tracker, p, _ = _lost_while_play_goes_on([["H-yellow"]])   # the last two in one picture
    assert not tracker.desync
    last = p.moves()[-1]
    assert last["legal"] is False and last["code"] == "two_cards"   # what the camera saw


def test_more_new_cards_than_one_turn_while_the_camera_watched_are_a_desync():
    tracker, p = run([GAME[0], [["M-blue-green"], ["H-red"], ["T-red"], ["H-blue"]]])
    assert tracker.desync and p.moves() == []


def test_cards_that_fit_in_one_order_only_after_a_drop_out_are_sure_of_it():
    # green-yellow then yellow-red extends twice; the other order lays a card alone first
    tracker, p = run_with_drop_out([GAME[0], [["M-blue-green", "M-green-yellow", "M-yellow-red"]]])
    moves = p.moves()
    assert [_identity(m["card"]) for m in moves] == [_identity("M-green-yellow"), _identity("M-yellow-red")]
    assert all(m["after_gap"] == {"cards": 2, "order_sure": True} for m in moves)


def test_a_table_taken_as_it_is_after_a_long_drop_out_is_judged_as_one_change():
    # more cards than unseen turns are ordered (every permutation would be tried)
    big = [["M-blue-green"], ["H-red"], ["T-red"], ["H-blue"], ["H-yellow"], ["T-orange"],
           ["H-green"], ["T-purple"], ["H-orange"]]
    tracker, p = run_with_drop_out([GAME[0], big])
    assert tracker.desync
    tracker.accept_table()
    p.show(analysis(big), 4, hand=True)
    p.show(analysis(big))
    assert not tracker.desync
    assert p.moves() and not any("after_gap" in m for m in p.moves())


def _miss_in(calls, colours):
    """A fault: the readings numbered `calls` do not see the card with these colours."""
    lose = _drop(colours)
    return lambda data, call: lose(data, call) if call in calls else data


def test_a_card_the_analyser_missed_when_laid_is_judged_in_its_turn_once_found():
    # every reading of the second table misses the card just laid; the third finds it where
    # nothing changed since: it was laid a turn ago, not invented (nor laid with H-purple)
    tracker, p = run(GAME[:3], fault=_miss_in({4, 5, 6}, ["green", "yellow"]))
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])
    laid, _ = p.moves()
    assert laid["frame"] < p.moves()[1]["frame"]       # dated by the picture that first showed it


def test_a_new_card_beside_a_card_the_analyser_misses_waits_to_be_read_whole():
    # the second table's readings miss the card the new one extends: judged then, the new
    # card would stand alone (a foul: it could attach); it waits for the next table instead
    tracker, p = run(GAME[:3], fault=_miss_in({4, 5, 6}, ["blue", "green"]))
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])
    assert tracker.stats["deferred"] == 1


def test_a_card_beside_an_unseen_one_in_every_reading_is_a_desync_not_a_guess():
    # the card it extends is never seen again while play goes on elsewhere
    later = [GAME[1] + [["H-red"]], GAME[1] + [["H-red"], ["T-red"]], GAME[1] + [["H-red"], ["T-red"], ["H-orange"]]]
    tracker, p = run(GAME[:2] + later, fault=_miss_in(set(range(4, 100)), ["blue", "green"]))
    assert p.moves() == [] and tracker.desync


def test_a_card_laid_as_a_lone_card_beside_it_is_taken_away_is_judged_at_once():
    # a lone tail is taken off the table (a foul: no complete snake) in the turn a tail is laid
    # against the snake beside it; the new tail's one end was read touching that snake, so the
    # card gone from beside it cannot touch it too: nothing waits, and nothing is lost
    lone = {1: (116.0, -20.0)}       # the lone tail just under the snake's open end
    tables = [[["M-blue-green"]], [["M-blue-green", "M-green-yellow"]],
              [["M-blue-green", "M-green-yellow"], ["T-purple"]],
              [["M-blue-green", "M-green-yellow", "T-yellow"]],
              [["M-blue-green", "M-green-yellow", "T-yellow"], ["H-red"]]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t, offsets=lone if i == 2 else None) for i, t in enumerate(tables)])
    assert not tracker.desync and tracker.stats["deferred"] == 0
    # (the taking is confirmed a table later, and put back in its turn before the new tail)
    assert summary(tracker.account()["moves"]) == summary(expected(tables)["moves"])


def test_a_card_missed_in_the_first_reading_belongs_to_the_starting_table():
    # every reading of the starting table misses its one card; the next table shows it where
    # nothing changed since, beside a card whose place did change: the first lay there when
    # play started, the second was the first player's move (taken for part of the start, every
    # later move would go to the wrong player)
    tables = [[["M-blue-green"]], [["M-blue-green"], ["H-red"]],
              [["M-blue-green", "M-green-yellow"], ["H-red"]]]
    tracker, p = run(tables, fault=_miss_in({1, 2, 3}, ["blue", "green"]))
    assert summary(p.moves()) == summary(expected(tables)["moves"])
    assert [[_identity(c) for c in chain] for chain in tracker.history[0]["table"]] == \
        [[_identity("M-blue-green")]]


def test_a_starting_card_missed_and_nudged_by_the_first_card_laid_against_it_starts_the_game():
    # the first table is read empty; the first move's card is laid against the starting card,
    # nudging it a few pixels: its place changed, but far less than a card laid there would
    # change it, so it lay there and the other was the first move
    tables = [[["M-blue-green"]], [["M-blue-green", "M-green-yellow"]]]
    analyzer = FakeAnalyzer(fault=_miss_in({1, 2, 3}, ["blue", "green"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play([analysis(t, {0: (4.0, 2.0)} if k else None) for k, t in enumerate(tables)])
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert [[_identity(c) for c in chain] for chain in tracker.history[0]["table"]] == \
        [[_identity("M-blue-green")]]


def test_a_starting_card_missed_until_after_the_first_move_still_starts_the_game():
    # the reader misses the starting card in the first two tables, so the first move's card
    # is taken for where play starts; found alone twice later where nothing changed since
    # the first (empty) reading, it was the starting table, and the first move is judged
    # (every later move then goes to the right player)
    tables = [[["M-blue-green"]],
              [["M-blue-green"], ["H-red"]],
              [["M-blue-green"], ["H-red", "M-red-purple"]],
              [["M-blue-green"], ["H-red", "M-red-purple", "M-purple-orange"]],
              [["M-blue-green", "M-green-yellow"], ["H-red", "M-red-purple", "M-purple-orange"]]]
    tracker, p = run(tables, fault=_miss_in(set(range(1, 7)), ["blue", "green"]))
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert tracker.stats["from_start"] == 1


def test_cards_laid_after_an_empty_first_reading_all_start_the_game_when_every_place_changed():
    # the camera watched the empty table before play: the first cards found all lie where
    # the picture changed, and they are where play starts
    tables = [[], [["M-blue-green"]], [["M-blue-green", "M-green-yellow"]]]
    tracker, p = run(tables)
    assert summary(p.moves()) == summary(
        judge_record({"players": PLAYERS, "frames": [{"table": t} for t in tables[1:]]})["moves"])


def _misread_in(calls, colours, as_colours, confidence=0.6):
    def fault(data, call):
        for card in data["cards"]:
            if call in calls and card["colours"] == colours:
                card["colours"], card["confidence"] = list(as_colours), confidence
        return data
    return fault


def test_a_reading_of_a_card_the_deck_does_not_have_is_never_a_move():
    # every reading of the second table sees the new card with green at both ends: no such
    # card exists, so that table is not explainable; found right a turn later, it is judged then
    tracker, p = run(GAME[:3], fault=_misread_in({4, 5, 6}, ["green", "yellow"], ["green", "green"]))
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])


def test_a_settled_card_whose_later_readings_rival_its_name_is_renamed_when_that_breaks_fewer_rules():
    # laid and read red-yellow in every reading of its table, about as surely as the rest (so
    # it does not wait): a foul is reported; the next table reads it green-yellow as strongly:
    # neither reading is clear, the legal one wins
    tracker, p = run(GAME[:3], fault=_misread_in({4, 5, 6}, ["green", "yellow"], ["red", "yellow"], 0.9))
    assert not p.moves()[0]["legal"]                              # as first announced
    assert [e.data["to"] for e in p.events if e.kind == "correction"] == ["M-yellow-green"]
    assert summary(tracker.moves) == summary(expected(GAME[:3])["moves"])


def test_a_clear_reading_is_not_renamed_by_the_rules():
    # the same, but the next table's readings are few and weak: the foul stands
    def fault(data, call):
        data = _misread_in({4, 5, 6}, ["green", "yellow"], ["red", "yellow"], 0.95)(data, call)
        return _misread_in({7, 8, 9}, ["green", "yellow"], ["green", "yellow"], 0.2)(data, call)
    tracker, p = run(GAME[:3], fault=fault)
    assert [e for e in p.events if e.kind == "correction"] == []
    assert _identity(tracker.moves[0]["card"]) == "M-red-yellow" and not tracker.moves[0]["legal"]


def test_a_card_laid_beside_a_snake_taken_in_the_same_turn_is_judged_in_its_turn():
    # a snake of several cards gone at once is a taking (awaiting confirmation), not cards the
    # reader missed: the new card beside where they lay does not wait for them
    near = {1: (60.0, -28.0)}      # the snake lies just below where the new card goes
    tables = [analysis([["M-blue-green"], ["M-red-orange", "M-orange-purple"]], near),
              analysis([["M-blue-green", "M-green-yellow"]]),
              analysis([["M-blue-green", "M-green-yellow"], ["T-orange"]])]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    moves = [(m["action"], _identity(m["card"]), m["legal"], m["code"]) for m in p.moves()]
    assert sorted(moves[:2], key=str) == [("collect", None, False, "collected_incomplete"),
                                          ("extend", "M-yellow-green", True, None)]
    assert tracker.stats["deferred"] == 0


def test_a_card_missed_at_one_end_is_not_the_new_card_laid_at_the_other():
    # the last card of the chain is missed in every reading of the table where a card is laid
    # at the chain's other end: the new card is new, not the missed one read differently
    right = {0: (58.0, 0.0)}
    tables = [analysis([["M-green-yellow"]], right),
              analysis([["M-green-yellow", "M-yellow-red"]], right),
              analysis([["M-blue-green", "M-green-yellow", "M-yellow-red"]]),
              analysis([["M-blue-green", "M-green-yellow", "M-yellow-red"]])]
    analyzer = FakeAnalyzer(fault=_miss_in({7, 8, 9}, ["yellow", "red"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    want = judge_record({"players": PLAYERS, "frames": [
        {"table": t} for t in ([["M-green-yellow"]], [["M-green-yellow", "M-yellow-red"]],
                               [["M-blue-green", "M-green-yellow", "M-yellow-red"]])]})
    assert summary(tracker.moves) == summary(want["moves"])


def test_a_card_missed_when_laid_is_dated_right_though_its_chain_was_pushed_since():
    # the card laid in the second table is missed there; by the third the chain was pushed
    # aside (every pixel of it changed) while another card was laid: still one card a turn
    pushed = {0: (16.0, 12.0)}
    tables = [analysis([["M-blue-green"]]), analysis([["M-blue-green", "M-green-yellow"]]),
              analysis([["M-blue-green", "M-green-yellow"], ["H-red"]], pushed)]
    analyzer = FakeAnalyzer(fault=_miss_in({4, 5, 6}, ["green", "yellow"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    want = expected([[["M-blue-green"]], [["M-blue-green", "M-green-yellow"]],
                     [["M-blue-green", "M-green-yellow"], ["H-red"]]])
    assert summary(tracker.moves) == summary(want["moves"])


def test_a_link_misread_between_two_cards_that_stayed_put_does_not_split_their_snake():
    # every reading of the fifth table sees the snake's head apart from the rest (as when a
    # card between them is missed, or misread into another card): nothing moved there, so
    # the snake is whole and the card laid at its other end is an ordinary extension
    def split(data, call):
        if call in (13, 14, 15):
            snakes = []
            for s in data["snakes"]:
                snakes += [{"cards": s["cards"][:1]}, {"cards": s["cards"][1:]}] \
                    if len(s["cards"]) == 5 else [s]
            data["snakes"] = snakes
        return data
    tracker, p = run(GAME[:5], fault=split)
    assert summary(p.moves()) == summary(expected(GAME[:5])["moves"])


def test_a_link_misread_in_a_snake_pushed_as_it_was_extended_does_not_split_it():
    # as above, but the snake was pushed along as T-yellow was laid: every card moved, so
    # the pixels cannot vouch for the link.  Its two cards lie as far apart as they did: the
    # snake is whole, and the extension is no rearrangement
    def split(data, call):
        if call in (13, 14, 15):
            data["snakes"] = [part for s in data["snakes"] for part in (
                [{"cards": s["cards"][:1]}, {"cards": s["cards"][1:]}] if len(s["cards"]) == 5 else [s])]
        return data
    analyzer = FakeAnalyzer(fault=split)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play([analysis(t, {0: (60.0, 40.0)} if k == 4 else None)
                                    for k, t in enumerate(GAME[:5])])
    assert summary(tracker.moves) == summary(expected(GAME[:5])["moves"])


@pytest.mark.parametrize("taken", [False, True])
def test_a_card_missed_in_a_snake_pushed_along_is_kept_where_the_picture_shows_it(taken):
    # the snake is pushed up and along as M-red-yellow is laid, and from then on every
    # reading misses its head.  The pixels at the head's old place changed (the push), but
    # the picture shows the head where the push carried it: it is there, and the extension
    # is no rearrangement.  A head really taken as the snake was pushed is not kept.
    snake = ["H-purple", "M-purple-blue", "M-blue-green", "M-green-yellow", "M-yellow-red"]
    after = [snake[1:]] if taken else [snake]
    tables = GAME[:4] + [after, after + [["M-orange-green"]], after + [["M-orange-green", "M-green-blue"]]]
    analyzer = FakeAnalyzer(fault=_lost(set(range(13, 100)), ["purple"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play([analysis(t, {0: (30.0 + 58.0 * taken, -20.0)} if k >= 4 else None)
                                    for k, t in enumerate(tables)])
    assert tracker.stats["carried_unseen"] == (0 if taken else 1)
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def test_a_change_left_to_wait_for_the_next_table_is_judged_when_the_recording_ends():
    # the last card laid is read doubtfully (right, but far less surely than the rest), so
    # its change waits for the next table to read it afresh; the recording ends first
    tables = GAME[:4]
    analyzer = FakeAnalyzer(fault=_misread_in(set(range(10, 100)), ["purple", "blue"], ["purple", "blue"], 0.4))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in tables])
    assert tracker.stats["deferred"] >= 1
    assert len(tracker.moves) == len(expected(tables)["moves"]) - 1
    events = tracker.end_of_source()
    assert [e.kind for e in events].count("move") == 1
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert tracker.end_of_source() == []      # nothing is judged twice


def test_a_missed_card_is_not_kept_where_its_carried_snake_would_put_it_if_a_card_lies_there():
    # the same push, read directly: the head is found where the push carried it unless the
    # picture shows no head there, or a card was read on that place (the head itself, read
    # as another card, or one laid there: two cards never share a place)
    from companion.track.identity import Track
    from companion.track.tracker import _Window
    from .scene import draw

    snake = ["H-purple", "M-purple-blue", "M-blue-green"]
    def outlines(chains, offsets=None):
        return [np.array(c["corners"], float) for c in analysis(chains, offsets)["cards"]]
    then, pushed = outlines([snake]), outlines([snake], {0: (30.0, -20.0)})
    tracker = Tracker(FakeAnalyzer(), PLAYERS, settings=FIXED)
    tracker.chains = [[0, 1, 2]]
    tracker._settled_outlines = {t: then[t].tolist() for t in range(3)}
    tracker._settled_small = tracker.gate.shrink(draw(analysis([snake])))
    tracker.tracks = {t: Track(t, pushed[t].mean(axis=0), 40.0, pushed[t]) for t in (1, 2)}
    tracker.tracks[0] = Track(0, then[0].mean(axis=0), 40.0, then[0])

    def kept(now: dict, present=frozenset((1, 2))) -> dict:
        image = draw(now)
        window = _Window([100], image=image, small=tracker.gate.shrink(image))
        return tracker._carried_unseen({0}, set(present), window)
    assert list(kept(analysis([snake], {0: (30.0, -20.0)}))) == [0]
    assert np.allclose(kept(analysis([snake], {0: (30.0, -20.0)}))[0], pushed[0], atol=1.0)
    assert kept(analysis([snake[1:]], {0: (88.0, -20.0)})) == {}
    tracker.tracks[9] = Track(9, pushed[0].mean(axis=0), 40.0, pushed[0])
    assert kept(analysis([snake], {0: (30.0, -20.0)}), present={1, 2, 9}) == {}


def test_a_settled_link_is_held_only_between_cards_that_lie_as_far_apart_as_they_did():
    from companion.track.identity import Track

    def card(t, x, y):
        corners = np.array([[x, y], [x + W, y], [x + W, y + 40], [x, y + 40]], float)
        return Track(t, corners.mean(axis=0), 40.0, corners)
    tracker = Tracker(FakeAnalyzer(), PLAYERS, settings=FIXED)
    settled = {1: card(1, 0, 0), 2: card(2, 58, 0), 3: card(3, 116, 0), 4: card(4, 174, 0)}
    tracker._settled_outlines = {t: c.corners.tolist() for t, c in settled.items()}
    # the snake pushed along (every card moved), 2 and 3 drawn a little closer, 4 pulled away
    tracker.tracks = {1: card(1, 60, 40), 2: card(2, 118, 40), 3: card(3, 170, 40), 4: card(4, 260, 40)}
    links = {frozenset((1, 2)), frozenset((2, 3)), frozenset((3, 4))}
    assert tracker._held_together(links, {1, 2, 3, 4}, set()) == {frozenset((1, 2)), frozenset((2, 3))}
    # not where a card is gone, nor beside a card whose both ends were read linked elsewhere
    assert tracker._held_together(links, {1, 3, 4}, set()) == set()
    assert tracker._held_together({frozenset((1, 2))}, {1, 2, 5, 6},
                                  {frozenset((2, 5)), frozenset((2, 6))}) == set()


def test_a_card_left_waiting_and_then_pushed_into_a_join_is_judged_in_its_own_turn():
    # H-red is laid just beside M-blue-green while the reader misses M-blue-green: the change
    # waits.  Then M-green-red joins them, H-red pushed up to it: H-red was seen in the
    # waiting picture, so it was laid then (its place changed since, which the pixels
    # cannot date) and the join is one card, not two at once
    near = {1: (0.0, -24.0)}
    tables = [analysis([["M-blue-green"]]), analysis([["M-blue-green"], ["H-red"]], near),
              analysis([["M-blue-green", "M-green-red", "H-red"]])]
    analyzer = FakeAnalyzer(fault=_miss_in({4, 5, 6}, ["blue", "green"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    assert tracker.stats["deferred"] == 1
    want = expected([[["M-blue-green"]], [["M-blue-green"], ["H-red"]],
                     [["M-blue-green", "M-green-red", "H-red"]]])
    assert summary(tracker.moves) == summary(want["moves"])


def test_a_card_laid_after_a_waiting_change_that_pushed_its_chain_is_judged_on_its_own():
    # M-red-blue is laid at the left of the snake, pushing it right, while the reader misses
    # the card it touches: the change waits.  The push happened then, not since: the card
    # laid at the other end next turn is not dated back to the waiting picture
    tables = [analysis([["M-blue-green", "M-green-yellow"]]),
              analysis([["M-red-blue", "M-blue-green", "M-green-yellow"]]),
              analysis([["M-red-blue", "M-blue-green", "M-green-yellow", "M-yellow-orange"]])]
    analyzer = FakeAnalyzer(fault=_miss_in({4, 5, 6}, ["blue", "green"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    assert tracker.stats["deferred"] == 1
    want = expected([[["M-blue-green", "M-green-yellow"]],
                     [["M-red-blue", "M-blue-green", "M-green-yellow"]],
                     [["M-red-blue", "M-blue-green", "M-green-yellow", "M-yellow-orange"]]])
    assert summary(tracker.moves) == summary(want["moves"])


def test_a_new_card_read_less_surely_than_the_table_waits_for_the_next_table():
    # every reading of the table where M-green-yellow is laid sees it green-orange, unsure
    # (a still picture is misread the same way in every frame); the next table reads it
    # right: it waited, so the move is announced right in its turn, never corrected later
    tracker, p = run(GAME[:3], fault=_misread_in({4, 5, 6}, ["green", "yellow"], ["green", "orange"]))
    assert tracker.stats["deferred"] == 1
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])
    assert [e for e in p.events if e.kind == "correction"] == []
    assert p.moves()[0]["frame"] < p.moves()[1]["frame"]


def test_a_new_card_read_as_a_card_whose_copies_are_all_out_waits_for_the_next_table():
    # the deck holds one purple head, already on the table: a second one read surely is still
    # unlikely (the red head laid beside it is misread); read right next time, it is judged so
    tables = [[["H-purple", "M-purple-blue"]], [["H-purple", "M-purple-blue"], ["H-red"]],
              [["H-purple", "M-purple-blue", "M-blue-green"], ["H-red"]]]
    tracker, p = run(tables, fault=_misread_in({4, 5, 6}, ["red"], ["purple"], 0.95))
    assert tracker.stats["deferred"] == 1
    assert summary(p.moves()) == summary(expected(tables)["moves"])


def test_a_card_carried_to_be_joined_and_misread_there_is_the_same_card():
    # the lone yellow tail is carried across the table to be joined by M-blue-yellow, and every
    # reading of that table sees it as an orange tail, unsure: it is the tail carried and
    # misread, not a yellow tail taken away (a foul) and an orange one laid
    far = {1: (300.0, 150.0)}
    tables = [analysis([["H-purple", "M-purple-blue"], ["T-yellow"]], far),
              analysis([["H-purple", "M-purple-blue", "M-blue-yellow", "T-yellow"]]),
              analysis([["H-purple", "M-purple-blue", "M-blue-yellow", "T-yellow"], ["H-red"]]),
              analysis([["H-purple", "M-purple-blue", "M-blue-yellow", "T-yellow"],
                        ["H-red", "M-red-green"]])]
    analyzer = FakeAnalyzer(fault=_misread_in({4, 5, 6}, ["yellow"], ["orange"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    assert tracker.stats["carried"] == 1
    want = judge_record({"players": PLAYERS, "frames": [{"table": t} for t in (
        [["H-purple", "M-purple-blue"], ["T-yellow"]],
        [["H-purple", "M-purple-blue", "M-blue-yellow", "T-yellow"]],
        [["H-purple", "M-purple-blue", "M-blue-yellow", "T-yellow"], ["H-red"]],
        [["H-purple", "M-purple-blue", "M-blue-yellow", "T-yellow"], ["H-red", "M-red-green"]])]})
    assert summary(p.moves()) == summary(want["moves"])


def test_a_snake_taken_in_the_turn_a_card_is_laid_is_recorded_before_that_card():
    # the lone red head is taken (a foul) in the turn M-green-yellow is laid; its going is only
    # confirmed a table later, by when the card was judged: the record is put in order, as
    # the referee orders one change holding both
    tables = [[["M-blue-green"], ["H-red"]], [["M-blue-green", "M-green-yellow"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-red"]]]
    tracker, p = run(tables)
    want = expected(tables)
    assert [m["action"] for m in want["moves"]] == ["collect", "extend", "extend"]
    assert summary(tracker.moves) == summary(want["moves"])
    assert tracker.account()["scores"] == want["scores"]
    assert [h["frame"] for h in tracker.history] == sorted(h["frame"] for h in tracker.history)


def test_links_read_that_make_no_chains_leave_the_settled_links_standing():
    # the snake is pushed aside as T-yellow is laid, and every reading of that table also links
    # the purple head to M-blue-green (three neighbours: no chains).  The links between the
    # settled cards stand; the new card takes the links read to it: an ordinary extension
    def spurious(data, call):
        if call in (13, 14, 15):
            data["snakes"].append({"cards": [0, 2], "complete": False})
        return data
    analyzer = FakeAnalyzer(fault=spurious)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in GAME[:4]] + [analysis(GAME[4], {0: (30.0, 20.0)})])
    assert not tracker.desync
    assert summary(p.moves()) == summary(expected(GAME[:5])["moves"])


def test_a_tail_read_beside_a_second_card_in_fewer_readings_keeps_its_surer_link():
    # T-yellow is laid at the end of a snake; two of the three readings also link it to the
    # lone M-red-orange (a card matched to the wrong sighting).  A tail has one connecting
    # end: the link every reading saw is the one, and the move an ordinary extension
    tables = [[["M-blue-green", "M-green-yellow"]],
              [["M-blue-green", "M-green-yellow"], ["M-red-orange"]],
              [["M-blue-green", "M-green-yellow", "T-yellow"], ["M-red-orange"]]]

    def spurious(data, call):
        if call in (8, 9):
            data["snakes"] = [{"cards": [0, 1, 2, 3], "complete": False}]
        return data
    analyzer = FakeAnalyzer(fault=spurious)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in tables])
    assert summary(p.moves()) == summary(expected(tables)["moves"])
    assert sorted(map(len, tracker.table)) == [1, 3]


def test_a_tail_every_reading_sees_against_a_linked_head_is_the_foul_it_looks_like():
    # a head has one connecting end, but a link every reading sees is not dropped for it
    tables = [[["H-yellow"]], [["H-yellow", "M-yellow-purple"]],
              [["T-yellow", "H-yellow", "M-yellow-purple"]]]
    tracker, p = run(tables)
    want = expected(tables)["moves"]
    assert want[-1]["code"] == "head_tail_adjacent"
    assert summary(p.moves()) == summary(want)


# M-yellow-red is laid at the snake's end; H-purple is laid alone the turn after
EXTENDED = [[["M-blue-green", "M-green-yellow"]],
            [["M-blue-green", "M-green-yellow", "M-yellow-red"]],
            [["M-blue-green", "M-green-yellow", "M-yellow-red"], ["H-purple"]]]


def _apart_in(calls, doubtful_in=()):
    """A fault: the readings `calls` miss M-yellow-red's link to its snake; those
    `doubtful_in` read it doubtfully."""
    def fault(data, call):
        if call in doubtful_in:
            data["cards"][2]["confidence"] = 0.5
        if call in calls:
            data["snakes"][0]["cards"] = [0, 1]
            data["snakes"].append({"cards": [2], "complete": False})
        return data
    return fault


def test_a_waiting_cards_link_is_voted_on_by_the_readings_it_waited_through():
    # M-yellow-red is read doubtfully where it is laid, so its change waits; every reading of
    # the next table misses its link to the snake.  The readings it waited through saw the
    # link as often: it extended the snake, it was not laid alone
    analyzer = FakeAnalyzer(fault=_apart_in((7, 8, 9), doubtful_in=(4, 5, 6)))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in EXTENDED])
    assert tracker.stats["deferred"] == 1
    assert summary(p.moves()) == summary(expected(EXTENDED)["moves"])


def test_a_card_read_once_on_a_settled_cards_place_is_not_a_second_card_laid():
    # two readings per table, as for a real source: one reading of the table where H-purple
    # is laid also finds a card read otherwise on M-blue-green's place.  It is that card
    # misread, not a second card laid in the same turn (a foul)
    def doubled(data, call):
        if call == 5:
            ghost = copy.deepcopy(data["cards"][0])
            ghost.update(id=99, colours=["blue", "purple"],
                         corners=[[x + 3, y + 2] for x, y in ghost["corners"]])
            data["cards"].append(ghost)
            data["snakes"].append({"cards": [99], "complete": False})
        return data
    analyzer = FakeAnalyzer(fault=doubled)
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings(readings=2, agree_readings=0))
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in GAME[:3]])
    assert summary(p.moves()) == summary(expected(GAME[:3])["moves"])


def test_a_link_every_reading_missed_when_laid_and_every_reading_sees_next_turn_is_corrected():
    # every reading of the table where M-yellow-red is laid misses its link (a lone card
    # beside a snake it could extend: a foul).  Neither card moves, and every reading of the
    # next table links them: the table judged is corrected, an extension.  (A card just laid
    # is linked at once to the end of its colour it touches, `_links_to_laid`: not here,
    # where the correction is what is tested.)
    analyzer = FakeAnalyzer(fault=_apart_in((4, 5, 6)))
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings(agree_readings=0, laid_reach=0.0))
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in EXTENDED])
    assert summary(tracker.moves) == summary(expected(EXTENDED)["moves"])
    assert [e.kind for e in p.events].count("correction") == 1


def test_a_card_missed_when_laid_and_touched_by_the_next_one_is_dated_to_its_own_turn():
    # M-green-yellow is missed in every reading of the table where it is laid; laying the next
    # card against it nudges the snake a couple of pixels (no push to measure; a quarter of
    # its pixels change): its place changed then only a little, while it changed wholly the
    # turn before: it was laid then, and the next card is not a second card at once
    nudged = {0: (2.0, 1.0)}
    tables = [analysis([["M-blue-green"]]), analysis([["M-blue-green", "M-green-yellow"]]),
              analysis([["M-blue-green", "M-green-yellow", "M-yellow-red"]], nudged)]
    analyzer = FakeAnalyzer(fault=_miss_in({4, 5, 6}, ["green", "yellow"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    want = expected([[["M-blue-green"]], [["M-blue-green", "M-green-yellow"]],
                     [["M-blue-green", "M-green-yellow", "M-yellow-red"]]])
    assert summary(tracker.moves) == summary(want["moves"])


def _lost(calls, colours):
    """A fault: the readings numbered `calls` miss the card with these colours, and its chain
    breaks where it lay (as a reader that does not see a card cannot link across it)."""
    def fault(data, call):
        if call not in calls:
            return data
        return keep_cards(data, [c for c in data["cards"] if c["colours"] != colours])
    return fault


def test_a_link_read_across_a_card_kept_though_missed_is_the_readers_not_the_tables():
    # the reader missed the middle card of 1-2-3 and linked its neighbours across the gap
    # (seen in a pushed snake at the turn that completed it: the completion was judged a
    # rearrangement and the snake collected a card short); the card is kept, so is its place
    tracker = Tracker(FakeAnalyzer(), PLAYERS, settings=FIXED)
    tracker.chains = [[1, 2, 3], [4, 5]]
    edges = {frozenset((1, 3)), frozenset((4, 5))}
    tracker._restore_links({2}, {1, 2, 3, 4, 5}, edges)
    assert edges == {frozenset((1, 2)), frozenset((2, 3)), frozenset((4, 5))}


@pytest.mark.parametrize("laid, links, want", [
    # a card laid at the end 3 of 1-2-3, read touching the card 2 before that end as well
    (4, {(3, 4), (2, 4)}, [[1, 2, 3, 4], [6, 7, 8]]),
    # a card joining 1-2-3 to 6-7-8, read touching the middles 2 and 7 as well
    (5, {(3, 5), (5, 6), (2, 5), (5, 7)}, [[1, 2, 3, 5, 6, 7, 8]]),
])
def test_a_card_laid_read_touching_a_snakes_middle_touches_only_its_ends(laid, links, want):
    # the readings linked a card just laid to a card in the middle of a settled snake as well
    # (and the last reading alone, here the same, makes no chains either): that card has no
    # end left to touch
    tracker = Tracker(FakeAnalyzer(), PLAYERS, settings=FIXED)
    tracker.chains = [[1, 2, 3], [6, 7, 8]]
    edges = {frozenset(e) for e in [(1, 2), (2, 3), (6, 7), (7, 8)] + sorted(links)}
    chains = tracker._chains_of({1, 2, 3, 6, 7, 8, laid}, edges, edges, {1, 2, 3, 6, 7, 8})
    assert chains is not None
    assert sorted(c if c[0] < c[-1] else c[::-1] for c in chains) == want


@pytest.mark.parametrize("every", [False, True])
def test_a_foul_link_is_believed_only_when_every_reading_shows_it(every):
    # H-green laid alone below M-orange-yellow: cards that share no colour, so a link between
    # them is a foul.  The first reading links them, the second misses the head, the third
    # (the two disagreed) sees both cards apart -- or linked as the first did
    tables = [[["M-orange-yellow"]], [["M-orange-yellow"], ["H-green"]]]

    def fault(data, call):
        if call == 3 or (every and call == 5):
            data["snakes"] = [{"cards": [c["id"] for c in data["cards"]], "complete": False}]
        if call == 4:
            data = keep_cards(data, [c for c in data["cards"] if c["kind"] != "head"])
        return data
    analyzer = FakeAnalyzer(fault=fault)
    tracker = Tracker(analyzer, PLAYERS)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in tables])
    (move,) = p.moves()       # (the first table is where play starts)
    assert analyzer.calls == 5
    if every:   # a foul the camera clearly saw is reported
        assert (move["card"], move["action"], move["legal"], move["code"]) == \
            ("H-green", "extend", False, "colour_mismatch")
    else:
        assert (move["card"], move["action"], move["legal"]) == ("H-green", "new", True)


def test_a_card_missed_in_the_table_judged_last_is_judged_before_the_next_card():
    # M-purple-blue is read doubtfully in the second table, so that change waits and is judged
    # from the third table's picture; every reading of that picture misses M-green-orange,
    # laid meanwhile.  The next turn extends it: both appear at once, but the pixels say
    # M-green-orange lay there in the picture the last change was judged from -- two turns,
    # not one foul of two cards
    tables = [[["H-purple"]], [["H-purple", "M-purple-blue"]],
              [["H-purple", "M-purple-blue"], ["M-green-orange"]],
              [["H-purple", "M-purple-blue"], ["M-green-orange", "M-orange-red"]]]
    doubt = _misread_in({4, 5, 6}, ["purple", "blue"], ["purple", "yellow"], 0.5)
    lose = _lost({7, 8, 9}, ["green", "orange"])
    tracker, p = run(tables, fault=lambda data, call: lose(doubt(data, call), call))
    assert summary(p.moves()) == summary(expected(tables)["moves"])


@pytest.mark.parametrize("carried", ["pushed", "turned round"])
def test_a_card_laid_against_a_moved_snakes_missed_end_waits_to_see_what_it_touches(carried):
    # the snake is pushed well aside (or carried and laid back to front) as M-green-yellow is
    # laid at its end, and every reading of that table misses the end it was laid against:
    # the new card lies beside where that card went with its snake (where the turn of its
    # other cards takes it), so which cards it touches was not read -- it waits, and is an
    # extension when the next table shows the end again (not a card laid alone)
    t1 = [["H-purple", "M-purple-blue", "M-blue-green"]]
    t2 = [t1[0] + ["M-green-yellow"]]
    t3 = t2 + [["H-orange"]]

    def moved(table):
        data = analysis(table, offsets={0: (0.0, 110.0)})
        return data if carried == "pushed" else _turned_round(data, set(range(4)), 300.0)

    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.show(analysis(t1))
    analyzer.fault = _lost({4, 5, 6}, ["blue", "green"])
    for table in (t2, t3):
        p.show(moved(table), 4, hand=True)
        p.show(moved(table))
    assert summary(tracker.moves) == summary(expected([t1, t2, t3])["moves"])


def test_a_waiting_card_missed_where_a_placed_card_now_lies_stops_waiting():
    # (seen in a development game: the card a join waited on was read as a new card in the
    # next picture and judged there; the waiting one, kept, came back as a second card on
    # the same place, and the game waited on it until a completion went unjudged)
    from companion.track.identity import Track
    tracker = Tracker(FakeAnalyzer(), PLAYERS, settings=FIXED)
    here = np.array([[0.0, 0.0], [56.0, 0.0], [56.0, 40.0], [0.0, 40.0]])
    for t, corners in ((1, here), (2, here + [2.0, 1.0]), (3, here + [200.0, 0.0])):
        tracker.tracks[t] = Track(t, corners.mean(axis=0), 40.0, corners)
    # 2 and 3 waited (first shown at frame 7); card 1, on 2's place, is now placed; 3 is elsewhere
    assert tracker._still_waiting({2: 7, 3: 7}, present=set(), placed={1}) == {3: 7}


def test_a_missed_card_does_not_walk_onto_a_look_alike_laid_beside_it():
    # the second table's readings miss M-purple-blue, and the card just laid after it reads
    # the same (M-blue-purple): a card of a chain does not leave its neighbour on its own to
    # lie where the new card is -- it was missed where it lay, and the new card extends it
    tables = [[["H-purple", "M-purple-blue"], ["H-red"]],
              [["H-purple", "M-purple-blue", "M-blue-purple"], ["H-red"]],
              [["H-purple", "M-purple-blue", "M-blue-purple"], ["H-red", "M-red-green"]]]
    tracker, p = run(tables, fault=_lost({4, 5, 6}, ["purple", "blue"]))
    assert summary(p.moves()) == summary(expected(tables)["moves"])



def test_a_chain_taken_while_the_card_laid_with_it_waits_to_be_read_again_is_taken_first():
    # one turn takes H-red (an incomplete snake) and lays M-green-yellow, read doubtfully in
    # every reading of that table (so the change waits for the next table): the taking is
    # dated to the table it was first missed in, before the card laid then
    tables = [[["M-blue-green"], ["M-red-purple"], ["H-red"]],
              [["M-blue-green", "M-green-yellow"], ["M-red-purple"]],
              [["M-blue-green", "M-green-yellow"], ["M-red-purple", "M-purple-orange"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-red"], ["M-red-purple", "M-purple-orange"]]]
    tracker, p = run(tables, fault=_misread_in({4, 5, 6}, ["green", "yellow"], ["green", "orange"]))
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


# Ann completes a snake and takes it in the turn Ben lays M-green-yellow
SNAKE_TAKEN_AS_A_CARD_WAITS = [
    [["M-blue-green"], ["M-red-purple"], ["H-red", "M-red-blue"]],
    [["M-blue-green"], ["M-red-purple"], ["H-red", "M-red-blue", "T-blue"]],
    [["M-blue-green", "M-green-yellow"], ["M-red-purple"]],
    [["M-blue-green", "M-green-yellow"], ["M-red-purple", "M-purple-orange"]],
    [["M-blue-green", "M-green-yellow", "M-yellow-red"], ["M-red-purple", "M-purple-orange"]]]


def test_a_completed_snake_taken_while_the_card_laid_with_it_waits_is_taken_first():
    # as above, but the snake taken is complete (Ann completed it and takes it in the turn
    # Ben lays M-green-yellow, read doubtfully in every reading of that table): the taking
    # was seen first in that table, so it is judged before the card laid then, not after it
    tables = SNAKE_TAKEN_AS_A_CARD_WAITS
    tracker, p = run(tables, fault=_misread_in({7, 8, 9}, ["green", "yellow"], ["green", "orange"]))
    assert tracker.stats["deferred"] == 1
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def test_a_game_stopped_at_any_frame_resumes_with_nothing_lost_though_a_change_waits():
    # as above, every reading of the third table doubts its new card, so that change waits for
    # the next table.  The game is stopped at every frame and resumed from its saved state on
    # the frames that follow, as `track --resume` does, where the card is doubted again.
    tables = SNAKE_TAKEN_AS_A_CARD_WAITS
    frames = game_frames(tables)

    class Doubting(StampedAnalyzer):     # the third table's new card, whenever that table is read
        def __call__(self, image):
            data = super().__call__(image)
            for card in data["cards"] if unstamp(image) == 2 else ():
                if card["colours"] == ["green", "yellow"]:
                    card["colours"], card["confidence"] = ["green", "orange"], 0.6
            return data

    def feed(tracker, indices):
        for i in indices:
            tracker.feed(i, frames[i])

    whole = Tracker(Doubting(tables), PLAYERS, settings=FIXED)
    feed(whole, range(len(frames)))
    assert summary(whole.moves) == summary(expected(tables)["moves"])
    waits = 0
    for stop in range(1, len(frames)):
        first = Tracker(Doubting(tables), PLAYERS, settings=FIXED)
        feed(first, range(stop))
        waits += bool(first._waiting)
        resumed = Tracker(Doubting(tables), PLAYERS, settings=FIXED)
        resumed.restore(json.loads(json.dumps(first.state())))
        feed(resumed, range(resumed.resumed_at, len(frames)))
        assert summary(resumed.moves) == summary(whole.moves), stop
        assert resumed.stats["deferred"] == 1, stop   # the change waited once, whenever stopped
    assert waits >= 8


def test_a_card_laid_at_a_snakes_end_is_not_its_missed_middle_carried_there():
    # the snake is nudged as a card is laid at its end; every reading of that table misses a
    # middle card (its place changed: the nudge) and misreads the new card, doubtfully, as a
    # card like the missed one.  Not that card carried off: it would no longer touch the
    # neighbour it lay against -- the new card waits, and the snake stays whole
    t1 = [["H-purple", "M-purple-blue", "M-blue-green"], ["T-red"]]
    t2 = [["H-purple", "M-purple-blue", "M-blue-green", "M-green-yellow"], ["T-red"]]
    t3 = t2 + [["H-orange"]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.show(analysis(t1))
    lose = _lost({4, 5, 6}, ["purple", "blue"])
    misread = _misread_in({4, 5, 6}, ["green", "yellow"], ["green", "blue"], 0.5)
    analyzer.fault = lambda data, call: misread(lose(data, call), call)
    for table in (t2, t3):
        p.show(analysis(table, offsets={0: (10.0, 6.0)}), 4, hand=True)
        p.show(analysis(table, offsets={0: (10.0, 6.0)}))
    assert summary(tracker.moves) == summary(expected([t1, t2, t3])["moves"])


def test_a_card_left_to_wait_moves_with_the_snake_it_was_laid_against():
    # M-purple-blue is read doubtfully (as M-purple-yellow) in every reading of the table it
    # was laid in, so that change waits; in the next turn T-red is laid at the snake's other
    # end and the whole snake shifts along: the waiting card is still the card laid a turn
    # ago, not a second new card beside T-red
    tables = [[["M-red-orange", "M-orange-purple"]],
              [["M-red-orange", "M-orange-purple", "M-purple-blue"]],
              [["T-red", "M-red-orange", "M-orange-purple", "M-purple-blue"]]]
    tracker, p = run(tables, fault=_misread_in({4, 5, 6}, ["purple", "blue"], ["purple", "yellow"], 0.5))
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def _turned_round(data, ids, about_x):
    """The cards `ids` mirrored left to right about x = `about_x`: a chain laid again the
    other way round, ends and corners alike."""
    for card in data["cards"]:
        if card["id"] in ids:
            card["corners"] = [[2 * about_x - x, y] for x, y in card["corners"]]
            card["ends"] = [[2 * about_x - x, y] for x, y in card["ends"]]
    return data


@pytest.mark.parametrize("offset, confidence", [((60.0, 250.0), 0.95), ((200.0, 60.0), 0.6)])
def test_a_chain_carried_and_turned_round_is_followed_though_one_card_is_misread(offset, confidence):
    # the snake is carried, laid back to front and extended; from then on every reading
    # misreads one of its middles: still the same snake, only the new card is a move
    before = [["H-purple", "M-purple-blue", "M-blue-green", "M-green-yellow"], ["T-red"]]
    after = [before[0] + ["M-yellow-orange"], ["T-red"]]
    third = after + [["H-orange"]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.show(analysis(before))
    analyzer.fault = _misread_in(set(range(4, 100)), ["blue", "green"], ["blue", "red"], confidence)
    for table in (after, third):
        moved = _turned_round(analysis(table, offsets={0: offset}), set(range(5)), 300.0)
        p.show(moved, 4, hand=True)
        p.show(moved)
    assert summary(tracker.moves) == summary(expected([before, after, third])["moves"])


@pytest.mark.parametrize("tail_row", [1, 5])   # the tail pushed from near by, or from afar
def test_a_snake_completed_with_an_end_the_reader_missed_and_collected_at_once_is_complete(tail_row):
    # M-red-purple completes H-red ... T-purple (the tail pushed over to meet it), but every
    # reading of that table misses the tail; then the whole snake is collected.  Not a card
    # laid, an incomplete snake taken and a lone tail taken: a completion and its collection
    tail = [[]] * (tail_row - 1) + [["T-purple"]]
    tables = [[["H-red"]], [["H-red"]] + tail, [["H-red", "M-red-purple", "T-purple"]],
              [[], [], ["H-orange"]]]
    tracker, p = run(tables, fault=_lost({7, 8, 9}, ["purple"]))
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert tracker.account()["scores"] == expected(tables)["scores"]
    # the move first announced as a card laid is re-judged: followers are told so
    told = [e.data for e in p.events if e.kind == "correction"]
    assert [c["joined"] for c in told] == [["H-red", "M-red-purple", "T-purple"]]
    assert summary(told[0]["moves"]) == summary(expected(tables)["moves"])


def test_a_snake_completed_between_a_head_and_a_tail_both_missed_is_one_collection():
    # M-red-purple joins H-red and T-purple, both pushed over to meet it, and every reading
    # of that table misses both; then the snake is collected.  Three pieces gone at once:
    # one completion and its collection, not a card laid and three incomplete snakes taken
    tables = [[["H-red"]], [["H-red"], ["T-purple"]], [["H-red", "M-red-purple", "T-purple"]],
              [[], [], ["H-orange"]]]
    lose_head, lose_tail = _lost({7, 8, 9}, ["red"]), _lost({7, 8, 9}, ["purple"])
    analyzer = FakeAnalyzer(fault=lambda data, call: lose_tail(lose_head(data, call), call))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play([analysis(t, {0: (150.0, 0.0)} if k == 2 else None)
                                    for k, t in enumerate(tables)])
    assert tracker.stats["completed_unseen"] == 1
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert tracker.account()["scores"] == expected(tables)["scores"]


def test_a_joined_snake_correction_goes_to_the_dashboard_as_its_table_judged_again():
    """Not as a card rename: as the whole table the tracker now judges, named by its number
    among the tables sent; a table that was not sent or does not hold the joined snake is
    not guessed at, and a table the tracker inserts into its history later shifts nothing."""
    from companion.track.feed import SentTables, _correction
    tables = [[["H-red"]], [["H-red"], ["T-purple"]], [["H-red", "M-red-purple", "T-purple"]],
              [[], [], ["H-orange"]]]
    tracker, p = run(tables, fault=_lost({7, 8, 9}, ["purple"]))
    (told,) = [e.data for e in p.events if e.kind == "correction"]
    frames = [e.frame for e in p.events if e.kind == "table"]

    def sent(upto):
        record = SentTables()
        for frame, entry in list(zip(frames, tracker.history))[:upto]:
            record.add(frame, entry)
        return record
    correction = _correction(tracker, told, sent(4))
    assert correction["table_number"] == 2 and correction["since"] == frames[2]
    assert correction["table"] == [["H-red", "M-red-purple", "T-purple"]]
    assert "from" not in correction and "to" not in correction
    assert _correction(tracker, told, sent(2)) is None                       # not sent
    assert _correction(tracker, dict(told, table_number=1), sent(4)) is None  # not that table
    record = sent(4)
    laid = tracker.history[2]["tracks"][0][1]          # M-red-purple's track
    tracker.history.insert(1, {"frame": frames[0] + 1, "table": [], "tracks": []})
    assert _correction(tracker, dict(told, table_number=3), record)["table_number"] == 2
    rename = {"track": laid, "from": "M-red-purple", "to": "M-red-yellow"}
    assert _correction(tracker, rename, record)["table_number"] == 2


# H-red (an incomplete snake) is taken in the turn M-green-yellow is laid; its going is
# confirmed only at the next table, by when that turn was judged with H-red still there
TAKEN_WITH_A_CARD = [[["M-blue-green"], ["H-red"]], [["M-blue-green", "M-green-yellow"]],
                     [["M-blue-green", "M-green-yellow", "M-yellow-red"]]]
# H-red is taken in a turn of its own; a tracker that needs three tables to believe a card
# gone has judged the next turn with it still there
TAKEN_ALONE = [[["M-blue-green"], ["H-red"]], [["M-blue-green"]],
               [["M-blue-green", "M-green-yellow"]],
               [["M-blue-green", "M-green-yellow", "M-yellow-red"]]]
SLOW_TO_TAKE = TrackerSettings(agree_readings=0, confirm_take=3)


def _told_removals(p):
    return [e.data for e in p.events if e.kind == "correction" and "cut" in e.data]


def test_cards_whose_going_is_confirmed_late_are_cut_out_of_the_tables_told_before():
    # the table judged with H-red still there is told as now judged without it: followers
    # (the dashboard) judged it as sent, and would merge the taking with the next move
    tracker, p = run(TAKEN_WITH_A_CARD)
    sent = [e.data["table"] for e in p.events if e.kind == "table"]
    assert ["H-red"] in sent[1]
    (told,) = _told_removals(p)
    assert told["gone"] == ["H-red"] and told["inserted"] is None and told["cut"] == [1]
    assert tracker.history[1]["table"] == [["M-blue-green", "M-green-yellow"]]
    assert told["gone_at"] == tracker.history[1]["frame"]
    # with the game so far as now judged: the taking is Ann's turn's, not Ben's
    assert summary(told["moves"]) == summary(expected(TAKEN_WITH_A_CARD)["moves"][:2])
    # told before the moves judged anew, and before the table that confirmed it
    kinds = [e.kind for e in p.events]
    assert kinds.index("correction") < len(kinds) - 1 - kinds[::-1].index("table")


def test_a_going_confirmed_late_is_told_even_when_the_table_confirming_it_is_not_explainable(monkeypatch):
    # the late going re-judges the tables before; that the table which confirmed it cannot
    # be explained (a desync) must not keep the re-judgement from followers
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in TAKEN_WITH_A_CARD[:2]])

    def unexplainable(*args, **kwargs):
        raise ValueError("no move explains it")
    monkeypatch.setattr(tracker, "_steps", unexplainable)
    p.play([analysis(TAKEN_WITH_A_CARD[2])])
    assert tracker.desync
    (told,) = _told_removals(p)
    assert told["gone"] == ["H-red"] and told["cut"] == [1]
    assert tracker.history[1]["table"] == [["M-blue-green", "M-green-yellow"]]
    kinds = [e.kind for e in p.events]
    assert kinds.index("correction") < kinds.index("desync")


def test_a_snake_taken_in_the_last_move_is_judged_though_nothing_moves_after_it():
    # a snake gone at once awaits a second settled table to count as taken; the table
    # stays still to the end, so that settle must come from reading it again
    tables = [[["M-blue-green"], ["T-red", "M-red-yellow"]], [["M-blue-green"]]]
    tracker, p = run(tables, still=40)
    assert summary(p.moves()) == summary(expected(tables)["moves"])
    assert [len(chain) for chain in tracker.history[-1]["table"]] == [1]    # M-blue-green alone


def test_a_table_put_in_for_cards_that_went_earlier_is_told_with_the_tables_after_it():
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=SLOW_TO_TAKE)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in TAKEN_ALONE])
    assert summary(tracker.moves) == summary(expected(TAKEN_ALONE)["moves"])
    (told,) = _told_removals(p)
    # the table when H-red was first missed goes in before the one judged with it still there
    assert told["gone"] == ["H-red"] and told["inserted"] == 1 and told["cut"] == [2]
    assert tracker.history[1]["frame"] == told["gone_at"] < tracker.history[2]["frame"]
    assert [h["table"] for h in tracker.history[:3]] == [
        [["M-green-blue"], ["H-red"]], [["M-green-blue"]], [["M-blue-green", "M-green-yellow"]]]
    assert summary(told["moves"]) == summary(tracker.moves[:2])


def test_a_table_put_in_does_not_shift_a_judged_table_that_awaits_telling():
    # a joined-snake correction of a table is told at the end of the settle, by the table's
    # place in the history: a table put in before it in the same settle moves it one on
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=SLOW_TO_TAKE)
    p = Player(tracker, analyzer)
    p.play([analysis(t) for t in TAKEN_ALONE[:3]])
    held = tracker.history[1]          # judged with H-red still there
    tracker._rejoined = [{"table_number": 1, "joined": ["M-blue-green", "M-green-yellow"]}]
    p.show(analysis(TAKEN_ALONE[3]), p.hand_frames, hand=True)
    p.show(analysis(TAKEN_ALONE[3]))
    (told,) = [e.data for e in p.events if e.kind == "correction" and "joined" in e.data]
    assert tracker.history[told["table_number"]] is held and told["table_number"] == 2


def test_a_card_laid_where_a_pushed_snakes_end_lay_is_not_that_card_misread():
    # the snake is pushed aside to make room and a card laid where its end lay, partly over
    # that place; every reading of that table misses the whole snake.  The new card lies
    # within reach of the old end's centre but on less than half of its outline: it is a
    # new card, not the old end misread (which would rename the end and invent moves)
    t1 = [["M-purple-red", "T-red"], ["H-green"]]
    t2 = [["M-blue-purple", "M-purple-red", "T-red"], ["H-green"]]
    t3 = [["M-blue-purple", "M-purple-red", "T-red"], ["H-green", "M-green-orange"]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.show(analysis(t1, offsets={0: (15.0, 15.0)}))
    lose_end, lose_tail = _lost({4, 5, 6}, ["purple", "red"]), _lost({4, 5, 6}, ["red"])
    analyzer.fault = lambda data, call: lose_tail(lose_end(data, call), call)
    for table in (t2, t3):
        p.show(analysis(table), 4, hand=True)
        p.show(analysis(table))
    assert not tracker.desync
    assert summary(tracker.moves) == summary(expected([t1, t2, t3])["moves"])


def test_a_card_missed_in_a_still_table_read_twice_is_not_taken_for_gone():
    # a snake is taken (read again at once, to confirm it), and every reading of that still
    # table misses a middle card of another snake: reading the same picture twice is one
    # piece of evidence, not two -- the card is not confirmed gone before the next table
    tables = [[["H-red", "M-red-green"], ["M-blue-green", "M-green-yellow", "M-yellow-orange"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-orange"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-orange", "T-orange"]]]
    lose = _lost(range(10_000), ["green", "yellow"])

    def fault(data, call):      # only the table in which the snake was taken
        colours = [c["colours"] for c in data["cards"]]
        return lose(data, call) if ["red"] not in colours and ["orange"] not in colours else data
    tracker, p = run(tables, fault=fault)
    assert tracker.stats["settles"] >= 4        # the taking's table was read twice
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def test_a_waiting_card_missed_in_the_next_table_is_judged_in_its_turn_once_seen_again():
    # M-green-yellow is read doubtfully in every reading of the table it was laid in, so that
    # change waits; every reading of the next table misses it.  The reader misses a card the
    # same way in every frame of a still picture: it is not forgotten, and when the table
    # after shows it again it is judged in its own turn, not taken for a card never laid
    tables = [[["M-blue-green"], ["H-red"]],
              [["M-blue-green", "M-green-yellow"], ["H-red"]],
              [["M-blue-green", "M-green-yellow"], ["H-red", "M-red-purple"]],
              [["M-blue-green", "M-green-yellow", "T-yellow"], ["H-red", "M-red-purple"]]]
    doubt = _misread_in(range(10_000), ["green", "yellow"], ["green", "orange"], 0.5)
    lose = _lost(range(10_000), ["green", "yellow"])

    def fault(data, call):
        colours = [c["colours"] for c in data["cards"]]
        if ["red", "purple"] not in colours:
            return doubt(data, call)
        return lose(data, call) if ["yellow"] not in colours else data
    tracker, p = run(tables, fault=fault)
    assert tracker.stats["deferred"] >= 1
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def test_a_snake_pushed_one_card_along_for_a_copy_of_its_end_card_is_followed():
    # a copy of the snake's end card is laid where that end lay, the snake pushed one card
    # along to make room: staying put, the end would find a card read like it at its place,
    # but the rest of the snake lands on itself only when pushed, so the push is followed
    tables = [[["M-red-orange", "T-orange"], ["H-green"]],
              [["M-orange-red", "M-red-orange", "T-orange"], ["H-green"]],
              [["M-orange-red", "M-red-orange", "T-orange"], ["H-green", "M-green-blue"]]]
    tracker, p = run(tables)
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def test_a_card_of_another_kind_laid_where_a_card_was_taken_from_is_a_new_card():
    # H-blue is taken off the table (a foul), and the next turn lays M-blue-green just where
    # it lay: a card missing at the last table does not come back as another kind of card,
    # so the removal stands and the middle is laid, instead of both being renamed away
    tables = [[["M-red-green", "M-green-blue"]],
              [["M-red-green", "M-green-blue", "H-blue"]],
              [["M-red-green", "M-green-blue", "H-blue"], ["T-red"]],
              [["M-red-green", "M-green-blue"], ["T-red"]],
              [["M-red-green", "M-green-blue", "M-blue-green"], ["T-red"]]]
    tracker, p = run(tables)
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert [m["code"] for m in tracker.moves].count("card_removed") == 1


def test_a_copy_of_a_collected_snakes_card_laid_elsewhere_is_the_copy():
    # the complete snake is collected, and the same turn the next player lays a copy of
    # its middle card at the end of another snake below it: that one card cannot carry the
    # vanished snake with it, so the snake is taken whole and the copy is laid, not left
    # behind as the snake's middle, found alone
    t1 = [["H-green"], ["H-purple", "M-purple-blue", "T-blue"], ["M-yellow-purple"]]
    t2 = [["H-green"], ["M-yellow-purple", "M-purple-blue"]]
    t3 = [["H-green", "M-green-red"], ["M-yellow-purple", "M-purple-blue"]]
    below = {1: (0.0, 70.0)}    # the second snake of t2 and t3 is the third of t1
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.show(analysis(t1))
    for table in (t2, t3):
        p.show(analysis(table, below), 4, hand=True)
        p.show(analysis(table, below))
    assert summary(tracker.moves) == summary(expected([t1, t2, t3])["moves"])


def test_a_lone_card_taken_with_the_snake_it_completed_does_not_hold_up_the_card_laid_beside_it():
    # [H-orange M-orange-green] and the lone T-purple vanish at once: a drawn M-green-purple
    # joined and completed them, and the snake was collected whole.  The lone card went with
    # the snake, it was not missed: M-green-yellow, laid where it lay, is judged in its turn
    near = {1: (W + 2.0, -22.0)}    # T-purple lies just below where M-green-yellow goes
    tables = [[["M-blue-green"], ["T-purple"], ["H-orange", "M-orange-green"]],
              [["M-blue-green", "M-green-yellow"]],
              [["M-blue-green", "M-green-yellow"], ["T-orange"]]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t, near if k == 0 else None) for k, t in enumerate(tables)])
    want = expected(tables)
    assert [m["action"] for m in want["moves"]] == ["complete", "extend", "new"]
    assert summary(tracker.moves) == summary(want["moves"])
    assert tracker.stats["deferred"] == 0


def test_a_rearrangement_after_a_card_the_deck_cannot_hold_is_judged_as_its_own_move():
    # a second purple head (the deck holds one) waits, doubtful, for the next table; there the
    # same player has also pushed M-blue-green against the first snake.  The waiting card is
    # judged in the table it was laid in, so the push is a rearrangement of its own, as the
    # referee sees the two tables in turn
    tables = [analysis([["H-purple", "M-purple-blue"], ["M-blue-green"]]),
              analysis([["H-purple", "M-purple-blue"], ["M-blue-green"], ["H-purple"]]),
              analysis([["H-purple", "M-purple-blue", "M-blue-green"], ["H-purple"]],
                       {1: (0.0, 70.0)})]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    want = expected([[["H-purple", "M-purple-blue"], ["M-blue-green"]],
                     [["H-purple", "M-purple-blue"], ["M-blue-green"], ["H-purple"]],
                     [["H-purple", "M-purple-blue", "M-blue-green"], ["H-purple"]]])
    assert [m["code"] for m in want["moves"]][-2:] == ["deck_exceeded", "rearranged"]
    assert tracker.stats["deferred"] == 1
    assert summary(tracker.moves) == summary(want["moves"])


def test_a_card_laid_where_a_snake_was_taken_does_not_wait_for_ever():
    # the snake vanishes at once (the referee takes it as completed by a card no frame showed)
    # and T-orange is laid across where its first two cards lay.  Lying on the place of cards
    # gone, the new card waits until the taking is confirmed; the tables it waits through
    # confirm it, so both are judged in their turns and the table is never lost
    tables = [[["H-red", "M-red-yellow", "M-yellow-green"], ["M-blue-purple"]],
              [["T-orange"], ["M-blue-purple"]],
              [["T-orange"], ["M-blue-purple", "M-purple-green"]]]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t, {0: (W / 2, 0.0)} if k else None) for k, t in enumerate(tables)])
    want = expected(tables)
    assert [m["action"] for m in want["moves"]] == ["complete", "new", "extend"]
    assert summary(tracker.moves) == summary(want["moves"])
    assert tracker.stats["deferred"] >= 1 and tracker.stats["desync_settles"] == 0


# H-red lies on the table from the start, but every reading of the first table misses it
FROM_START = [[["M-blue-green"], ["H-red"]],
              [["M-blue-green", "M-green-yellow"], ["H-red"]],
              [["M-blue-green", "M-green-yellow"], ["H-red"], ["T-orange"]],
              [["M-blue-green", "M-green-yellow"], ["H-red", "M-red-purple"], ["T-orange"]]]


def test_a_card_missed_in_the_first_table_and_found_where_nothing_changed_lay_there_all_along():
    # found where nothing changed since the first table, in two tables judged apart, it is no
    # invention of the reader: every judged table is corrected to hold it, and the card later
    # laid against it is an ordinary extension, judged in its turn
    tracker, p = run(FROM_START, fault=_miss_in({1, 2, 3}, ["red"]))
    assert tracker.stats["from_start"] == 1
    assert summary(tracker.moves) == summary(expected(FROM_START)["moves"])
    assert [m["action"] for m in tracker.moves] == ["extend", "new", "extend"]
    assert all(["H-red"] in entry["table"] for entry in tracker.history[:3])
    assert not tracker.desync


def test_two_cards_that_waited_in_turn_are_judged_in_their_own_turns():
    # M-green-yellow is read unsure when laid, and waits; M-yellow-red, laid against it in the
    # next turn, is read unsure there and waits too.  Laying it changed the pixels at the edge
    # of the first card, but the first was laid by the picture that first showed it: two
    # extensions in turn, not one player's two cards
    tables = [[["M-blue-green"]], [["M-blue-green", "M-green-yellow"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-red"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-red"], ["H-orange"]]]
    first = _misread_in({4, 5, 6}, ["green", "yellow"], ["green", "orange"])
    second = _misread_in({7, 8, 9}, ["yellow", "red"], ["yellow", "purple"])
    tracker, p = run(tables, fault=lambda data, call: second(first(data, call), call))
    assert tracker.stats["deferred"] == 2
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert [m["action"] for m in tracker.moves] == ["extend", "extend", "new"]


def test_a_complete_snake_still_out_when_the_game_ends_goes_to_whoever_completed_it():
    tracker, p = run(GAME[:-1])           # the last snake is completed but never taken
    events = tracker.finish()
    moves = [e.data for e in events if e.kind == "move"]
    assert len(moves) == 1 and moves[0]["collected"]
    completed_by = p.moves()[-1]["player"]
    assert moves[0]["player"] == completed_by
    assert tracker.account()["moves"][-1] == moves[0]
    assert tracker.account()["scores"][completed_by]["snakes"] == 1
    assert moves[0]["evidence"]["after"] == p.moves()[-1]["evidence"]["after"]


FIRST, SECOND = ["H-red", "M-red-blue", "T-blue"], ["H-green", "M-green-yellow", "T-yellow"]


@pytest.mark.parametrize("tables, shown", [
    # one snake collected in play, the other still out when the game ends
    ([[FIRST[:2]], [FIRST], [], [SECOND[:1]], [SECOND[:2]], [SECOND]], [(0, 1), (0, 5)]),
    # both snakes left out, then taken together
    ([[FIRST[:2], SECOND[:2]], [FIRST, SECOND[:2]], [FIRST, SECOND], []], [(0, 2), (1, 2)]),
], ids=["one at the end", "two at once"])
def test_each_collection_shows_the_cards_of_its_own_snake(tables, shown):
    # each collection's evidence outlines that snake's cards where they lay, not the other
    # snake's too, nor none
    tracker, p = run(tables)
    tracker.finish()
    where = {}   # (the snake's card identities) -> identity -> corners where drawn
    for row, at in shown:
        drawn = analysis(tables[at])
        ids = drawn["snakes"][row]["cards"]
        cards = {_identity(code): c["corners"] for code, c in
                 zip(tables[at][row], [c for c in drawn["cards"] if c["id"] in ids])}
        where[tuple(sorted(cards))] = cards
    collects = [m for m in tracker.moves if m["action"] == "collect"]
    assert sorted(tuple(sorted(_identity(c["code"]) for c in m["cards"])) for m in collects) == sorted(where)
    assert not any(SNAKE in m for m in tracker.account()["moves"])   # (the link's note to the record)
    for move in collects:
        cards = where[tuple(sorted(_identity(c["code"]) for c in move["cards"]))]
        for card in move["cards"]:
            assert np.allclose(card["corners"], cards[_identity(card["code"])], atol=3)


@pytest.mark.parametrize("confidence", [0.5, 0.95])
def test_a_card_closing_a_snake_read_doubtfully_is_judged_by_the_rules_before_its_collection(
        confidence):
    # M-blue-green closes the snake and is read as M-blue-red in every reading of that table;
    # the next table shows the snake collected, so no fresh reading will ever show the card.
    # Read doubtfully, it is judged at once, and the rules may take it for the card one colour
    # away that completes the snake; read surely, the colour mismatch the camera saw stands.
    tables = [[["H-purple", "M-purple-blue"]],
              [["H-purple", "M-purple-blue"], ["T-green"]],
              [["H-purple", "M-purple-blue", "M-blue-green", "T-green"]],
              [],
              [["M-red-orange"]]]
    seen = [t if confidence < 0.9 else [[code.replace("M-blue-green", "M-blue-red") for code in c]
                                        for c in t] for t in tables]
    tracker, p = run(tables, fault=_misread_in(range(10_000), ["blue", "green"], ["blue", "red"],
                                               confidence))
    assert summary(tracker.moves) == summary(expected(seen)["moves"])


def test_a_card_missed_seen_and_missed_again_over_a_change_left_waiting_stays():
    # M-orange-purple is nudged and missed in the same table (its place changed, so it might
    # be gone), seen again in the next, whose change waits (its new card read doubtfully),
    # and missed once more where nothing changed since: seen in between, it never went
    layout = [[["M-blue-green", "M-green-yellow"], ["H-red"], ["M-orange-purple"]],
              [["M-blue-green", "M-green-yellow"], ["H-red", "M-red-orange"], ["M-orange-purple"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-purple"], ["H-red", "M-red-orange"],
               ["M-orange-purple"]],
              [["M-blue-green", "M-green-yellow", "M-yellow-purple"],
               ["H-red", "M-red-orange", "M-orange-blue"], ["M-orange-purple"]]]
    nudged = {2: (18.0, 6.0)}
    lose = _drop(["orange", "purple"])
    doubt = _misread_in(range(7, 10), ["yellow", "purple"], ["yellow", "purple"], 0.5)

    def fault(data, call):
        return lose(data, call) if 4 <= call <= 6 or call >= 10 else doubt(data, call)
    analyzer = FakeAnalyzer(fault=fault)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play([analysis(t, nudged if k else None)
                                    for k, t in enumerate(layout)])
    assert tracker.stats["deferred"] >= 1
    assert summary(tracker.moves) == summary(expected(layout)["moves"])


def test_a_snake_pushed_while_its_change_waits_is_seen_taken_from_where_it_was_pushed():
    # the snake is pushed along as T-blue completes it, and the reader misses M-red-blue in
    # that table, so the change waits; the next table shows the snake collected.  Its cards
    # were last seen where the push put them: that place, bare in the picture last judged,
    # is bare again, but it is the picture that last showed them that says they went (kept
    # as missed there, they made every later table unexplainable).  (T-blue's own turn, never
    # read whole, is reported as a completion unseen.)
    tables = [[["H-red", "M-red-blue"], ["M-green-yellow"]],
              [["H-red", "M-red-blue", "T-blue"], ["M-green-yellow"]],
              [["M-green-yellow"]],
              [["M-green-yellow", "M-yellow-orange"]]]
    pushed = {0: (150.0, 0.0)}
    analyzer = FakeAnalyzer(fault=_miss_in({4, 5, 6}, ["red", "blue"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play([analysis(t, pushed if k == 1 else None)
                                    for k, t in enumerate(tables)])
    assert tracker.stats["deferred"] >= 1 and not tracker.desync
    assert [sorted(map(_identity, c)) for c in tracker.table] == \
        [sorted(map(_identity, ["M-green-yellow", "M-yellow-orange"]))]
    assert summary(tracker.moves)[-1] == summary(expected(tables)["moves"])[-1]


def test_a_card_left_waiting_then_carried_to_be_joined_keeps_its_turn():
    # M-green-orange is laid alone and read doubtfully (as M-orange-purple), so its turn waits;
    # the next turn carries it across the table and joins it to T-yellow, where it is read
    # right.  It is the card that waited, moved and read afresh: laid in its own turn, not
    # with the join (one player's two cards) while the card that waited is lost
    tables = [[["T-yellow"], ["M-red-blue"]],
              [["T-yellow"], ["M-red-blue"], ["M-green-orange"]],
              [["M-orange-green", "M-green-yellow", "T-yellow"], ["M-red-blue"]]]
    doubt = _misread_in({4, 5, 6}, ["green", "orange"], ["purple", "orange"], 0.5)
    tracker, p = run(tables, fault=doubt)
    assert tracker.stats["moved_waiting"] == 1
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def test_a_join_made_while_the_reader_missed_the_card_carried_to_it_is_judged_a_join():
    # M-yellow-green is carried to the snake's end and M-blue-yellow laid between them; every
    # reading of that table misses M-yellow-green, so the new card is judged an extension.
    # The next table reads the link, between two cards lying as they did: the turn was a
    # join, the judged table is corrected, and the next move is not a rearrangement
    tables = [[["H-red", "M-red-blue"], ["M-yellow-green"]],
              [["H-red", "M-red-blue", "M-blue-yellow", "M-yellow-green"]],
              [["H-red", "M-red-blue", "M-blue-yellow", "M-yellow-green"], ["T-orange"]]]
    tracker, p = run(tables, fault=_miss_in({4, 5, 6}, ["yellow", "green"]))
    assert tracker.stats["joined_unseen"] == 1
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


def _read_with_next(colours, as_colours, confidence, next_confidence):
    """Every reading names the card with `colours` `as_colours`, and its true colours next."""
    def fault(data, call):
        for card in data["cards"]:
            if card["colours"] == colours:
                card["colours"], card["confidence"] = list(as_colours), confidence
                card["alternatives"] = [{"colours": list(colours), "confidence": next_confidence}]
        return data
    return fault


ORANGE_TAIL = [[["M-blue-red", "T-red"]], [["M-blue-red", "T-red"], ["T-orange"]],
               [["M-blue-red", "T-red"], ["T-orange"], ["H-yellow"]]]


def test_a_card_read_as_one_the_deck_holds_no_more_of_is_the_one_the_analyser_ranked_next():
    # the only red tail lies on the table already; the new tail reads red, orange next at half
    # the odds: orange it is, and no deck is exceeded
    tracker, p = run(ORANGE_TAIL, fault=_read_with_next(["orange"], ["red"], 0.6, 0.3))
    assert summary(tracker.moves) == summary(expected(ORANGE_TAIL)["moves"])
    assert [e for e in p.events if e.kind == "correction"] == []


def test_the_reading_ranked_next_does_not_rename_a_card_the_deck_still_holds():
    tables = [[["M-blue-green"]], [["M-blue-green"], ["T-orange"]], [["M-blue-green"], ["T-orange"], ["H-yellow"]]]
    tracker, p = run(tables, fault=_read_with_next(["orange"], ["red"], 0.6, 0.3))
    assert _identity(tracker.moves[0]["card"]) == "T-red"


def test_a_reading_ranked_next_as_likely_is_settled_by_the_rules_but_a_faint_one_is_not():
    # green-yellow laid against green, read red-yellow in every reading: with green-yellow a
    # close second the legal reading wins; a distant second is no reason to doubt the camera
    tracker, _ = run(GAME[:3], fault=_read_with_next(["green", "yellow"], ["red", "yellow"], 0.9, 0.75))
    assert summary(tracker.moves) == summary(expected(GAME[:3])["moves"])
    tracker, _ = run(GAME[:3], fault=_read_with_next(["green", "yellow"], ["red", "yellow"], 0.9, 0.2))
    assert _identity(tracker.moves[0]["card"]) == "M-red-yellow" and not tracker.moves[0]["legal"]


def test_a_doubtful_card_settled_beside_the_next_players_card_is_judged_as_a_turn_of_its_own():
    # read less surely than the table's other cards, the new card waits for the next table,
    # where the next player's card is new too: the rules weigh its placement alone
    tracker, _ = run(GAME[:3], fault=_read_with_next(["green", "yellow"], ["red", "yellow"], 0.6, 0.5))
    assert summary(tracker.moves) == summary(expected(GAME[:3])["moves"])


def test_without_ends_takes_cards_off_the_ends_of_chains_only():
    from companion.track.naming import without_ends
    assert without_ends([[1, 2, 3], [4], [5, 6]], {1, 3, 4, 6}) == [[2], [5]]
    assert without_ends([[1, 2, 3]], {2}) == [[1, 2, 3]]          # between two cards: it stays
    assert without_ends([[1, 2, 3]], {2, 3}) == [[1]]


def test_a_settled_card_whose_later_readings_rank_its_rival_a_close_second_is_renamed_by_the_rules():
    # read red-yellow surely when laid (a foul is reported), then red-yellow as weakly as
    # green-yellow, ranked next, in the tables after: the legal reading wins
    def fault(data, call):
        for card in data["cards"]:
            if card["colours"] == ["green", "yellow"]:
                card["colours"], card["confidence"] = ["red", "yellow"], 0.9 if call <= 6 else 0.5
                if call > 6:
                    card["alternatives"] = [{"colours": ["green", "yellow"], "confidence": 0.5}]
        return data
    tracker, p = run(GAME[:4], fault=fault)
    assert [e.data["to"] for e in p.events if e.kind == "correction"] == ["M-yellow-green"]
    assert summary(tracker.moves) == summary(expected(GAME[:4])["moves"])


def test_a_card_the_deck_runs_out_of_later_is_renamed_where_the_camera_ranked_another_next():
    # the orange tail reads red clearly enough to be named so (the red tail is still in the
    # deck); when the red tail itself is laid, the game holds two: the copy that was also
    # read orange is renamed, and neither move is a foul
    tables = [[["M-blue-red"]], [["M-blue-red"], ["T-orange"]], [["M-blue-red", "T-red"], ["T-orange"]],
              [["M-blue-red", "T-red"], ["T-orange"], ["H-yellow"]]]
    tracker, p = run(tables, fault=_read_with_next(["orange"], ["red"], 0.9, 0.3))
    assert [(e.data["from"], e.data["to"]) for e in p.events if e.kind == "correction"] == [("T-red", "T-orange")]
    assert summary(tracker.moves) == summary(expected(tables)["moves"])


@pytest.mark.parametrize("share", [0.3, 0.45])
def test_a_card_read_as_another_on_an_outline_cut_across_it_is_not_a_second_card(share):
    # the fourth table joins the snakes; one of its two readings cuts an outline across
    # M-blue-green (sharing `share` of it, less than a card on its place would), reads a
    # rainbow head there linked to its neighbour, and misses M-blue-green itself.  The two
    # were never seen together and were seen as often: they are one card read two ways,
    # not a rainbow head laid with the join (which, a foul, would wait to be read again)
    def cut_across(data, call):
        if call == 8:
            for card in data["cards"]:
                if card["colours"] == ["blue", "green"]:
                    corners = np.asarray(card["corners"], float)
                    shift = (1 - share) * (corners[3] - corners[0])
                    card.update(kind="rainbow_head", colours=[], confidence=0.8,
                                corners=(corners + shift).tolist(),
                                ends=[list(np.asarray(card["ends"][0]) + shift)])
            data["snakes"] = [{"cards": [0, 1, 2]}, {"cards": [3]}]
        return data
    analyzer = FakeAnalyzer(fault=cut_across)
    tracker = Tracker(analyzer, PLAYERS, settings=TrackerSettings(readings=2, agree_readings=0))
    Player(tracker, analyzer).play([analysis(t) for t in GAME[:4]])
    assert summary(tracker.moves) == summary(expected(GAME[:4])["moves"])


def test_a_card_missed_for_two_turns_is_judged_in_the_turn_it_was_laid():
    # H-purple is laid alone, and every reading of that table and of the next misses it; the
    # next turn extends the other snake. Found a turn later still, H-purple's place already
    # lay as it does in a picture kept before that extension: it was laid first, and the game
    # is judged again in that order, not with H-purple after the extension
    tables = [[["M-blue-green"]],
              [["M-blue-green"], ["H-purple"]],
              [["M-blue-green", "M-green-yellow"], ["H-purple"]],
              [["M-blue-green", "M-green-yellow", "T-yellow"], ["H-purple"]]]

    def miss(data, call):
        if 4 <= call <= 9:
            return keep_cards(data, [c for c in data["cards"] if c["colours"] != ["purple"]])
        return data
    tracker, p = run(tables, fault=miss)
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    # followers are told the judged game changed
    assert [e.data["found"] for e in p.events if e.kind == "correction"] == [["H-purple"]]


def _laid_short_of_its_snake(gap: float):
    """A card laid against a lone card, read alone `gap` pixels beyond where it touches it (on
    a patterned cloth the analyser's outline of a card often falls short of its end)."""
    cards, _ = card_dicts([["M-blue-green", "M-green-yellow"]])
    for key in ("corners", "ends"):
        cards[1][key] = [[x + gap, y] for x, y in cards[1][key]]
    laid = {**analysis([["M-blue-green"]]), "cards": cards,
            "snakes": [{"cards": [0], "complete": False}, {"cards": [1], "complete": False}]}
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis([["M-blue-green"]]), laid])
    return summary(p.moves())


def test_a_card_just_laid_read_a_little_short_of_a_snake_end_of_its_colour_extends_it():
    moves = _laid_short_of_its_snake(gap=0.4 * H)
    assert moves == [("Ann", "M-yellow-green", "extend", True, None)]


def test_a_card_laid_well_apart_from_a_snake_it_fits_is_still_laid_alone():
    moves = _laid_short_of_its_snake(gap=1.2 * H)
    assert moves == [("Ann", "M-yellow-green", "new", False, "could_attach")]


def test_a_card_the_deck_holds_one_of_found_away_from_its_snake_is_that_card_moved():
    # H-purple, the deck's only one, is taken from the end of its snake and put down apart,
    # read surely there: the card that left its place and the one that turned up are one
    # card (a snake split, a foul), not a second H-purple laid while the first is missed
    snake = [["H-purple", "M-purple-blue"]]
    apart = {1: (260.0, 120.0)}
    tables = [analysis(snake), analysis([["M-purple-blue"], ["H-purple"]], apart)]
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play(tables)
    assert summary(p.moves()) == [(None, None, "none", False, "rearranged")]


def test_a_card_read_doubtfully_then_missed_through_judged_tables_is_judged_in_its_turn_once_found():
    # T-orange is read doubtfully in every reading of the table it is laid in, so that change
    # waits; the next two tables miss it, and are judged without it (it is forgotten).  Found
    # again where it was first seen, and read alike, it is no invention of one still picture:
    # it was laid in its own turn, and the tables judged since are corrected to hold it
    tables = [[["M-blue-green"], ["H-red"]],
              [["M-blue-green"], ["H-red"], ["T-orange"]],
              [["M-blue-green"], ["H-red", "M-red-purple"], ["T-orange"]],
              [["M-blue-green", "M-green-yellow"], ["H-red", "M-red-purple"], ["T-orange"]],
              [["M-blue-green", "M-green-yellow"], ["H-red", "M-red-purple", "M-purple-blue"],
               ["T-orange"]]]
    doubt = _misread_in(range(4, 7), ["orange"], ["orange"], 0.5)
    lose = _lost(range(7, 13), ["orange"])
    tracker, p = run(tables, fault=lambda data, call: lose(doubt(data, call), call))
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert tracker.stats["deferred"] >= 1 and tracker.stats["laid_while_missed"] == 1
    found = [e.data for e in p.events if e.kind == "correction"]
    assert found and all(c["found"] == ["T-orange"] for c in found)


def test_a_lone_card_carried_to_be_joined_and_missed_till_judged_taken_comes_back():
    # T-yellow is carried to the snake and joined to it by M-yellow-blue; the reader misses it
    # there table after table, so it is judged taken, incomplete: a foul.  Found again where
    # it was joined (the deck holds one), it never left: the tables judged since hold it, the
    # join is a join, and no snake was taken
    snake = ["T-yellow", "M-yellow-blue", "M-blue-red", "M-red-purple"]
    tables = [[["M-blue-red", "M-red-purple"], ["T-yellow"]],
              [snake],
              [snake, ["H-green"]],
              [snake, ["H-green", "M-green-orange"]],
              [snake + ["M-purple-green"], ["H-green", "M-green-orange"]]]
    # (the snake's cards stay where they lay; T-yellow is carried up from the row below, and
    # the green head is laid well away from where it lay)
    places = [{0: (2 * (W + 2), 0.0)}] + [{1: (300.0, 0.0)}] * 4
    analyzer = FakeAnalyzer(fault=_lost(range(4, 13), ["yellow"]))
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    p = Player(tracker, analyzer)
    p.play([analysis(t, at) for t, at in zip(tables, places)])
    want = expected(tables)["moves"]
    assert [m["action"] for m in want] == ["join", "new", "extend", "extend"]
    assert summary(tracker.moves) == summary(want)
    assert tracker.stats["came_back"] == 1
    joined = [e.data for e in p.events if e.kind == "correction" and "joined" in e.data]
    assert joined and all("T-yellow" in c["joined"] for c in joined)


def test_a_card_taken_for_good_and_read_again_elsewhere_later_stays_taken():
    # T-yellow really is taken off the table (a foul), and later a T-yellow is read at the end
    # of a snake laid since: linked to no card that lay there when it went, it is no card
    # that never left, and the foul stands
    tables = [[["M-blue-red", "M-red-purple"], ["T-yellow"]],
              [["M-blue-red", "M-red-purple"]],
              [["M-blue-red", "M-red-purple"], ["H-green"]],
              [["M-blue-red", "M-red-purple"], ["H-green", "M-green-yellow"]],
              [["M-blue-red", "M-red-purple"], ["H-green", "M-green-yellow", "T-yellow"]]]
    tracker, p = run(tables)
    want = expected(tables)["moves"]
    assert "collected_incomplete" in [m["code"] for m in want]
    assert summary(tracker.moves) == summary(want)
    assert tracker.stats["came_back"] == 0


def test_a_card_is_not_renamed_to_a_card_whose_every_copy_the_game_holds():
    # H-green is read right in the table it is laid in, and as H-red in every reading after
    # (three times as often, which would rename it); the deck holds one red head, and it lies
    # on the table: one of the two readings is wrong, so the name the move was judged by stays
    tables = [[["H-red", "M-red-blue"]],
              [["H-red", "M-red-blue"], ["H-green"]],
              [["H-red", "M-red-blue", "M-blue-yellow"], ["H-green"]],
              [["H-red", "M-red-blue", "M-blue-yellow"], ["H-green", "M-green-orange"]],
              [["H-red", "M-red-blue", "M-blue-yellow", "M-yellow-purple"], ["H-green", "M-green-orange"]]]
    tracker, p = run(tables, fault=_misread_in(range(7, 100), ["green"], ["red"], 0.95))
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert [e for e in p.events if e.kind == "correction"] == []


def test_a_card_read_weakly_as_one_whose_every_copy_is_out_is_no_move():
    # a red coaster is put down beside the snakes, and every reading of two tables makes it
    # out faintly as a red head (the deck's only one lies in a snake): read weakly, as a card
    # there can be no more of, once it has waited for a fresh table, it is no move
    tables = [[["H-red", "M-red-blue"]],
              [["H-red", "M-red-blue"], ["M-green-yellow"]],
              [["H-red", "M-red-blue"], ["M-green-yellow", "M-yellow-purple"]]]
    coaster = {**card_dicts([[], [], [], ["H-red"]], {3: (200.0, 0.0)}, start_id=90)[0][0],
               "confidence": 0.5}
    pictures = [analysis(t) for t in tables]
    for picture in pictures[1:]:
        picture["cards"].append(coaster)
        picture["snakes"].append({"cards": [coaster["id"]], "complete": False})
    analyzer = FakeAnalyzer()
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play(pictures)
    assert summary(tracker.moves) == summary(expected(tables)["moves"])
    assert tracker.stats["misread"] == 1


def test_a_lone_head_carried_to_complete_a_snake_and_read_as_a_tail_held_elsewhere_is_that_head():
    # H-blue, alone, is carried to the far end of a snake and M-purple-blue laid to join them.
    # Read there as T-blue in two pictures of three (the deck's only T-blue lies apart, seen
    # there), as H-blue in the third: the head left its place as a card turned up that was
    # read as it, so that card is the head carried, not a second T-blue laid
    tables = [[["T-blue"], ["T-yellow", "M-yellow-purple"], ["H-blue"]],
              [["T-blue"], ["T-yellow", "M-yellow-purple", "M-purple-blue", "H-blue"]]]

    def as_tail(data, call):
        for card in data["cards"]:
            if call in (4, 5) and card["kind"] == "head" and card["colours"] == ["blue"]:
                card["kind"] = "tail"
        return data
    tracker, p = run(tables, fault=as_tail)
    want = expected(tables)["moves"]
    assert [(m["action"], m["legal"]) for m in want] == [("complete", True)]
    assert summary(tracker.moves) == summary(want)
    assert tracker.stats["carried"] == 1


def _across_the_seam(tables_with: set[int]):
    """The pictures of a short game whose first snake is nudged when the tail is laid (so the
    pixels changed where its two cards meet), and a fault: readings of the tables with as
    many cards as `tables_with` says make out, weakly, a middle across those two cards'
    seam (the deck holds that middle; no card lies there)."""
    nudge = (6.0, 4.0)
    tables = [[["H-red", "M-red-blue"]],
              [["H-red", "M-red-blue"], ["T-yellow"]],
              [["H-red", "M-red-blue"], ["M-green-yellow", "T-yellow"]],
              [["H-red", "M-red-blue", "M-blue-green"], ["M-green-yellow", "T-yellow"]]]
    # (the tail lies where it will lie once joined)
    places = [None, {0: nudge, 1: (W + 2.0, 0.0)}, {0: nudge}, {0: nudge}]
    pictures = [analysis(t, o) for t, o in zip(tables, places)]
    x0, y0 = 40 + W / 2 + nudge[0], 40 + nudge[1]
    seam = {"id": 90, "kind": "middle", "colours": ["orange", "purple"], "confidence": 0.3,
            "ends": [[x0, y0 + H / 2], [x0 + W, y0 + H / 2]],
            "corners": [[x0, y0], [x0 + W, y0], [x0 + W, y0 + H], [x0, y0 + H]]}

    def fault(data, call):
        if len(data["cards"]) in tables_with:
            data["cards"].append(dict(seam))
            data["snakes"].append({"cards": [seam["id"]], "complete": False})
        return data
    return pictures, fault, expected(tables)["moves"]


def test_a_weak_card_read_across_the_seam_of_two_settled_cards_is_no_move():
    # the table where the tail is laid and the next both show the weak middle where two
    # settled cards meet: once its change has waited for a fresh table it is a misreading,
    # not a card laid (no card is laid on two others), though the deck holds such a middle
    pictures, fault, want = _across_the_seam({3, 4})
    analyzer = FakeAnalyzer(fault=fault)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play(pictures)
    assert summary(tracker.moves) == summary(want)
    assert tracker.stats["misread"] == 1


def test_a_weak_card_across_a_seam_gone_from_the_next_table_does_not_hold_up_the_turn_again():
    # only the table where the tail is laid shows the weak middle: that change waits for a
    # fresh table, which no longer shows it.  Gone, it is no card left waiting and missed,
    # which would hold the change (and the next turn's card) a second time
    pictures, fault, want = _across_the_seam({3})
    analyzer = FakeAnalyzer(fault=fault)
    tracker = Tracker(analyzer, PLAYERS, settings=FIXED)
    Player(tracker, analyzer).play(pictures)
    assert summary(tracker.moves) == summary(want)
    assert tracker.stats["deferred"] == 1


def test_a_snake_pushed_onto_another_without_a_card_is_the_foul_though_other_links_are_garbled():
    # a lone middle is pushed onto a snake's open end and no card laid: the foul the camera
    # saw.  Every reading of that table also garbles a link in a third snake (a card with
    # three neighbours, so the links read make no chains): the settled links stand where they
    # were, and the one pushed together between two snakes' open ends stands with them
    tables = [[["H-red", "M-red-blue"], ["M-blue-green"], ["M-purple-yellow", "M-yellow-green", "T-green"]],
              [["H-red", "M-red-blue", "M-blue-green"], ["M-purple-yellow", "M-yellow-green", "T-green"]]]
    want = expected(tables)["moves"]
    assert [(m["action"], m["code"]) for m in want] == [("none", "rearranged")]

    def garbled(data, call):
        if len(data["snakes"]) == 2:
            ids = {(c["kind"], tuple(c["colours"])): c["id"] for c in data["cards"]}
            data["snakes"].append({"cards": [ids[("middle", ("red", "blue"))], ids[("middle", ("yellow", "green"))]],
                                   "complete": False})
        return data
    tracker, p = run(tables, fault=garbled)
    assert summary(tracker.moves) == summary(want)
