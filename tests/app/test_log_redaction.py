"""No secret in any log: each connector polled against its fake server (Trello, Slack,
the real Dovecot for mail) and the Telegram gateway against the fake Bot API, with
MAMA's own file logging at DEBUG (so ``httpx``, ``httpcore``, ``telegram`` …
log every request). After the poll no secret value is in any file under the test's
data folder; the control: the poll happened and the log holds the request line,
with the secret redacted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.admin.connectors import open_connector_store, poll_connector
from app.local.log_redaction import REDACTED, redact, register_secret
from app.local.logs import setup_file_logging
from app.local.settings import ConnectorConfig
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.connectors.dovecot_server import PASSWORD, Dovecot, running_dovecot
from tests.app.connectors.fake_slack import FakeSlack
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.app.connectors.mail_fixtures import append, plain
from tests.app.runtime.support import clock, embedder, engine, store
from tests.app.telegram.stack import messenger

__all__ = ["clock", "embedder", "engine", "store"]


@pytest.fixture
def log_file(db_path: Path) -> Iterator[Path]:
    """MAMA's rotating log in the data folder, at DEBUG, for this test only."""
    root = logging.getLogger()
    level, before = root.level, list(root.handlers)
    path = setup_file_logging(db_path.parent / "logs" / "mama.log", logging.DEBUG)
    assert path is not None
    yield path
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def files_holding(folder: Path, secrets: list[str]) -> dict[str, list[str]]:
    """Every file under ``folder`` that holds one of ``secrets``, with which."""
    for handler in logging.getLogger().handlers:
        handler.flush()
    found: dict[str, list[str]] = {}
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits = [s for s in secrets if s.encode() in data]
            if hits:
                found[str(path)] = hits
    return found


def poll(store: Store, config: ConnectorConfig, secrets: dict[str, str]) -> dict[str, object]:
    def run() -> dict[str, object]:
        with open_connector_store(store) as connectors:
            return asyncio.run(poll_connector(config, connectors, secret=secrets.get))

    return run()


def test_trello_key_and_token_never_reach_the_log(
    store: Store, log_file: Path, tmp_path: Path
) -> None:
    fake = FakeTrello()
    try:
        fake.add_card_moves(fake.add_board("Roadmap"), 3)
        url = fake.serve()
        config = ConnectorConfig(
            name="work", kind="trello", options={"boards": "Roadmap", "base_url": url}
        )
        polled = poll(store, config, {"api_key": API_KEY, "token": TOKEN})
    finally:
        fake.close()

    assert polled["stored"] == 3  # the poll happened
    text = log_file.read_text("utf-8")
    assert "HTTP Request: GET" in text and f"key={REDACTED}" in text
    assert f"token={REDACTED}" in text
    assert files_holding(tmp_path, [API_KEY, TOKEN]) == {}


def test_the_slack_token_never_reaches_the_log(
    store: Store, log_file: Path, tmp_path: Path
) -> None:
    async def serve() -> dict[str, object]:
        fake = FakeSlack()
        await fake.start()
        try:
            channel = fake.add_channel("ops")
            fake.post(channel, "U1", "the deploy is green")
            config = ConnectorConfig(
                name="work-slack",
                kind="slack",
                options={"channels": ["ops"], "base_url": fake.url},
            )
            secrets = {"token": fake.token}
            held["token"] = fake.token

            def run() -> dict[str, object]:
                with open_connector_store(store) as connectors:
                    return asyncio.run(poll_connector(config, connectors, secret=secrets.get))

            return await asyncio.to_thread(run)
        finally:
            await fake.stop()

    held: dict[str, str] = {}
    polled = asyncio.run(serve())
    assert polled["stored"] == 1
    text = log_file.read_text("utf-8")
    assert "conversations.history" in text  # the request was logged ...
    assert files_holding(tmp_path, [held["token"]]) == {}  # ... without the token


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    with running_dovecot() as running:
        yield running


def test_the_mail_password_never_reaches_the_log(
    store: Store, log_file: Path, tmp_path: Path, dovecot: Dovecot
) -> None:
    server = dataclasses.replace(dovecot, user="redaction@example.com")
    append(server, plain("Quarterly numbers"))
    config = ConnectorConfig(name="work-mail", kind="mail", options=server.options())
    polled = poll(store, config, {"password": PASSWORD})

    assert polled["stored"] == 1
    text = log_file.read_text("utf-8")
    assert "LOGIN" in text and "Logged in as" in text  # imapclient logged the session
    assert files_holding(tmp_path, [PASSWORD]) == {}


def test_the_telegram_token_never_reaches_the_log(
    engine: Engine, store: Store, log_file: Path, tmp_path: Path
) -> None:
    from app.backends.command_mode import CommandModeBackend

    seen: dict[str, str] = {}

    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as stack:
            seen["token"] = stack.api.token
            await stack.pair()  # getUpdates and sendMessage, each an HTTP request

    asyncio.run(scenario())
    text = log_file.read_text("utf-8")
    assert "getUpdates" in text and f"/bot{REDACTED}/" in text  # the control
    assert files_holding(tmp_path, [seen["token"]]) == {}


def test_exception_text_and_known_values_are_redacted_for_every_handler(
    log_file: Path, tmp_path: Path
) -> None:
    secret = "s3cr3t-value-held-in-memory"
    register_secret(secret)
    third_party = logging.getLogger("aiohttp.client")
    try:
        raise ValueError(f"login failed for https://x.example/?password={secret}")
    except ValueError:
        third_party.exception("request failed with %s", secret)
    logging.getLogger("slack_sdk").debug("headers: {'Authorization': 'Bearer xoxb-1-abcdef'}")
    text = log_file.read_text("utf-8")
    assert "request failed with [redacted]" in text and "ValueError: login failed" in text
    assert "xoxb-1-abcdef" not in text and "Authorization" in text
    assert files_holding(tmp_path, [secret]) == {}
    # The same rule, outside any handler: ordinary words stay.
    assert redact("the key point and the token budget") == "the key point and the token budget"
