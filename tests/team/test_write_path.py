"""The team write path under load and under a crash: two members writing at once keep
one unbroken chain, a member's process killed (SIGKILL) in the middle of a save leaves
nothing half-applied and the chain intact, and a first-slice store is upgraded to the
write functions by init."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psycopg
import pytest

from app.team.errors import TeamBusyError
from app.team.members import invite_member
from app.team.schema import SCHEMA_VERSION, init_team_store, read_meta
from app.team.store import (
    TeamSave,
    TeamStore,
    event_fields,
    event_hash,
    vector_literal,
    verify_chain,
)
from app.team.write_functions import REMEMBER
from mama_core.canonical import canonical_hash
from mama_core.embeddings import GgufEmbedder
from mama_core.embeddings.base import PASSAGE
from tests.conftest import REPO_ROOT

WRITES_EACH = 8


def _count(admin: psycopg.Connection, table: str) -> int:
    row = admin.execute(f"SELECT count(*) FROM mama_team.{table}").fetchone()
    admin.commit()
    assert row is not None
    return int(row[0])


def test_two_members_writing_at_once_keep_one_chain(
    team_db: str, unique: str, e5_model: tuple[Path, str]
) -> None:
    path, model_id = e5_model
    embedders = [GgufEmbedder(path, model_id=model_id) for _ in range(2)]  # one per thread
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, embedders[0].dim, model_id)
        strings = [
            invite_member(admin, team_db, f"{who}_{unique}", [scope]).join_string
            for who, scope in (("eng", "team:eng"), ("ops", "team:ops"))
        ]
    start = threading.Barrier(2, timeout=120)
    errors: list[BaseException] = []

    def write(index: int) -> None:
        try:
            with psycopg.connect(strings[index]) as conn:
                store = TeamStore(conn, embedders[index])
                scope = ("team:eng", "team:ops")[index]
                start.wait()
                for n in range(WRITES_EACH):
                    store.remember(TeamSave("fact", f"note {n} from member {index}", (scope,)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    with psycopg.connect(team_db) as admin:
        report = verify_chain(admin)
        assert report.ok, report.problems
        assert report.events == 2 * WRITES_EACH == _count(admin, "memories")
        actors = admin.execute(
            "SELECT actor, count(*) FROM mama_team.events GROUP BY actor ORDER BY actor"
        ).fetchall()
    assert [n for _, n in actors] == [WRITES_EACH, WRITES_EACH]


_WRITER = textwrap.dedent(
    """
    import sys
    import psycopg
    from app.team.store import TeamSave, TeamStore
    from mama_core.embeddings import GgufEmbedder

    url, path, model_id = sys.argv[1:4]
    with psycopg.connect(url) as conn:
        store = TeamStore(conn, GgufEmbedder(path, model_id=model_id))
        print("ready", flush=True)
        store.remember(TeamSave("decision", "half-written save", ("team:eng",)))
        print("saved", flush=True)
    """
)


def _wait_until(condition, what: str, timeout: float = 120.0) -> None:
    """Poll ``condition`` (a query on the server's own state) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        threading.Event().wait(0.05)


def test_a_member_killed_mid_write_leaves_nothing_half_applied(
    team_db: str, unique: str, e5_model: tuple[Path, str], e5_embedder: GgufEmbedder
) -> None:
    path, model_id = e5_model
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, e5_embedder.dim, model_id)
        string = invite_member(admin, team_db, f"k_{unique}", ["team:eng"]).join_string
    with psycopg.connect(string) as conn:
        TeamStore(conn, e5_embedder).remember(TeamSave("fact", "before the crash", ("team:eng",)))

    blocker = psycopg.connect(team_db)
    # Hold back the event insert: inside mama_team.remember the writer inserts its memory
    # row and bindings, locks the chain head, then waits on this lock, so it dies between
    # the row and its event.
    blocker.execute("LOCK TABLE mama_team.events IN SHARE MODE")
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, string, str(path), model_id],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    watcher = psycopg.connect(team_db, autocommit=True)
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"

        def writer_waits_on_the_lock() -> bool:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s "
                "AND wait_event_type = 'Lock' AND query LIKE '%%mama_team.remember(%%'",
                (f"mama_k_{unique}",),
            ).fetchone()
            return row is not None and row[0] == 1

        _wait_until(writer_waits_on_the_lock, "the writer to reach the event insert")
        # The row is written in its (open) transaction: the server holds it uncommitted.
        os.kill(writer.pid, signal.SIGKILL)
        assert writer.wait(timeout=60) == -signal.SIGKILL
    finally:
        blocker.rollback()
        blocker.close()
        if writer.stdout is not None:
            writer.stdout.close()

    def writer_gone() -> bool:
        row = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (f"mama_k_{unique}",)
        ).fetchone()
        return row is not None and row[0] == 0

    _wait_until(writer_gone, "the server to end the killed writer's session")
    watcher.close()
    with psycopg.connect(team_db) as admin:
        summaries = [r[0] for r in admin.execute("SELECT summary FROM mama_team.memories")]
        assert summaries == ["before the crash"]  # nothing of the killed save
        assert _count(admin, "memory_scopes") == 1
        report = verify_chain(admin)
        assert report.ok and report.events == 1, report.problems
    # The chain head's lock went with the dead session: the next save goes through.
    with psycopg.connect(string) as conn:
        receipt = TeamStore(conn, e5_embedder).remember(
            TeamSave("fact", "after the crash", ("team:eng",))
        )
    assert receipt.event_id == 2
    with psycopg.connect(team_db) as admin:
        assert verify_chain(admin).ok


def _v1_save(conn: psycopg.Connection, summary: str, scope: str) -> None:
    """A save as the first slice's MAMA made it: the member's own INSERTs and UPDATE."""
    role = str(conn.execute("SELECT current_user").fetchone()[0])  # type: ignore[index]
    content_hash = canonical_hash(TeamSave("decision", summary, (scope,)).content(role))
    head_id, head_hash = conn.execute(
        "SELECT last_id, last_hash FROM mama_team.chain_head FOR UPDATE"
    ).fetchone()  # type: ignore[misc]
    (memory_id,) = conn.execute(
        "INSERT INTO mama_team.memories (kind, summary, scopes, created_at, content_hash, "
        "model_id, embedding) SELECT 'decision', %s, %s, 'then', %s, value, "
        "array_fill(0.1, ARRAY[384])::vector FROM mama_team.meta WHERE key = 'model_id' "
        "RETURNING id",
        (summary, [scope], content_hash),
    ).fetchone()  # type: ignore[misc]
    conn.execute("INSERT INTO mama_team.memory_scopes VALUES (%s, %s)", (memory_id, scope))
    event_id = head_id + 1
    fields = event_fields(event_id, "then", role, REMEMBER, memory_id, [scope], content_hash)
    digest = event_hash(fields, head_hash)
    conn.execute(
        "INSERT INTO mama_team.events (id, at, action, memory_id, scopes, content_hash, "
        "prev_hash, hash) VALUES (%s, 'then', %s, %s, %s, %s, %s, %s)",
        (event_id, REMEMBER, memory_id, [scope], content_hash, head_hash, digest),
    )
    conn.execute("UPDATE mama_team.chain_head SET last_id = %s, last_hash = %s", (event_id, digest))
    conn.commit()


def test_init_upgrades_a_first_slice_store_once(
    team_db: str, unique: str, e5_embedder: GgufEmbedder
) -> None:
    dim, model_id = e5_embedder.dim, e5_embedder.model_id
    assert dim == 384
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, dim, model_id, version=1)
        string = invite_member(admin, team_db, f"old_{unique}", ["team:eng"]).join_string
    with psycopg.connect(string) as conn:
        _v1_save(conn, "saved by the first slice", "team:eng")  # the old way still works
    with psycopg.connect(team_db) as admin:
        assert verify_chain(admin).ok
        upgraded = init_team_store(admin, dim, model_id)
        assert upgraded.upgraded_from == 1 and not upgraded.created
        again = init_team_store(admin, dim, model_id)
        assert again.upgraded_from is None and not again.created
        assert read_meta(admin)["schema_version"] == str(SCHEMA_VERSION)
        admin.commit()
    with psycopg.connect(string) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _v1_save(conn, "the old way after the upgrade", "team:eng")
        conn.rollback()
        # The control: the member saves through the write function; the old row is read.
        store = TeamStore(conn, e5_embedder)
        assert store.remember(TeamSave("fact", "saved after it", ("team:eng",))).event_id == 2
        found = {h.summary for h in store.search("saved by the first slice", 5)}
        assert found == {"saved by the first slice", "saved after it"}
    with psycopg.connect(team_db) as admin:
        report = verify_chain(admin)
        assert report.ok and report.events == 2, report.problems


def test_a_save_behind_a_session_holding_the_chain_is_busy_not_a_hang(
    team_db: str, unique: str, e5_embedder: GgufEmbedder
) -> None:
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, e5_embedder.dim, e5_embedder.model_id)
        holder_url, waiter_url = (
            invite_member(admin, team_db, f"{who}_{unique}", ["team:eng"]).join_string
            for who in ("hold", "wait")
        )
    vector = vector_literal(e5_embedder.embed_one("held open", PASSAGE))
    # A member's raw-SQL session calls the write function and leaves its transaction
    # open: the chain head stays locked until it ends.
    holder = psycopg.connect(holder_url)
    try:
        holder.execute(
            "SELECT * FROM mama_team.remember(%s, %s, %s, %s, %s, %s, %s::vector)",
            ("fact", "held open", "", "", ["team:eng"], e5_embedder.model_id, vector),
        )
        with psycopg.connect(waiter_url) as conn:
            waiter = TeamStore(conn, e5_embedder, chain_wait_seconds=1)
            with pytest.raises(TeamBusyError, match="nothing was saved"):
                waiter.remember(TeamSave("fact", "behind the open session", ("team:eng",)))
            holder.commit()
            # The control: with the chain free, the same save goes through.
            receipt = waiter.remember(TeamSave("fact", "behind the open session", ("team:eng",)))
    finally:
        holder.close()
    assert receipt.event_id == 2
    with psycopg.connect(team_db) as admin:
        report = verify_chain(admin)
        assert report.ok and report.events == 2, report.problems
