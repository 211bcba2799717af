"""Who may change the game: the referee PIN, sessions and CSRF tokens.

Reading is open to everyone (spectators); every change needs the PIN that the
server prints at start.  Scripts send it in an ``X-Referee-PIN`` header; the
browser sends it once to /login and then carries a signed session cookie, and
every form and fetch from the page carries the session's CSRF token.
No credentials: 401.  Wrong PIN or missing/wrong CSRF token: 403.
"""
from __future__ import annotations

import hmac
import secrets
import threading
import time
from functools import wraps

from flask import abort, current_app, request, session

PIN_HEADER = "X-Referee-PIN"
CSRF_HEADER = "X-CSRF-Token"
MAX_FAILURES, FAILURE_WINDOW = 5, 60.0


def new_pin() -> str:
    return f"{secrets.randbelow(10**6):06d}"


def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(24)
    return token


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


class PinGuard:
    """Checks PINs and slows down guessing: after 5 wrong PINs a minute, refuse for a minute."""

    def __init__(self, pin: str):
        self.pin = pin
        self._failures: list[float] = []
        self._lock = threading.Lock()

    def check(self, given: str) -> bool:
        now = time.monotonic()
        with self._lock:
            self._failures = [t for t in self._failures if now - t < FAILURE_WINDOW]
            if len(self._failures) >= MAX_FAILURES:
                abort(429, description="too many wrong PINs; wait a minute")
            if _same(given, self.pin):
                return True
            self._failures.append(now)
            return False


def check_csrf() -> None:
    expected = session.get("csrf")
    given = request.form.get("csrf_token") or request.headers.get(CSRF_HEADER) or ""
    if not expected or not _same(given, expected):
        abort(403, description="the form has expired or did not come from this dashboard; reload and retry")


def local_path(target: str | None, default: str) -> str:
    """`target` if it is a path on this site, else `default`: never an open redirect.

    Browsers read a backslash as a slash, so "/\\evil.example" is refused like "//evil.example".
    """
    if (not target or not target.startswith("/") or target[1:2] in ("/", "\\")
            or any(ord(ch) < 32 for ch in target)):
        return default
    return target


def is_referee() -> bool:
    return bool(session.get("referee"))


def referee_required(view):
    """Allow the request only with the referee PIN (header) or a referee session + CSRF token."""
    @wraps(view)
    def guarded(*args, **kwargs):
        given = request.headers.get(PIN_HEADER)
        if given is not None:
            if not current_app.extensions["pin_guard"].check(given):
                abort(403, description="wrong referee PIN")
        elif is_referee():
            check_csrf()
        else:
            abort(401, description="referee only: log in with the PIN the server printed at start")
        return view(*args, **kwargs)
    return guarded
