"""kill -9 during a poll loses no item, stores none twice, and posts each in one turn.

A real ``mama daemon`` subprocess polls one connector at a 1 s interval:

- Trello against the fake Trello API (2,000 actions, 100 per page);
- Slack through ``slack-sdk`` against the fake Slack Web API (1,900 messages and
  100 thread replies, 100 per page);
- mail through ``imapclient`` from a real Dovecot over TLS (2,000 emails; a
  counting TCP relay in front of it shows the requests served).

It is SIGKILLed at a random point of its polling — after a random number of the
source's requests and a random short delay — ``MAMA_CRASH_KILLS`` times per source
(default 6; the issue's 50 is ``MAMA_CRASH_KILLS=50``). When everything is read
before the kills are done, the source gets 100 new items (Slack: new messages and
new replies in old threads; mail: new emails), so each kill has work to interrupt.
A last daemon then reads to the end. Afterwards every item is exactly one
observation, every observation is in exactly one mailbox input, and ``mama
verify`` passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mama_core.store import DbKey, Store
from tests.app.connectors.dovecot_server import PASSWORD, dovecot_binary, running_dovecot
from tests.app.connectors.fake_slack import FakeSlack
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.app.connectors.mail_fixtures import imap_session, plain
from tests.app.runtime.support import MAMA, mama_env
from tests.conftest import TEST_KEY_HEX

REPO_ROOT = Path(__file__).resolve().parents[3]
ITEMS = 2000
KILLS = int(os.environ.get("MAMA_CRASH_KILLS", "6"))


@dataclass
class Feed:
    """One source as the crash test drives it (whatever its kind)."""

    source: str
    """``observations.source`` of its items."""
    connector: dict[str, Any]
    """The connector's entry in ``settings.json``."""
    secrets: dict[str, str]
    """Environment variables with its secrets."""
    served: Callable[[], int]
    """Requests the fake has answered so far."""
    expected: Callable[[], set[str]]
    """The external ids of every item the source holds now."""
    add_more: Callable[[], None]
    """Give the source 100 new items."""
    reach: int = 30
    """A kill comes after 1 to ``reach`` more requests (a few polls' worth)."""


def trello_feed() -> Iterator[Feed]:
    fake = FakeTrello()
    board = fake.add_board("Roadmap")
    fake.add_card_moves(board, ITEMS)
    url = fake.serve()

    def add_more() -> None:
        fake.add_card_moves(board, 100)

    try:
        yield Feed(
            source="trello:owner",
            connector={
                "name": "board",
                "kind": "trello",
                "interval_s": 1,
                "options": {
                    "boards": "Roadmap",
                    "base_url": url,
                    "since_days": 30,
                    "page_size": 100,
                },
            },
            secrets={"MAMA_CONNECTOR_BOARD_API_KEY": API_KEY, "MAMA_CONNECTOR_BOARD_TOKEN": TOKEN},
            served=lambda: len(fake.requests),
            expected=lambda: {str(a["id"]) for a in fake.actions[board]},
            add_more=add_more,
        )
    finally:
        fake.close()


@contextmanager
def serving(fake: FakeSlack) -> Iterator[str]:
    """The fake Slack on a loop of its own thread, so a daemon subprocess can reach it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fake-slack", daemon=True)
    thread.start()
    try:
        yield asyncio.run_coroutine_threadsafe(fake.start(), loop).result(30)
    finally:
        asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


def slack_feed() -> Iterator[Feed]:
    fake = FakeSlack()
    fake.add_user("U1", display_name="Ana")
    channel = fake.add_channel("general")
    parents = [fake.post(channel, "U1", f"thread {i}") for i in range(10)]
    for i in range(ITEMS - 110):
        fake.post(channel, "U1", f"message {i}")
    replies = 0

    def reply_round(count: int) -> None:
        nonlocal replies
        for _ in range(count):
            fake.reply(channel, parents[replies % len(parents)], "U1", f"reply {replies}")
            replies += 1

    def add_more() -> None:
        for i in range(90):
            fake.post(channel, "U1", f"later message {i}")
        reply_round(10)  # replies in old threads: read through the look-back window

    reply_round(100)

    def expected() -> set[str]:
        kept = [*fake.messages[channel], *(m for r in fake.replies.values() for m in r)]
        return {f"{channel}/{m['ts']}" for m in kept}

    with serving(fake) as url:
        yield Feed(
            source=f"slack:{fake.team_id}",
            connector={
                "name": "chat",
                "kind": "slack",
                "interval_s": 1,
                "options": {"channels": ["#general"], "base_url": url, "page_size": 100},
            },
            secrets={"MAMA_CONNECTOR_CHAT_TOKEN": fake.token},
            served=lambda: len(fake.calls),
            expected=expected,
            add_more=add_more,
        )


class CountingProxy:
    """A TCP relay to ``port`` on 127.0.0.1 that counts the server's replies (chunks it
    forwards to the client): Dovecot's requests served, for the kill points. TLS passes
    through untouched (the certificate names 127.0.0.1)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.replies = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="imap-relay", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.port))
            self._sockets += [client, upstream]
            for source, sink, counted in ((client, upstream, False), (upstream, client, True)):
                threading.Thread(
                    target=self._pump, args=(source, sink, counted), daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
                self.replies += counted
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
        for end in self._sockets:
            end.close()


def mail_feed() -> Iterator[Feed]:
    if dovecot_binary() is None:
        pytest.skip("dovecot is not installed (Debian package dovecot-imapd)")
    appended: list[str] = []

    def append_more(count: int) -> None:
        with imap_session(server) as imap:
            for _ in range(count):
                n = len(appended)
                message_id = f"<crash-{n}@example.org>"
                raw = plain(f"status {n}", f"message {n}", message_id=message_id)
                typ, data = imap.append('"INBOX"', None, None, raw)
                assert typ == "OK", data
                appended.append(f"INBOX/{message_id}")

    with running_dovecot() as server:
        append_more(ITEMS)
        relay = CountingProxy(server.port)
        try:
            yield Feed(
                source=f"mail:{server.user}",
                connector={
                    "name": "inbox",
                    "kind": "mail",
                    "interval_s": 1,
                    "options": server.options(port=relay.address),
                },
                secrets={"MAMA_CONNECTOR_INBOX_PASSWORD": PASSWORD},
                served=lambda: relay.replies,
                expected=lambda: set(appended),
                add_more=lambda: append_more(100),
                reach=120,  # about 25 replies a poll of 200 emails
            )
        finally:
            relay.close()


FEEDS = {"trello": trello_feed, "slack": slack_feed, "mail": mail_feed}


@pytest.fixture(params=sorted(FEEDS))
def feed(request: pytest.FixtureRequest) -> Iterator[Feed]:
    yield from FEEDS[request.param]()


def start_daemon(home: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(MAMA), "daemon"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def stored_items(db: Path, source: str) -> list[str]:
    """The external ids of ``source`` stored so far (a reader beside the daemon)."""
    if not db.exists():
        return []
    with Store.open(db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        return [
            str(r[0])
            for r in store.conn.execute(
                "SELECT external_id FROM observations WHERE source = ?", (source,)
            )
        ]


def wait_for(condition: threading.Event, timeout: float) -> bool:
    return condition.wait(timeout)


def test_kill_9_during_polls_loses_nothing_and_repeats_nothing(
    tmp_path: Path, model_cache_dir: Path, feed: Feed
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"connectors": [feed.connector]}))
    env = mama_env(home, model_cache_dir, PYTHONPATH=str(REPO_ROOT), **feed.secrets)
    db = home / "mama.db"
    rng = random.Random(int(os.environ.get("MAMA_CRASH_SEED", "14")))
    kills_mid_poll = 0
    progress: list[int] = []
    for _ in range(KILLS):
        if set(stored_items(db, feed.source)) == feed.expected():
            feed.add_more()  # all read: new work for the next kill
        target = feed.served() + rng.randint(1, feed.reach)
        reached = threading.Event()

        def watch(target: int = target, reached: threading.Event = reached) -> None:
            while not reached.is_set():
                if feed.served() >= target:
                    reached.set()
                    return
                reached.wait(0.005)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        proc = start_daemon(home, env)
        try:
            hit = reached.wait(120)
            # A random moment after the chosen request: inside the parse, the store's
            # transaction or the wait (which is the point of this test).
            threading.Event().wait(rng.uniform(0, 0.25))
        finally:
            reached.set()
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        kills_mid_poll += int(hit)
        progress.append(len(stored_items(db, feed.source)))
    print(f"{KILLS} kills, {kills_mid_poll} during a poll; stored after each: {progress}")
    # The daemon was polling at most kills (positive control of the kill points), and
    # some kills fell between batches of one read (the store moved between them).
    assert kills_mid_poll >= KILLS - 1
    expected = feed.expected()

    proc = start_daemon(home, env)
    try:
        deadline = time.monotonic() + 240
        while len(stored_items(db, feed.source)) < len(expected) and time.monotonic() < deadline:
            threading.Event().wait(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    with Store.open(db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        conn = store.conn
        rows = conn.execute(
            "SELECT id, external_id FROM observations WHERE source = ?", (feed.source,)
        ).fetchall()
        ids_by_item = {str(ext): int(oid) for oid, ext in rows}
        assert len(rows) == len(ids_by_item) == len(expected)  # none missing, none twice
        assert set(ids_by_item) == expected
        facets = conn.execute("SELECT count(*) FROM observation_facets").fetchone()[0]
        assert facets == len(expected)
        posted: list[int] = []
        for (meta,) in conn.execute(
            "SELECT meta FROM mailbox WHERE kind = 'source_delta'"
        ).fetchall():
            posted.extend(json.loads(meta)["observations"])
    assert sorted(posted) == sorted(ids_by_item.values())  # each in exactly one input

    verified = subprocess.run(
        [str(MAMA), "verify", "--json"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
