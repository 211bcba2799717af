"""The dashboard's words in English, French, Spanish and Korean: one JSON file per language.

The language comes from the `lang` cookie (set by the switcher), else from the
browser's Accept-Language, else English.  A key missing from a translation
falls back to English; the tests check that no translation misses a key.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from flask import request

LANGUAGES = {"en": "English", "fr": "Français", "es": "Español", "ko": "한국어"}
DEFAULT = "en"
FOLDER = Path(__file__).parent / "i18n"


@lru_cache(maxsize=None)
def strings(lang: str) -> dict[str, str]:
    return json.loads((FOLDER / f"{lang}.json").read_text(encoding="utf-8"))


def choose_language() -> str:
    wanted = request.args.get("lang") or request.cookies.get("lang")
    if wanted in LANGUAGES:
        return wanted
    return request.accept_languages.best_match(list(LANGUAGES), default=DEFAULT)


def translator(lang: str):
    own, fallback = strings(lang), strings(DEFAULT)

    def t(key: str, default: str | None = None, **values) -> str:
        text = own.get(key) or fallback.get(key)
        if text is None:
            return key if default is None else default
        return text.format(**values) if values else text
    return t
