"""Helpers shared by the dashboard tests."""
import socket
import time

PIN = "424242"


def referee_session(client) -> str:
    """Log the test client in as the referee; return the session's CSRF token."""
    client.get("/login")
    with client.session_transaction() as s:
        token = s["csrf"]
    response = client.post("/login", data={"pin": PIN, "csrf_token": token, "next": "/live"})
    assert response.status_code == 302
    return token


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError("timed out")
