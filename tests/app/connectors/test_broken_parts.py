"""One broken channel, folder or board does not stop its source.

A part the owner picked that disappears (Slack ``channel_not_found``, a mail folder
deleted, a Trello board closed to the token) is shown as its own problem; the other
parts of the same connector keep flowing. Real parts: the scheduler and store on a
real encrypted file, the real slack-sdk against the fake Slack, a real Dovecot, the
``mama`` CLI as a subprocess against the fake Trello.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.connectors.base import Batch, Problem
from app.connectors.mail import build as build_mail
from app.durable.connector_store import ConnectorStore
from app.durable.transaction import RuntimeDb
from app.local.settings import ConnectorConfig
from app.runtime.connectors import ConnectorScheduler, PollSettings
from tests.app.connectors.dovecot_server import PASSWORD, Dovecot, dovecot_binary, running_dovecot
from tests.app.connectors.fake_slack import FakeSlack
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.app.connectors.mail_fixtures import append, create_folder, delete_folder, plain
from tests.app.runtime.support import MAMA, ManualClock, mama_env

REPO_ROOT = Path(__file__).resolve().parents[3]


def stored_texts(db: RuntimeDb) -> list[str]:
    with db.read() as conn:
        return [str(r[0]) for r in conn.execute("SELECT text FROM observations ORDER BY id")]


class Rounds:
    """The scheduler's wait: calls ``between(n)`` after the n-th poll; stops after ``last``."""

    def __init__(self, last: int, between: Callable[[int], None]) -> None:
        self.count = 0
        self.last = last
        self.between = between
        self.done = asyncio.Event()

    async def __call__(self, _seconds: float) -> None:
        self.count += 1
        if self.count >= self.last:
            self.done.set()
            await asyncio.Event().wait()  # parked until the scheduler stops
        self.between(self.count)


def test_a_slack_channel_removed_mid_run_stops_only_itself(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    store = ConnectorStore(app_db, clock)
    seen_after: dict[int, list[str]] = {}
    healths: list[str] = []

    async def scenario() -> None:
        fake = FakeSlack()
        await fake.start()
        executor = ThreadPoolExecutor(1)
        try:
            fake.add_user("U1", display_name="Ana")
            alpha, beta = fake.add_channel("alpha"), fake.add_channel("beta")
            fake.post(alpha, "U1", "alpha before", ago=60)
            fake.post(beta, "U1", "beta before", ago=60)
            config = ConnectorConfig(
                name="work-slack",
                kind="slack",
                interval_s=60,
                options={"channels": ["#alpha", "#beta"], "base_url": fake.url},
            )

            def between(n: int) -> None:
                seen_after[n] = stored_texts(app_db)
                if n == 1:  # #alpha is deleted in Slack; #beta goes on talking
                    del fake.channels[alpha]
                    fake.post(beta, "U1", "beta after", ago=1)
                if n == 2:
                    fake.post(beta, "U1", "beta later", ago=0.5)

            async def run_db(fn: Callable[..., Any], *args: Any) -> Any:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(executor, lambda: fn(*args))

            rounds = Rounds(3, between)
            scheduler = ConnectorScheduler(
                store,
                lambda: (config,),
                run_db,
                on_health=healths.append,
                secret_for=lambda _name: {"token": fake.token}.get,
                clock=clock,
                wait=rounds,
                settings=PollSettings(batch_limit=50),
                rng=random.Random(3),
            )
            await scheduler.start()
            try:
                await asyncio.wait_for(rounds.done.wait(), 60)
            finally:
                await scheduler.stop()
        finally:
            executor.shutdown()
            await fake.stop()

    asyncio.run(scenario())
    # Control: before the removal both channels flow.
    assert sorted(seen_after[1]) == ["alpha before", "beta before"]
    # After it, #beta's new messages are still stored, poll after poll.
    assert seen_after[2][2:] == ["beta after"]
    assert stored_texts(app_db)[2:] == ["beta after", "beta later"]
    health = store.health("work-slack")
    assert health is not None and health.state == "ok"  # the source as a whole works
    assert [(p.part, p.problem) for p in health.parts] == [("#alpha", Problem.NOT_FOUND)]
    assert "not found" in health.parts[0].message
    assert health.needs_owner
    assert "cannot read #alpha not_found: Slack channel #alpha not found" in health.line()
    assert health.to_wire()["parts"][0]["part"] == "#alpha"
    assert healths.count("work-slack") >= 2  # new items, then the broken channel


def test_a_slack_channel_that_comes_back_is_read_again_and_its_problem_cleared(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    async def scenario() -> None:
        fake = FakeSlack()
        await fake.start()
        store = ConnectorStore(app_db, clock)
        connector = None
        try:
            from app.connectors.slack import build

            fake.add_user("U1", display_name="Ana")
            alpha, beta = fake.add_channel("alpha"), fake.add_channel("beta")
            secrets = {"token": fake.token}
            options = {"channels": ["#alpha", "#beta"], "base_url": fake.url}
            connector = build("work-slack", options, secrets.get)
            fake.post(beta, "U1", "beta one", ago=5)
            hidden = fake.channels.pop(alpha)  # gone before the first poll: not in the list
            first = await connector.poll(None, 50)
            assert [i.text for i in first.items] == ["beta one"]
            assert [p.part for p in first.problems] == ["#alpha"]
            store.store_batch("work-slack", "slack", first)
            assert [p.part for p in (store.health("work-slack") or _none()).parts] == ["#alpha"]
            fake.channels[alpha] = hidden  # back (unarchived)
            fake.post(alpha, "U1", "alpha back", ago=1)
            second = await connector.poll(first.cursor, 50)
            assert [i.text for i in second.items] == ["alpha back"]
            assert second.problems == ()
            store.store_batch("work-slack", "slack", second)
            assert (store.health("work-slack") or _none()).parts == ()
        finally:
            if connector is not None:
                await connector.aclose()
            await fake.stop()

    asyncio.run(scenario())


def _none() -> Any:
    raise AssertionError("no health")


# --- mail: a folder deleted on a real Dovecot -------------------------------------


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    if dovecot_binary() is None:
        pytest.skip("dovecot is not installed (Debian package dovecot-imapd; .ci/run installs it)")
    with running_dovecot() as running:
        yield running


def test_a_mail_folder_deleted_stops_only_itself(dovecot: Dovecot) -> None:
    server = dataclasses.replace(dovecot, user="parts@example.com")
    create_folder(server, "Projects")
    append(server, plain("inbox before"))
    append(server, plain("projects before"), folder="Projects")
    connector = build_mail(
        "work-mail",
        server.options(folders=["Projects", "INBOX"]),
        lambda key: PASSWORD if key == "password" else None,
    )

    async def poll(cursor: str | None) -> Batch:
        return await connector.poll(cursor, 100)

    try:
        first = asyncio.run(poll(None))
        subjects = sorted(str(i.metadata["subject"]) for i in first.items)
        assert subjects == ["inbox before", "projects before"]  # control: both flow
        assert first.problems == ()
        delete_folder(server, "Projects")
        append(server, plain("inbox after"))
        second = asyncio.run(poll(first.cursor))
        assert [i.metadata["subject"] for i in second.items] == ["inbox after"]
        assert [(p.part, p.problem) for p in second.problems] == [("Projects", Problem.NOT_FOUND)]
        assert second.problems[0].message == "folder 'Projects' does not exist on 127.0.0.1"
    finally:
        asyncio.run(connector.aclose())


# --- Trello, through the CLI the owner runs: poll, list, doctor ------------------------


def test_a_trello_board_gone_is_its_own_problem_in_list_and_doctor(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    fake = FakeTrello()
    roadmap = fake.add_board("Roadmap")
    sprint = fake.add_board("Sprint")
    fake.add_card_moves(roadmap, 2)
    fake.add_card_moves(sprint, 3)
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

    def ok(*args: str) -> dict[str, Any]:
        done = mama(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    try:
        ok(
            "connectors",
            "add",
            "trello",
            "work",
            "-o",
            "boards=Roadmap,Sprint",
            "-o",
            f"base_url={url}",
        )
        first = ok("connectors", "poll", "work")
        assert (first["stored"], first["more"]) == (5, False)  # control: both boards flow
        listed = ok("connectors", "list")["connectors"][0]
        assert listed["parts"] == []

        del fake.boards[sprint], fake.actions[sprint]  # the Sprint board is deleted
        fake.add_card_moves(roadmap, 1)
        second = ok("connectors", "poll", "work")
        assert second["stored"] == 1  # Roadmap still flows
        listed = ok("connectors", "list")["connectors"][0]
        assert listed["state"] == "ok"
        assert [(p["part"], p["code"]) for p in listed["parts"]] == [("Sprint", "not_found")]

        human = mama("connectors", "list")
        assert human.returncode == 0, human.stderr
        assert "cannot read Sprint not_found: No Trello board 'Sprint'" in human.stdout

        doctor = mama("doctor")
        assert doctor.returncode == 0, doctor.stderr
        assert "\\x0a" not in doctor.stdout  # each connector on its own line
        lines = doctor.stdout.splitlines()
        at = lines.index("connectors:")
        assert lines[at + 1].startswith("  work (trello): ok, 6 items")
        assert "cannot read Sprint" in lines[at + 1]
        assert ok("doctor")["connectors"][0]["parts"][0]["part"] == "Sprint"
    finally:
        fake.close()
