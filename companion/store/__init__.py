"""Persistence of games and their event history (SQLite)."""
