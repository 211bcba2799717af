"""`companion judge FILE [--json]`: the referee over a symbolic game record."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .deck import load_deck
from .record import RecordError, load_record
from .referee import judge_game


def read_source(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8-sig")   # tolerate a byte-order mark
    except FileNotFoundError:
        raise RecordError(f"{name}: no such file") from None
    except UnicodeDecodeError:
        raise RecordError(f"{name} is not a text file") from None
    except OSError as exc:
        raise RecordError(f"cannot read {name}: {exc.strerror}") from None


def format_account(result: dict, players: list[str]) -> str:
    """The verdicts as a referee would read them out, then the score table."""
    lines = []
    for move in result["moves"]:
        verdict = "legal" if move["legal"] else f"NOT LEGAL ({move['code']})"
        head = f"frame {move['frame']}, turn {move['turn']}"
        lines.append(f"{head}: {move['reason']} [{verdict}]")
    if not result["moves"]:
        lines.append("No moves: the table never changed.")
    lines.append("")
    width = max([len(p) for p in players] + [6])
    lines.append(f"{'player':<{width}}  cards  snakes  longest")
    for player in players:
        s = result["scores"][player]
        lines.append(f"{player:<{width}}  {s['cards']:>5}  {s['snakes']:>6}  {s['longest']:>7}")
    winners = result["winners"]
    lines.append(("Winner: " if len(winners) == 1 else "Shared win: ") + ", ".join(winners))
    return "\n".join(lines)


def main(args) -> int:
    deck = load_deck()
    name = "standard input" if args.file == "-" else args.file
    record = load_record(read_source(args.file), name, deck)
    result = judge_game(record, deck).to_json()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_account(result, list(record.players)))
    return 0
