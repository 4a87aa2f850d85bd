"""kill -9 during a poll loses no item, stores none twice, and posts each in one turn.

A real ``mama daemon`` subprocess polls a Trello connector pointed at the fake
Trello API (2,000 actions, 100 per page, a 1 s interval) and is SIGKILLed at a
random point of its polling — after a random number of the fake's page requests
and a random short delay — ``MAMA_CRASH_KILLS`` times (default 6; the issue's
50 is ``MAMA_CRASH_KILLS=50``). When everything is read before the kills are
done, the fake gets 100 new actions, so each kill has work to interrupt. A last
daemon then reads to the end. Afterwards
every action is exactly one observation, every observation is in exactly one
mailbox input, and ``mama verify`` passes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mama_core.store import DbKey, Store
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.app.runtime.support import MAMA, mama_env
from tests.conftest import TEST_KEY_HEX

REPO_ROOT = Path(__file__).resolve().parents[3]
ITEMS = 2000
KILLS = int(os.environ.get("MAMA_CRASH_KILLS", "6"))


@pytest.fixture
def fake() -> Iterator[FakeTrello]:
    server = FakeTrello()
    server.add_card_moves(server.add_board("Roadmap"), ITEMS)
    yield server
    server.close()


def start_daemon(home: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(MAMA), "daemon"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def stored_actions(db: Path) -> list[str]:
    """The Trello action ids stored so far (a reader beside the daemon)."""
    if not db.exists():
        return []
    with Store.open(db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        return [
            str(r[0])
            for r in store.conn.execute(
                "SELECT external_id FROM observations WHERE source = 'trello:owner'"
            )
        ]


def wait_for(condition: threading.Event, timeout: float) -> bool:
    return condition.wait(timeout)


def test_kill_9_during_polls_loses_nothing_and_repeats_nothing(
    tmp_path: Path, model_cache_dir: Path, fake: FakeTrello
) -> None:
    url = fake.serve()
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps(
            {
                "connectors": [
                    {
                        "name": "board",
                        "kind": "trello",
                        "interval_s": 1,
                        "options": {
                            "boards": "Roadmap",
                            "base_url": url,
                            "since_days": 30,
                            "page_size": 100,
                        },
                    }
                ]
            }
        )
    )
    env = mama_env(
        home,
        model_cache_dir,
        MAMA_CONNECTOR_BOARD_API_KEY=API_KEY,
        MAMA_CONNECTOR_BOARD_TOKEN=TOKEN,
        PYTHONPATH=str(REPO_ROOT),
    )
    rng = random.Random(int(os.environ.get("MAMA_CRASH_SEED", "14")))
    board = next(iter(fake.actions))
    kills_mid_poll = 0
    progress: list[int] = []
    for _ in range(KILLS):
        if len(set(stored_actions(home / "mama.db"))) == len(fake.actions[board]):
            fake.add_card_moves(board, 100)  # all read: new work for the next kill
        served = len(fake.requests)
        target = served + rng.randint(1, 30)
        reached = threading.Event()

        def watch(target: int = target, reached: threading.Event = reached) -> None:
            while not reached.is_set():
                if len(fake.requests) >= target:
                    reached.set()
                    return
                reached.wait(0.005)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        proc = start_daemon(home, env)
        try:
            hit = reached.wait(120)
            # A random moment after the chosen page: inside the parse, the store's
            # transaction or the wait (which is the point of this test).
            threading.Event().wait(rng.uniform(0, 0.25))
        finally:
            reached.set()
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        kills_mid_poll += int(hit)
        progress.append(len(stored_actions(home / "mama.db")))
    print(f"{KILLS} kills, {kills_mid_poll} during a poll; stored after each: {progress}")
    # The daemon was polling at most kills (positive control of the kill points), and
    # some kills fell between batches of one read (the store moved between them).
    assert kills_mid_poll >= KILLS - 1
    total = len(fake.actions[board])

    proc = start_daemon(home, env)
    try:
        deadline = time.monotonic() + 240
        while len(stored_actions(home / "mama.db")) < total and time.monotonic() < deadline:
            threading.Event().wait(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    expected = {str(a["id"]) for a in fake.actions[board]}
    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        conn = store.conn
        rows = conn.execute(
            "SELECT id, external_id FROM observations WHERE source = 'trello:owner'"
        ).fetchall()
        ids_by_action = {str(ext): int(oid) for oid, ext in rows}
        assert len(rows) == len(ids_by_action) == total  # none missing, none twice
        assert set(ids_by_action) == expected
        facets = conn.execute("SELECT count(*) FROM observation_facets").fetchone()[0]
        assert facets == total
        posted: list[int] = []
        for (meta,) in conn.execute(
            "SELECT meta FROM mailbox WHERE kind = 'source_delta'"
        ).fetchall():
            posted.extend(json.loads(meta)["observations"])
    assert sorted(posted) == sorted(ids_by_action.values())  # each in exactly one input

    verified = subprocess.run(
        [str(MAMA), "verify", "--json"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
