"""A purge reaches every copy MAMA makes, as a person runs it (``mama purge``).

Real parts: the encrypted store in a data folder; the app's migration series'
backup made as the tray, the daemon and ``mama brief now`` make it
(``open_runtime_db``); a mail polled from the real Dovecot with MAMA's log at
DEBUG (where imapclient writes the message); the owner's ``/search`` kept as an
observation; ``mama export --out``; the files the agent CLIs keep of MAMA's
conversations, where they keep them (Claude Code's project folder, a Codex
rollout). ``mama doctor`` lists these copies; then ``mama purge`` (a separate
process) erases the memory, its quotes and the mail. After it, every file under
the data folder, the agents' config folders, the export's folder and the cache
is searched — the SQLCipher files decrypted page by page with the key — and no
purged word is found, while the unpurged memory's word still is (the control).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import subprocess
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from app.admin.connectors import open_connector_store, poll_connector
from app.backends.transcripts import CLAUDE_SESSION_KEY, CODEX_THREAD_KEY
from app.durable.mailbox import record_observation
from app.durable.schema import open_runtime_db
from app.durable.state import set_state
from app.local.logs import setup_file_logging
from app.local.settings import ConnectorConfig
from mama_core.store import DbKey, Store
from mama_core.store.copies import store_backups
from tests.app.connectors.dovecot_server import PASSWORD, Dovecot, running_dovecot
from tests.app.connectors.mail_fixtures import append
from tests.app.runtime.support import MAMA, mama_env
from tests.conftest import TEST_KEY_HEX
from tests.mama_core.memory.test_purge_erasure import (
    decrypted_file,
    decrypted_wal,
    found_words,
)

MEMORY_WORDS = ["quagmirette", "zephyrbloom"]
MAIL_WORDS = ["narwhalian", "xylophonic"]  # the mail's subject, its Message-ID
CONTROL = "wombatique"
SESSION = "3f1d6c9e-1111-4222-8333-944455556666"
THREAD = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"
BIG_FILE = 20_000_000
"""The built GGUF models in the shared cache: bigger than this, and never written here."""


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    with running_dovecot() as running:
        yield running


def the_mail() -> bytes:
    msg = EmailMessage()
    msg["From"] = "Bob <bob@example.org>"
    msg["To"] = "owner@example.com"
    msg["Subject"] = "The narwhalian invoice"
    msg["Date"] = "Mon, 30 Nov 2026 09:00:00 +0000"
    msg["Message-ID"] = "<xylophonic-77@example.org>"
    msg.set_content("Please pay the narwhalian invoice by Friday.")
    return msg.as_bytes()


class Folders:
    def __init__(self, root: Path, cache: Path) -> None:
        self.home = root / "home"
        self.claude = root / "claude-config"
        self.codex = root / "codex-home"
        self.exports = root / "exports"
        self.cache = cache
        self.env = mama_env(
            self.home,
            cache,
            CLAUDE_CONFIG_DIR=str(self.claude),
            CODEX_HOME=str(self.codex),
            HOME=str(root / "user"),
        )

    def mama(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(
            [str(MAMA), *args, "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def searched(self) -> tuple[list[bytes], dict[str, bytes]]:
        """Decrypted pages of every SQLCipher file, and the bytes of every other file."""
        key = bytes.fromhex(TEST_KEY_HEX)
        pages: list[bytes] = []
        plain: dict[str, bytes] = {}
        for root in (self.home, self.claude, self.codex, self.exports, self.cache):
            for path in root.rglob("*"):
                if not path.is_file() or path.stat().st_size > BIG_FILE:
                    continue
                if path.name.startswith("mama.db") and path.name.endswith("-wal"):
                    pages += decrypted_wal(path, key)
                elif path.name == "mama.db" or path.suffix == ".bak":
                    pages += decrypted_file(path, key)
                elif not path.name.endswith("-shm"):
                    plain[str(path)] = path.read_bytes().lower()
        return pages, plain


def holding(plain: dict[str, bytes], words: list[str]) -> dict[str, list[str]]:
    return {
        path: hits
        for path, data in plain.items()
        if (hits := [w for w in words if w.encode() in data])
    }


@pytest.fixture
def debug_log(tmp_path: Path) -> Iterator[Path]:
    root = logging.getLogger()
    level, before = root.level, list(root.handlers)
    path = setup_file_logging(tmp_path / "home" / "logs" / "mama.log", logging.DEBUG)
    assert path is not None
    yield path
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def test_a_purge_reaches_every_copy_and_doctor_lists_them(
    tmp_path: Path, model_cache_dir: Path, dovecot: Dovecot, debug_log: Path
) -> None:
    f = Folders(tmp_path, model_cache_dir)
    f.exports.mkdir()
    f.mama("verify")  # creates the store
    secret = f.mama("remember", "The quagmirette vault opens with zephyrbloom", "--kind", "fact")
    f.mama("remember", f"The {CONTROL} garden is green", "--kind", "fact")

    server = dataclasses.replace(dovecot, user="copies@example.com")
    append(server, the_mail())
    with Store.open(f.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        # What the tray, the daemon and `mama brief now` do first: the app's series.
        open_runtime_db(store).close()
        app_backups = [p.name for p in store_backups(store.path)]
        mail = ConnectorConfig(name="work-mail", kind="mail", options=server.options())
        with open_connector_store(store) as connectors:
            polled = asyncio.run(
                poll_connector(mail, connectors, secret={"password": PASSWORD}.get)
            )
        search = record_observation(
            store.conn, "telegram", "4242:9", "owner", "/search quagmirette", "2026-12-01"
        )
        db = open_runtime_db(store)
        try:
            set_state(db, CLAUDE_SESSION_KEY, SESSION)
            set_state(db, CODEX_THREAD_KEY, THREAD)
        finally:
            db.close()
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert polled["stored"] == 1 and any(".app-v" in name for name in app_backups)
    assert "narwhalian" in debug_log.read_text("utf-8").lower()  # imapclient logged the mail

    # What the agent CLIs keep of MAMA's conversations, where they keep them.
    workdir = (f.home / "agent" / "claude").resolve()
    project = f.claude / "projects" / "".join(c if c.isalnum() else "-" for c in str(workdir))
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_text('{"said": "the quagmirette vault"}\n')
    rollout = (
        f.codex / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01T09-00-00-{THREAD}.jsonl"
    )
    rollout.parent.mkdir(parents=True)
    rollout.write_text('{"said": "zephyrbloom, and the narwhalian invoice"}\n')
    f.mama("export", "--out", str(f.exports / "all.jsonl"))

    copies = f.mama("doctor")["copies"]
    kinds = {c["kind"] for c in copies}
    assert kinds == {"store_backup", "export", "log", "claude_transcript", "codex_rollout"}
    pages, plain = f.searched()
    assert found_words(pages, MEMORY_WORDS + MAIL_WORDS) == set(MEMORY_WORDS + MAIL_WORDS)
    assert holding(plain, [MEMORY_WORDS[0]])  # in the export, the transcript, the log

    mail_id = next(
        o["id"] for o in f.mama("observations", "list")["observations"] if o["id"] != search
    )
    purged = f.mama("purge", str(secret["judgment_id"]), "--with-quotes", "--yes")
    assert search in purged["observations_purged"]  # the owner's /search was a quote
    f.mama("purge", "--observation", str(mail_id), "--yes")

    pages, plain = f.searched()
    assert found_words(pages, [CONTROL]) == {CONTROL}  # the control: still found
    assert found_words(pages, MEMORY_WORDS + MAIL_WORDS) == set()
    assert holding(plain, MEMORY_WORDS + MAIL_WORDS + ["<xylophonic-77"]) == {}
    assert store_backups(f.home / "mama.db") == [] and not (f.exports / "all.jsonl").exists()
    left = {c["kind"] for c in f.mama("doctor")["copies"]}
    assert left <= {"log"}  # the log is there again, emptied and written since
