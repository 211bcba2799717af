"""A finished (or running) game as files: JSON with everything, CSV with one row per move."""
from __future__ import annotations

import csv
import io

from companion.store.db import Game

from .service import GameService, explain_winners

CSV_COLUMNS = ["frame", "turn", "player", "card", "action", "legal", "stands", "code", "reason",
               "collected_by", "collected_cards", "override_reason"]


def game_json(service: GameService, game: Game) -> dict:
    view = service.view(game)
    return {
        "game": {"id": game.id, "players": list(game.players), "source": game.source,
                 "created_at": game.created_at, "finished_at": game.finished_at},
        "moves": [service.move_json(game, m, view) for m in view.moves],
        "piles": view.piles,
        "scores": view.scores,
        "winners": view.winners,
        "tiebreak": explain_winners(view.scores, view.winners),
        # the tables as the referee saw them, in the `companion judge` FILE format:
        # `companion judge` on this record gives the same verdicts (before overrides)
        "record": {"players": list(game.players),
                   "frames": [{"table": f.table} for f in view.frames if f.explained],
                   "finished": view.finished},
        "log": view.log,
    }


def game_csv(service: GameService, game: Game) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for m in service.view(game).moves:
        collected = m.get("collected") or {}
        writer.writerow([_cell(v) for v in (
            m.get("frame"), m.get("turn"), m.get("player"), m.get("card"), m.get("action"),
            m.get("legal"), m.get("stands"), m.get("code") or "", m.get("reason") or "",
            collected.get("player", ""), collected.get("cards", ""),
            (m.get("override") or {}).get("reason", ""))])
    return out.getvalue()


def _cell(value):
    """Text a spreadsheet would run as a formula (a name like '=1+1') is kept as text."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
