"""`companion advise STATE [--card CODE] [--json]`: the move advisor and card counting.

STATE is a table in the judge frame format, `{"table": [[codes...], ...]}`,
optionally with `"piles": {player: [[codes...], ...]}` and `"players"`; a
whole judge record (`"frames"`) is accepted too, and then the table is its
last frame and the cards seen are what the referee accounted for.
"""
from __future__ import annotations

import json
from typing import Any

from .advisor import Advice, Outlook, advise, outlook
from .cards import CardCodeError
from .chains import Chain
from .counting import remaining_cards
from .deck import PROFILE_FORMAT, Deck, DeckError, load_deck
from .hints import LANGUAGES, badge, cards_left
from .judge_cli import read_source
from .record import check_players, parse_record, read_table
from .referee import judge_game
from .rules import table_problems


class StateError(ValueError):
    """A STATE file that cannot be advised on; the message says what is wrong."""


def deck_for(deck_file: str | None, profile_file: str | None) -> Deck:
    """The deck to count against: `--deck`, else a profile's composition, else the default."""
    if deck_file and profile_file:
        raise StateError("give --deck or --profile, not both")
    if not profile_file:
        return load_deck(deck_file)
    try:
        data = json.loads(read_source(profile_file))
    except json.JSONDecodeError as exc:
        raise StateError(f"{profile_file}: not JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise StateError(f"{profile_file}: nested too deeply to be a profile") from None
    if not isinstance(data, dict):
        raise StateError(f"{profile_file}: a profile is a JSON object")
    if isinstance(data.get("deck"), dict):
        return Deck.from_dict(data["deck"])
    if "cards" in data:
        return Deck.from_dict(data)
    # any other JSON file (a game record) would otherwise pass as "the default deck"
    if data.get("format") != PROFILE_FORMAT:
        raise StateError(f"{profile_file}: not a calibration profile (no \"format\": \"{PROFILE_FORMAT}\") "
                         f"nor a deck file; give --deck for a deck")
    deck = load_deck()
    colours = data.get("colours")
    if colours is not None and list(colours) != list(deck.colours):
        raise StateError(f"{profile_file}: its colours {colours} differ from the deck file's and it "
                         f"holds no deck composition; give --deck")
    return deck


def read_state(data: Any, deck: Deck) -> tuple[tuple[Chain, ...], Any]:
    """The table and the cards seen besides it (piles, or a referee's account)."""
    if not isinstance(data, dict):
        raise StateError("STATE must be a JSON object with a 'table' (or a judge record with 'frames')")
    if "frames" in data:
        record = parse_record(data, deck)
        referee = judge_game(record, deck)
        return tuple(referee.table or ()), referee
    if "table" not in data:
        raise StateError("STATE needs a 'table': a list of chains of card codes")
    table = read_table(data["table"], deck, "table")
    if "players" in data:
        check_players(data["players"])
    piles = data.get("piles", {})
    if not isinstance(piles, dict):
        raise StateError("'piles' must map each player to a list of collected snakes")
    read = {}
    for player, snakes in piles.items():
        if "players" in data and player not in data["players"]:
            raise StateError(f"'piles' names {player!r}, who is not one of the players")
        read[player] = read_table(snakes, deck, f"piles of {player}")
    return table, read


def main(args) -> int:
    deck = deck_for(args.deck, args.profile)
    name = "standard input" if args.state == "-" else args.state
    try:
        data = json.loads(read_source(args.state))
    except json.JSONDecodeError as exc:
        raise StateError(f"{name} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise StateError(f"{name} is nested too deeply to be a table") from None
    table, seen = read_state(data, deck)
    problems = table_problems(table)
    if problems:
        i, problem = problems[0]
        raise StateError(f"the table breaks a rule (chain {i}): {problem.message}")
    card = None
    if args.card is not None:
        try:
            card = deck.parse(args.card)
        except (CardCodeError, DeckError) as exc:
            raise StateError(f"--card: {exc}") from None
    extra = [card] if card else []
    if isinstance(seen, dict):
        remaining = remaining_cards(deck, table, seen, extra)
    else:   # a referee: every card it accounted for (table, piles with inferred cards, removed)
        remaining = remaining_cards(deck, extra=list(seen.accounted().elements()) + extra)
    result = advise(table, card, deck, remaining) if card else outlook(table, deck, remaining)
    if args.json:
        print(json.dumps(result.to_json(args.lang), indent=2, ensure_ascii=False))
    else:
        print(format_advice(result, args.lang) if card else format_outlook(result, args.lang))
    return 0


def _chains(table) -> str:
    return "  ".join("[" + " ".join(c.code for c in chain) + "]" for chain in table) or "(empty)"


def _percent(x) -> str:
    return f"{100 * float(x):.1f}%"


def format_advice(advice: Advice, lang: str) -> str:
    lines = [f"card in hand: {advice.card.code}", f"table: {_chains(advice.table)}",
             f"{cards_left(advice.pile.size, lang)} after this one", ""]
    for i, r in enumerate(advice.ranked, 1):
        given = r.given
        lines.append(f"{i}. {r.placement.describe(advice.table)}: collects {r.gain}, next player "
                     f"collects with {given.collecting_cards}/{given.cards_left} cards left "
                     f"({_percent(given.chance)}, {float(given.expected_cards):.2f} cards expected)")
    lines += [""] + [h.text(lang) for h in advice.hints]
    return "\n".join(lines).rstrip()


def format_outlook(view: Outlook, lang: str) -> str:
    pile = view.pile
    lines = [f"table: {_chains(view.table)}", cards_left(pile.size, lang)]
    colours = pile.by_colour()
    for colour, c in colours.items():
        lines.append(f"  {colour:<8} heads {c['heads']}  tails {c['tails']}  middles {c['middles']}")
    j = pile.jokers()
    lines.append(f"  rainbow  head {j['rainbow_head']}  tail {j['rainbow_tail']}")
    lines.append("")
    for s in view.snakes:
        lines.append(f"snake {s.index} {_chains([s.chain])}: {badge(s.cards_left, lang)}"
                     + (f" ({', '.join(f'{c.code} x{n}' for c, n in sorted(s.completed_by.items()))})"
                        if s.completed_by else ""))
    g = view.next_collects
    lines.append(f"the next draw collects with {g.collecting_cards}/{g.cards_left} cards left "
                 f"({_percent(g.chance)})")
    lines.append("")
    if not view.next_draws:
        lines.append("the draw pile is empty: the game is over")
    else:
        lines.append("if the next card is ...")
    for d in view.next_draws:
        lines.append(f"  {d.card.code:<16} ({d.copies} left, {_percent(d.chance)}): "
                     f"{d.best.placement.describe(view.table)}"
                     + (f", collects {d.best.gain}" if d.best.gain else ""))
    if view.hints:
        lines += [""] + [h.text(lang) for h in view.hints]
    return "\n".join(lines)


def add_arguments(p) -> None:
    p.add_argument("state", metavar="STATE",
                   help="table JSON ({'table': [[codes...]], 'piles': {...}}) or a judge record; '-' for stdin")
    p.add_argument("--card", metavar="CODE", help="the card just drawn, e.g. M-red-blue")
    p.add_argument("--json", action="store_true", help="print the advice as JSON")
    p.add_argument("--deck", metavar="FILE", help="deck composition file (default calibration/deck.json)")
    p.add_argument("--profile", metavar="FILE", help="calibration profile holding the deck's composition")
    p.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the hints (default en)")
