import json
from pathlib import Path

import pytest

from companion.web.app import create_app, open_service

ROOT = Path(__file__).resolve().parents[2]
from .webhelpers import PIN


@pytest.fixture
def sample_record() -> dict:
    return json.loads((ROOT / "sample_images" / "sample_game.json").read_text())


@pytest.fixture
def service(tmp_path):
    svc = open_service(tmp_path / "data")
    yield svc
    svc.close()


@pytest.fixture
def app(service):
    return create_app(service, pin=PIN, testing=True)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def game(service, sample_record):
    """A game with the first `n` frames of the sample game observed; call it with n."""
    def start(n: int | None = None, players=None):
        g = service.new_game(players or sample_record["players"], "upload")
        for frame in sample_record["frames"][:n]:
            service.observe(g, frame["table"])
        return service.store.game(g.id)
    return start
