"""The game is whatever replaying its log through the referee says: check that it is."""
import json
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings, strategies as st

from companion.game.history import apply_correction, replay, undone_events
from companion.game.referee import judge_record
from companion.game.simulate import simulate_game

SAMPLE = Path(__file__).resolve().parents[2] / "sample_images" / "sample_game.json"


@dataclass(frozen=True)
class E:
    seq: int
    kind: str
    data: dict


def log_of(record: dict) -> list[E]:
    events = [E(i + 1, "table", {"table": f["table"], "frame": i})
              for i, f in enumerate(record["frames"])]
    if record.get("finished"):
        events.append(E(len(events) + 1, "finish", {}))
    return events


def judged(view) -> dict:
    moves = [{k: m[k] for k in ("frame", "turn", "player", "card", "action", "legal", "code",
                               "reason", "collected")} for m in view.moves]
    return {"moves": moves, "piles": view.piles, "scores": view.scores, "winners": view.winners}


def sample() -> dict:
    return json.loads(SAMPLE.read_text())


def test_replaying_the_sample_game_gives_the_judges_verdicts():
    record = sample()
    assert judged(replay(record["players"], log_of(record))) == judge_record(record)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), illegal=st.sampled_from([0.0, 0.3]))
def test_replay_agrees_with_the_judge_on_simulated_games(seed, illegal):
    game = simulate_game(["Ann", "Ben", "Cy"], seed, illegal_rate=illegal)
    view = replay(game.players, log_of(game.record))
    assert judged(view) == judge_record(game.record)
    assert view.finished and view.turn is None and view.cards_left == 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), data=st.data())
def test_undoing_a_table_is_replaying_without_it(seed, data):
    game = simulate_game(["Ann", "Ben"], seed)
    frames = game.record["frames"]
    drop = data.draw(st.integers(1, len(frames) - 1))
    events = log_of({"frames": frames})
    undo = E(len(events) + 1, "undo", {"target": drop + 1, "reason": "a hand"})
    without = {"players": game.players, "frames": frames[:drop] + frames[drop + 1:]}
    assert judged(replay(game.players, events + [undo])) == \
        judged(replay(game.players, log_of(without)))
    # and undoing the undo brings the table back
    redo = E(undo.seq + 1, "undo", {"target": undo.seq, "reason": "it was real"})
    assert judged(replay(game.players, events + [undo, redo])) == \
        judged(replay(game.players, events))


def test_undone_events_latest_undo_wins():
    events = [E(1, "table", {}), E(2, "undo", {"target": 1}), E(3, "undo", {"target": 2}),
              E(4, "undo", {"target": 3})]
    assert undone_events(events[:2]) == {1}
    assert undone_events(events[:3]) == {2}
    assert undone_events(events) == {3, 1}


def collect_index(view) -> tuple[int, int, int]:
    move = next(m for m in view.moves if m["collected"])
    return move["seq"], move["index"], move["frame"]


def test_overriding_who_collected_moves_the_snake_and_the_win():
    record = sample()
    events = log_of(record)
    before = replay(record["players"], events)
    seq, index, _ = collect_index(before)
    collector = next(m for m in before.moves if m["collected"])["collected"]["player"]
    other = next(p for p in record["players"] if p != collector)
    after = replay(record["players"], events + [E(99, "override", {
        "target": seq, "index": index, "legal": None, "stands": True, "player": other,
        "reason": "she placed the last card"})])
    moved = before.piles[collector][0]
    assert moved in after.piles[other] and moved not in after.piles[collector]
    assert after.scores[other]["cards"] == before.scores[other]["cards"] + len(moved)
    changed = next(m for m in after.moves if m["seq"] == seq and m["index"] == index)
    assert changed["override"]["reason"] == "she placed the last card"
    assert changed["original"]["player"] == collector


def test_illegal_but_it_stands_keeps_the_score_and_void_removes_it():
    record = sample()
    events = log_of(record)
    before = replay(record["players"], events)
    seq, index, _ = collect_index(before)
    stands = replay(record["players"], events + [E(99, "override", {
        "target": seq, "index": index, "legal": False, "stands": True, "reason": "r"})])
    move = next(m for m in stands.moves if m["seq"] == seq)
    assert move["legal"] is False and move["stands"] is True
    assert stands.scores == before.scores
    void = replay(record["players"], events + [E(99, "override", {
        "target": seq, "index": index, "legal": False, "stands": False, "reason": "r"})])
    collector = next(m for m in before.moves if m["collected"])["collected"]["player"]
    assert void.scores[collector]["cards"] < before.scores[collector]["cards"]
    # the latest override of a move is the one that counts
    back = replay(record["players"], events + [
        E(99, "override", {"target": seq, "index": index, "legal": False, "stands": False, "reason": "r"}),
        E(100, "override", {"target": seq, "index": index, "legal": True, "stands": True, "reason": "r2"})])
    assert back.scores == before.scores


def test_a_corrected_card_is_fixed_in_every_later_table_and_rejudged():
    record = sample()
    # the camera misreads M-green-yellow as M-green-red from frame 1 on
    misread = json.loads(json.dumps(record).replace("M-green-yellow", "M-green-red"))
    events = log_of(misread)
    wrong = replay(record["players"], events)
    assert judged(wrong) != judge_record(record)
    fixed = replay(record["players"], events + [E(99, "correction", {
        "target": 2, "from": "M-green-red", "to": "M-green-yellow", "reason": "glare"})])
    assert judged(fixed) == judge_record(record)
    assert fixed.frames[1].observed == misread["frames"][1]["table"]   # what the camera saw is kept


def test_a_correction_leaves_earlier_real_copies_alone():
    tables = [[["M-red-blue"]], [["M-red-blue"], ["M-red-blue"]], [["M-red-blue"], ["M-blue-red"]]]
    apply_correction(tables, 1, "M-red-blue", "M-red-green")
    assert tables == [[["M-red-blue"]], [["M-red-blue"], ["M-red-green"]],
                      [["M-red-blue"], ["M-green-red"]]]


def test_a_table_the_referee_cannot_read_is_kept_and_flagged_not_fatal():
    events = [E(1, "table", {"table": [["M-red-blue"]]}),
              E(2, "table", {"table": [["M-red-blue", "X-nonsense"]]}),
              E(3, "table", {"table": [["M-red-blue", "M-blue-green"]]})]
    view = replay(["Ann", "Ben"], events)
    assert [f.explained for f in view.frames] == [True, False, True]
    assert view.frames[1].desync
    assert [(m["frame"], m["card"]) for m in view.moves] == [(2, "M-blue-green")]
    assert [f.index for f in view.frames] == [0, 1, 2]
    assert not view.desync


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), data=st.data())
def test_a_kept_replay_fed_event_by_event_equals_replaying_from_scratch(seed, data):
    """The live path (one referee step per new table) never drifts from a full replay."""
    from companion.game.history import Replay
    game = simulate_game(["Ann", "Ben", "Cy"], seed, illegal_rate=0.2)
    events = log_of(game.record)
    # interleave a few referee changes: overrides, a correction, a retable, an undo
    log: list[E] = []
    previous: list = []
    for event in events:
        log.append(E(len(log) + 1, event.kind, event.data))
        if event.kind == "table" and data.draw(st.integers(0, 5)) == 0:
            target = log[-1].seq
            kind = data.draw(st.sampled_from(["override", "undo", "correction", "retable"]))
            if kind == "retable":     # nothing happened at that table after all
                payload = {"target": target, "table": previous, "reason": "r"}
            elif kind == "override":
                payload = {"target": target, "index": 0, "legal": False, "stands": False, "reason": "r"}
            elif kind == "undo":
                payload = {"target": target, "reason": "r"}
            else:
                codes = [c for chain in event.data["table"] for c in chain]
                if not codes:
                    continue
                payload = {"target": target, "from": codes[0], "to": "M-red-blue", "reason": "r"}
            log.append(E(len(log) + 1, kind, payload))
        if event.kind == "table":
            previous = event.data["table"]
    kept = Replay(game.players)
    for n in range(1, len(log) + 1):
        view = kept.view(log[:n])
        if n % 6 == 0 or n == len(log):   # a full replay at every step would be quadratic
            assert judged(view) == judged(replay(game.players, log[:n])), n


# The tracker's account of a snake completed with a tail the reader missed: the tail, pushed
# over to meet the card that completes the snake, was never seen there, and the whole snake
# was collected in the next turn.  The camera's tables, then the third one as re-judged.
SEEN = [[["H-red"]], [["H-red"], ["T-purple"]], [["H-red", "M-red-purple"], ["T-purple"]],
        [["H-orange"]]]
REJUDGED = SEEN[:2] + [[["H-red", "M-red-purple", "T-purple"]]] + SEEN[3:]


def test_a_retabled_table_is_judged_as_the_table_it_names_and_the_camera_reading_is_kept():
    players = ["Ann", "Ben"]
    events = log_of({"frames": [{"table": t} for t in SEEN]})
    as_seen = replay(players, events)
    assert judged(as_seen) == judge_record({"players": players, "frames": [{"table": t} for t in SEEN]})
    retabled = replay(players, events + [E(5, "retable", {
        "target": 3, "table": REJUDGED[2], "reason": "the tail was pushed over unseen"})])
    want = judge_record({"players": players, "frames": [{"table": t} for t in REJUDGED]})
    assert judged(retabled) == want and judged(retabled) != judged(as_seen)
    # Ben completed the snake and collected it: not Ann taking two incomplete ones
    assert retabled.scores["Ben"] == {"cards": 3, "snakes": 1, "longest": 3}
    assert retabled.frames[2].table == REJUDGED[2] and retabled.frames[2].observed == SEEN[2]
    assert retabled.frames[2].retable == 5 and as_seen.frames[2].retable is None
    assert [f.retable for f in retabled.frames] == [None, None, 5, None]


def test_a_retable_can_be_undone_and_a_card_correction_applies_on_top_of_it():
    players = ["Ann", "Ben"]
    events = log_of({"frames": [{"table": t} for t in SEEN]}) + [
        E(5, "retable", {"target": 3, "table": REJUDGED[2], "reason": "unseen tail"})]
    as_seen = judged(replay(players, log_of({"frames": [{"table": t} for t in SEEN]})))
    undone = replay(players, events + [E(6, "undo", {"target": 5, "reason": "no"})])
    assert judged(undone) == as_seen and undone.frames[2].retable is None
    renamed = replay(players, events + [E(6, "correction", {
        "target": 3, "from": "M-red-purple", "to": "M-red-yellow", "reason": "glare"})])
    assert renamed.frames[2].table == [["H-red", "M-red-yellow", "T-purple"]]


def test_a_retable_that_already_names_a_corrected_card_rightly_does_not_end_the_correction():
    # M-red-purple was read as M-red-yellow when laid, and in every table the camera sent;
    # the tracker, having renamed it, re-judges table 2 with its right name
    seen = json.loads(json.dumps(SEEN[:3] + [[["H-red", "M-red-purple"], ["T-purple"], ["H-orange"]]])
                      .replace("M-red-purple", "M-red-yellow"))
    events = log_of({"frames": [{"table": t} for t in seen]}) + [
        E(5, "correction", {"target": 3, "from": "M-red-yellow", "to": "M-red-purple", "reason": "x"}),
        E(6, "retable", {"target": 3, "table": [["H-red", "M-red-purple"], ["T-purple"]],
                         "reason": "the tracker's names"})]
    view = replay(["Ann", "Ben"], events)
    assert view.frames[3].table == [["H-red", "M-red-purple"], ["T-purple"], ["H-orange"]]


# H-red was taken in a turn of its own, but the camera confirmed its going only two tables
# later: it sent the next table with H-red still there, then told that H-red had gone before
# it -- the table then goes in before that one, and that one is judged without H-red.
CAMERA = [[["M-blue-green"], ["H-red"]], [["M-blue-green", "M-green-yellow"], ["H-red"]],
          [["M-blue-green", "M-green-yellow", "M-yellow-red"]]]
TRACKER = [CAMERA[0], [["M-blue-green"]], [["M-blue-green", "M-green-yellow"]], CAMERA[2]]
PUT_IN = E(4, "retable", {"target": 2, "table": TRACKER[2], "before": TRACKER[1],
                          "before_frame": 13, "reason": "H-red went a turn earlier"})


def test_a_retable_with_a_table_before_its_target_is_judged_as_the_tracker_judged():
    players = ["Ann", "Ben"]
    camera = log_of({"frames": [{"table": t} for t in CAMERA]})
    view = replay(players, camera + [PUT_IN])
    want = judge_record({"players": players, "frames": [{"table": t} for t in TRACKER]})
    as_seen = judge_record({"players": players, "frames": [{"table": t} for t in CAMERA]})
    assert want["moves"] != as_seen["moves"]
    assert {k: v for k, v in judged(view).items() if k != "moves"} == \
        {k: want[k] for k in ("piles", "scores", "winners")}
    assert [{k: m[k] for k in ("player", "card", "action", "legal", "code", "collected")}
            for m in view.moves] == \
        [{k: m[k] for k in ("player", "card", "action", "legal", "code", "collected")}
         for m in want["moves"]]
    # the table put in is a frame of its own, named by the retable; the camera's stay in the log
    assert [(f.index, f.seq, f.inserted, f.retable) for f in view.frames] == [
        (0, 1, False, None), (1, 4, True, None), (2, 2, False, 4), (3, 3, False, None)]
    assert view.frames[1].table == TRACKER[1] and view.frames[1].source_frame == 13
    assert view.frames[2].observed == CAMERA[1] and view.frames[2].table == TRACKER[2]
    assert [m["seq"] for m in view.moves if m["frame"] == 1] == [4]


def test_a_table_put_in_goes_with_its_retable_and_stays_when_its_target_is_retabled_again():
    players = ["Ann", "Ben"]
    camera = log_of({"frames": [{"table": t} for t in CAMERA]})
    as_seen = judged(replay(players, camera))
    assert judged(replay(players, camera + [PUT_IN, E(5, "undo", {"target": 4, "reason": "x"})])) \
        == as_seen
    # a later retable of the target changes its table only
    again = replay(players, camera + [PUT_IN, E(5, "retable", {
        "target": 2, "table": [["M-blue-green", "M-green-purple"]], "reason": "misread"})])
    assert [f.table for f in again.frames][:3] == [CAMERA[0], TRACKER[1],
                                                    [["M-blue-green", "M-green-purple"]]]
    # overrides, corrections and retables name the table put in by the retable's seq
    named = replay(players, camera + [PUT_IN, E(5, "override", {
        "target": 4, "index": 0, "legal": True, "stands": True, "reason": "allowed"}),
        E(6, "retable", {"target": 4, "table": CAMERA[0], "reason": "it was there"})])
    assert named.frames[1].table == CAMERA[0] and named.frames[1].retable == 6
    assert named.frames[1].inserted and named.frames[1].observed == TRACKER[1]
    overridden = replay(players, camera + [PUT_IN, E(5, "override", {
        "target": 4, "index": 0, "legal": True, "stands": True, "reason": "allowed"})])
    (taken,) = [m for m in overridden.moves if m["frame"] == 1]
    assert taken["action"] == "collect" and taken["legal"] and taken["override"]["seq"] == 5


def test_a_kept_replay_after_a_table_put_in_equals_replaying_from_scratch():
    from companion.game.history import Replay
    players = ["Ann", "Ben"]
    log = log_of({"frames": [{"table": t} for t in CAMERA]}) + [PUT_IN] + [
        E(5, "table", {"table": [["M-blue-green", "M-green-yellow", "M-yellow-red"], ["H-blue"]]})]
    kept = Replay(players)
    for n in range(1, len(log) + 1):
        assert judged(kept.view(log[:n])) == judged(replay(players, log[:n]))
    assert [f.inserted for f in kept.view(log).frames] == [False, True, False, False, False]
