"""Helpers shared by the dashboard tests (imported by name: tests have no packages)."""
PIN = "424242"


def referee_session(client) -> str:
    """Log the test client in as the referee; return the session's CSRF token."""
    client.get("/login")
    with client.session_transaction() as s:
        token = s["csrf"]
    response = client.post("/login", data={"pin": PIN, "csrf_token": token, "next": "/live"})
    assert response.status_code == 302
    return token
