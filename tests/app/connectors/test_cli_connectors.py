"""``mama connectors`` as the owner runs it (real subprocesses), against the fake Trello."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.app.runtime.support import MAMA, mama_env

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fake() -> Iterator[FakeTrello]:
    server = FakeTrello()
    server.add_card_moves(server.add_board("Roadmap"), 5)
    yield server
    server.close()


def test_add_list_test_poll_pause_remove(
    tmp_path: Path, model_cache_dir: Path, fake: FakeTrello
) -> None:
    url = fake.serve()
    env = mama_env(
        tmp_path / "home",
        model_cache_dir,
        MAMA_CONNECTOR_WORK_API_KEY=API_KEY,
        MAMA_CONNECTOR_WORK_TOKEN=TOKEN,
        PYTHONPATH=str(REPO_ROOT),
    )

    def mama(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(MAMA), *args], env=env, capture_output=True, text=True, timeout=180, check=False
        )

    def ok(*args: str) -> dict:
        done = mama(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    added = ok(
        "connectors", "add", "trello", "work", "-o", "boards=Roadmap", "-o", f"base_url={url}"
    )
    assert added["added"]["options"] == {"boards": "Roadmap", "base_url": url}
    assert added["secrets_missing"] == []
    assert ok("connectors", "test", "work")["summary"] == "Trello as owner: 1 board(s): Roadmap"

    polled = ok("connectors", "poll", "work")
    assert (polled["read"], polled["stored"], polled["more"]) == (5, 5, False)
    again = ok("connectors", "poll", "work")
    assert again["stored"] == 0  # from the stored cursor: nothing twice

    listed = ok("connectors", "list")["connectors"]
    assert [(c["name"], c["state"], c["items_stored"]) for c in listed] == [("work", "ok", 5)]
    assert ok("connectors", "pause", "work")["paused"] is True
    assert ok("connectors", "resume", "work")["paused"] is False

    doctor = ok("doctor")
    assert [(c["name"], c["items_stored"]) for c in doctor["connectors"]] == [("work", 5)]

    # Errors: one line with a code, no traceback.
    unknown = mama("connectors", "poll", "nope")
    assert unknown.returncode != 0
    assert unknown.stderr.strip().splitlines() == [
        "mama: connector_not_found: There is no connector 'nope' (connectors: work)."
    ]
    fake.rate_limit_next = 1
    limited = mama("connectors", "poll", "work")
    assert limited.returncode != 0
    assert limited.stderr.startswith("mama: connector_failed: work: rate_limited: ")
    assert len(limited.stderr.strip().splitlines()) == 1
    twice = mama("connectors", "add", "trello", "work", "-o", "boards=X")
    assert "connector_exists" in twice.stderr
    no_kind = mama("connectors", "add", "fax", "office")
    assert "connector_unavailable" in no_kind.stderr

    removed = ok("connectors", "remove", "work")
    assert removed == {"removed": "work", "observations_kept": 5}
    assert ok("connectors", "list")["connectors"] == []
    kept = ok("observations", "list", "--source", "trello:owner")
    assert len(kept["observations"]) == 5  # removing stops it; what it stored stays
