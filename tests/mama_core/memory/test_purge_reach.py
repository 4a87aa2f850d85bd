"""Purge reaches every place the text lives: observations, the messages that quote a
memory, the WAL while another process reads, and the backups.

After each case every page of ``mama.db``, of ``mama.db-wal`` and of every backup is
decrypted (the page decryption of ``test_purge_erasure``) and none of the purged
words is found, beside a control word that is found by the same search.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from app.durable.journal import reply_observations
from mama_core.embeddings import Embedder
from mama_core.errors import CommandConflictError
from mama_core.memory import Engine, EngineConfig, Grant, NotFoundError, SessionFacts
from mama_core.memory.dispatcher import no_replies
from mama_core.memory.observation_erasure import find_observation
from mama_core.memory.purge_pending import PendingPurge, backups_of, pending_purge
from mama_core.session import ActorKind, TurnKind
from mama_core.store import DbKey, Store
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, save
from tests.mama_core.memory.test_purge_erasure import (
    CONTROL_WORD,
    decrypted_file,
    decrypted_wal,
    found_words,
)

SECRET = ["quagmirette", "zephyrbloom", "narwhalian"]
SETTLE_TIMEOUT = 30.0


@pytest.fixture
def raw_key(db_key: DbKey) -> bytes:
    return bytes.fromhex(db_key.reveal())


def every_page(store: Store, key: bytes) -> list[bytes]:
    """Every decrypted page of the file, its WAL and every backup of it."""
    path = store.path
    pages = decrypted_file(path, key) + decrypted_wal(path.with_name(path.name + "-wal"), key)
    for backup in backups_of(path):
        pages += decrypted_file(backup, key)
    return pages


def pending(store: Store) -> PendingPurge | None:
    """The pending-purge mark, read on a connection of its own."""
    conn = store.new_connection()
    try:
        return pending_purge(conn)
    finally:
        conn.close()


def observe(engine: Engine, external_id: str, text: str, author: str = "owner") -> int:
    receipt = engine.dispatch(
        "observation.record",
        {"source": "telegram", "external_id": external_id, "author": author, "text": text},
        OWNER,
        OWNER_GRANT,
    )
    return int(receipt["observation_id"])


def owner(engine: Engine, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    return engine.dispatch(action, payload, OWNER, OWNER_GRANT)


def test_observations_are_listed_read_and_purged_by_id(engine: Engine, raw_key: bytes) -> None:
    kept = observe(engine, "1", f"lunch at the {CONTROL_WORD} place")
    first = observe(engine, "2", "my quagmirette pin is 4417", author="narwhalian")
    second = observe(engine, "3", "the zephyrbloom salary")

    listed = owner(engine, "observation.list", {})["observations"]
    assert [o["id"] for o in listed] == [second, first, kept]
    assert owner(engine, "observation.read", {"id": first})["observation"]["text"] == (
        "my quagmirette pin is 4417"
    )
    receipt = owner(
        engine, "memory.purge", {"observation_ids": [first, second], "reason": "private"}
    )
    assert receipt["observations_purged"] == [first, second]
    assert receipt["wal"] == "truncated" and receipt["purge_pending"] is False

    assert [o["id"] for o in owner(engine, "observation.list", {})["observations"]] == [kept]
    shown = owner(engine, "observation.read", {"id": first})["observation"]
    assert shown["purged"] and shown["text"] == "" and shown["author"] == ""
    pages = every_page(engine.store, raw_key)
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, SECRET) == set()


def test_memory_and_the_messages_quoting_it_go_in_one_purge(engine: Engine, raw_key: bytes) -> None:
    said = observe(engine, "10", "/remember The quagmirette code opens the zephyrbloom door")
    reply = observe(engine, "11", "Saved #1: the  Quagmirette code opens the zephyrbloom DOOR.")
    unrelated = observe(engine, "12", f"The {CONTROL_WORD} door is blue")
    target = save(engine, "The quagmirette code opens the zephyrbloom door")["judgment_id"]
    control = save(engine, f"The {CONTROL_WORD} door is blue")["judgment_id"]

    quotes = owner(engine, "memory.quotes", {"id": target})["observations"]
    assert [(q["id"], q["why"]) for q in quotes] == [(said, ["text"]), (reply, ["text"])]
    # The same read finds the control memory's quote: the matcher does find things.
    control_quotes = owner(engine, "memory.quotes", {"id": control})["observations"]
    assert [q["id"] for q in control_quotes] == [unrelated]

    # All or nothing: an unknown observation refuses the whole purge.
    with pytest.raises(NotFoundError):
        owner(engine, "memory.purge", {"id": target, "observation_ids": [said, 999], "reason": "x"})
    assert owner(engine, "memory.read", {"id": target})["record"]["status"] == "active"

    receipt = owner(
        engine,
        "memory.purge",
        {"id": target, "observation_ids": [q["id"] for q in quotes], "reason": "a door code"},
    )
    assert receipt["purged"] == [target]
    assert receipt["observations_purged"] == [said, reply]
    events = owner(engine, "memory.read", {"id": target})["events"]
    purge_event = events[-1]
    assert [o["id"] for o in purge_event["payload"]["observations"]] == [said, reply]
    assert owner(engine, "memory.quotes", {"id": target})["observations"] == []

    pages = every_page(engine.store, raw_key)
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, SECRET) == set()


def test_quotes_include_the_source_message_and_the_reply_of_its_turn(
    store: Store, embedder: Embedder
) -> None:
    # The reply is found through the app's read of its runtime's tables, given to the
    # engine as the host does (the core does not name those tables).
    with Engine(store, embedder, EngineConfig(), replies=reply_observations) as engine:
        said = observe(engine, "20", "please note what I said about the lab")
        answer = observe(engine, "21", "Noted.", author="mama")
        other = observe(engine, "22", "unrelated", author="mama")
        conn = store.new_connection()
        try:  # the runtime's tables, as the mailbox and the journal write them
            input_id = conn.execute(
                "INSERT INTO mailbox (kind, source_ref, observation_id, priority, state, "
                "available_at, created_at) VALUES ('owner_message', 'telegram:20', ?, 0, 'done', "
                "'x', 'x')",
                (said,),
            ).lastrowid
            conn.execute(
                "INSERT INTO deliveries (kind, input_id, observation_id, dedup_key, state, "
                "available_at, created_at) VALUES ('reply', ?, ?, 'reply:1', 'sent', 'x', 'x')",
                (input_id, answer),
            )
            # An engine without the app's runtime finds no reply; the app's read does.
            assert no_replies(conn, [said]) == []
            assert reply_observations(conn, [said]) == [answer]
        finally:
            conn.close()
        turn = SessionFacts(
            actor_kind=ActorKind.AGENT,
            actor_name="claude-code",
            turn=TurnKind.OWNER_MESSAGE,
            source_refs=(f"obs:{said}", "telegram:20"),
        )
        jid = save(engine, "The lab closes at six", session=turn, grant=Grant.agent(["global"]))[
            "judgment_id"
        ]
        quotes = owner(engine, "memory.quotes", {"id": jid})["observations"]
        assert [(q["id"], q["why"]) for q in quotes] == [(said, ["source"]), (answer, ["reply"])]
        assert other not in [q["id"] for q in quotes]


@pytest.fixture
def reader_process(store: Store, db_key: DbKey) -> Iterator[subprocess.Popen[str]]:
    """Another process holding a read transaction open on the store until told to stop."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from mama_core.store.connection import connect\n"
        "from mama_core.store.keys import DbKey\n"
        "c = connect(Path(sys.argv[1]), DbKey.from_secret(os.environ['READER_KEY']))\n"
        "c.execute('BEGIN')\n"
        "c.execute('SELECT count(*) FROM judgments').fetchone()\n"
        "print('reading', flush=True)\n"
        "sys.stdin.read()\n"
        "c.execute('COMMIT')\n"
        "c.close()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(store.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "READER_KEY": db_key.reveal()},
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "reading"
        yield process
    finally:
        release(process)


def release(process: subprocess.Popen[str]) -> None:
    """Let the reader end its transaction and exit."""
    assert process.stdin is not None and process.stdout is not None
    if not process.stdin.closed:
        process.stdin.close()
    process.wait(timeout=30)
    process.stdout.close()


def test_a_reader_in_another_process_delays_the_wal_truncation_not_the_erasure(
    engine: Engine, raw_key: bytes, store: Store, reader_process: subprocess.Popen[str]
) -> None:
    save(engine, f"The {CONTROL_WORD} stays")
    target = save(engine, "The quagmirette zephyrbloom narwhalian plan")["judgment_id"]

    receipt = owner(engine, "memory.purge", {"id": target, "reason": "forget it"})
    assert receipt["wal"] == "pending" and receipt["purge_pending"] is True
    assert pending(store) is not None
    # The reader really blocks: the old pages still hold the words.
    assert found_words(every_page(store, raw_key), SECRET) == set(SECRET)

    release(reader_process)
    assert engine.purge_retry.settled.wait(SETTLE_TIMEOUT)
    assert pending(store) is None
    pages = every_page(store, raw_key)
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, SECRET) == set()


def test_a_pending_purge_left_by_an_exited_process_is_finished_by_the_next_engine(
    engine: Engine,
    embedder: Embedder,
    raw_key: bytes,
    store: Store,
    reader_process: subprocess.Popen[str],
) -> None:
    save(engine, f"The {CONTROL_WORD} stays")
    target = save(engine, "The quagmirette zephyrbloom narwhalian plan")["judgment_id"]
    assert owner(engine, "memory.purge", {"id": target, "reason": "x"})["purge_pending"]
    engine.close()  # like `mama purge` exiting while the tray still reads
    assert pending(store) is not None

    release(reader_process)
    with Engine(store, embedder) as later:
        assert later.purge_retry.settled.wait(SETTLE_TIMEOUT)
    assert pending(store) is None
    pages = every_page(store, raw_key)
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, SECRET) == set()


def test_purge_deletes_the_backups_that_hold_the_text(
    engine: Engine, raw_key: bytes, store: Store
) -> None:
    save(engine, f"The {CONTROL_WORD} stays")
    target = save(engine, "The quagmirette zephyrbloom narwhalian plan")["judgment_id"]
    backup = store._copy_aside(store.schema_version)  # what Store.open does before a migration
    # ... and what the app's series does before its own (``open_runtime_db``).
    app_backup = store.copy_aside("app-v0", store.conn)
    for copy in (backup, app_backup):
        assert found_words(decrypted_file(copy, raw_key), SECRET) == set(SECRET)

    receipt = owner(engine, "memory.purge", {"id": target, "reason": "x"})
    assert sorted(receipt["backups_removed"]) == sorted([backup.name, app_backup.name])
    assert not backup.exists() and not app_backup.exists()

    # A backup made after the purge is clean, and decrypts (the control is in it).
    later = store._copy_aside(store.schema_version)
    pages = every_page(store, raw_key)
    assert found_words(decrypted_file(later, raw_key), [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, SECRET) == set()


def test_the_owners_search_for_a_memory_is_among_its_quotes(engine: Engine, raw_key: bytes) -> None:
    target = save(engine, "The quagmirette locker opens with 4417")["judgment_id"]
    control = save(engine, f"The {CONTROL_WORD} meeting is on Friday")["judgment_id"]
    search = observe(engine, "30", "/search quagmirette")
    recall = observe(engine, "31", "/recall locker 4417")
    other = observe(engine, "32", f"/search {CONTROL_WORD}")
    chatter = observe(engine, "33", "is the locker fine")  # "fine" is not a word of it
    short = observe(engine, "34", "/search the")  # nothing but a function word

    quotes = owner(engine, "memory.quotes", {"id": target})["observations"]
    assert [(q["id"], q["why"]) for q in quotes] == [(search, ["words"]), (recall, ["words"])]
    assert chatter not in [q["id"] for q in quotes] and short not in [q["id"] for q in quotes]
    control_quotes = owner(engine, "memory.quotes", {"id": control})["observations"]
    assert [q["id"] for q in control_quotes] == [other]  # the control is found the same way

    owner(
        engine,
        "memory.purge",
        {"id": target, "observation_ids": [q["id"] for q in quotes], "reason": "x"},
    )
    pages = every_page(engine.store, raw_key)
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, ["quagmirette"]) == set()


def test_a_purged_mail_keeps_no_message_id_and_is_not_stored_again(
    engine: Engine, raw_key: bytes
) -> None:
    mail_id = "INBOX/<zephyrbloom-4711@narwhalian.example>"
    kept_id = f"INBOX/<{CONTROL_WORD}-1@example.org>"
    gone = observe_mail(engine, mail_id, "Subject: quagmirette invoice")
    kept = observe_mail(engine, kept_id, "Subject: lunch")
    owner(engine, "memory.purge", {"observation_ids": [gone], "reason": "x"})

    shown = owner(engine, "observation.read", {"id": gone})["observation"]
    assert shown["external_id"].startswith("erased:") and "zephyrbloom" not in str(shown)
    pages = every_page(engine.store, raw_key)
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}  # the kept mail's id
    assert found_words(pages, SECRET) == set()
    # The same mail arriving again (a folder's UIDs reset) is the purged one, not new.
    with pytest.raises(CommandConflictError) as again:
        observe_mail(engine, mail_id, "Subject: quagmirette invoice")
    assert again.value.details == {"observation_id": gone}
    conn = engine.store.new_connection()
    try:
        assert find_observation(conn, "mail:owner", mail_id) == gone
        assert find_observation(conn, "mail:owner", kept_id) == kept
    finally:
        conn.close()


def observe_mail(engine: Engine, external_id: str, text: str) -> int:
    receipt = engine.dispatch(
        "observation.record",
        {"source": "mail:owner", "external_id": external_id, "author": "bob", "text": text},
        OWNER,
        OWNER_GRANT,
    )
    return int(receipt["observation_id"])
