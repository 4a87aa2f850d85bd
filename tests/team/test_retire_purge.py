"""Retire and purge in the team store: a member retires a memory in scopes it holds (a
new event and the row's status, its text kept), search returns neither retired nor
purged memories, and the admin's purge leaves the text in none of the database's files
on disk, beside positive controls (the text is on disk before, the other memories are
still found after)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from app.team.errors import ScopeNotGrantedError, TeamInputError, TeamMemoryNotFoundError
from app.team.members import invite_member
from app.team.schema import init_team_store
from app.team.store import TeamSave, TeamStore, purge_memory, verify_chain
from mama_core.embeddings import GgufEmbedder

SECRET_PLAN = b"Zanzibar-417"


def _files_holding(data_dir: Path, admin: psycopg.Connection, needle: bytes) -> list[str]:
    """The files of this database (tables, TOAST, indexes, catalogs) that hold
    ``needle``, after a checkpoint has written every changed page to disk."""
    admin.execute("CHECKPOINT")
    row = admin.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
    (oid,) = row.fetchone()  # type: ignore[misc]
    admin.commit()
    folder = data_dir / "base" / str(oid)
    return sorted(p.name for p in folder.iterdir() if p.is_file() and needle in p.read_bytes())


@pytest.fixture
def team(team_db: str, unique: str, e5_embedder: GgufEmbedder):
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, e5_embedder.dim, e5_embedder.model_id)
        eng = invite_member(admin, team_db, f"eng_{unique}", ["team:eng"]).join_string
        ops = invite_member(admin, team_db, f"ops_{unique}", ["team:ops"]).join_string
        both = invite_member(admin, team_db, f"both_{unique}", ["team:eng", "team:ops"])
    conns = [psycopg.connect(url) for url in (eng, ops, both.join_string, team_db)]
    yield conns
    for conn in conns:
        conn.close()


def _summaries(store: TeamStore, query: str) -> list[str]:
    return [h.summary for h in store.search(query, 10)]


def test_a_member_retires_in_its_scopes_and_search_leaves_it_out(team, e5_embedder) -> None:
    eng_conn, ops_conn, both_conn, admin = team
    eng = TeamStore(eng_conn, e5_embedder)
    ops = TeamStore(ops_conn, e5_embedder)
    both = TeamStore(both_conn, e5_embedder)
    old = eng.remember(TeamSave("decision", "The build farm runs on the old rack", ("team:eng",)))
    kept = eng.remember(TeamSave("decision", "The build farm moves to the new rack", ("team:eng",)))
    shared = both.remember(
        TeamSave("decision", "The build farm is shared by eng and ops", ("team:eng", "team:ops"))
    )
    found = _summaries(eng, "where does the build farm run")
    assert "The build farm runs on the old rack" in found  # the control before retiring

    with pytest.raises(TeamMemoryNotFoundError):  # not in ops' scopes: as if not there
        ops.retire(old.memory_id)
    with pytest.raises(ScopeNotGrantedError, match="not granted"):  # eng reads it, but
        eng.retire(shared.memory_id)  # it is in team:ops too
    receipt = eng.retire(old.memory_id)
    assert receipt.event_id == 4
    with pytest.raises(TeamInputError, match="already retired"):
        eng.retire(old.memory_id)

    found = _summaries(eng, "where does the build farm run")
    assert "The build farm runs on the old rack" not in found
    assert "The build farm moves to the new rack" in found  # the control after
    assert kept.memory_id != old.memory_id
    row = admin.execute(
        "SELECT summary, status FROM mama_team.memories WHERE id = %s", (old.memory_id,)
    ).fetchone()
    admin.commit()
    assert row == ("The build farm runs on the old rack", "retired")  # text kept, status set
    report = verify_chain(admin)
    assert report.ok and report.events == 4, report.problems
    # A status changed without its event is found (the control that verify can fail).
    admin.execute("UPDATE mama_team.memories SET status = 'active' WHERE id = %s", (old.memory_id,))
    admin.commit()
    assert f"memory #{old.memory_id} is active, its events say retired" in (
        verify_chain(admin).problems
    )


def test_purge_leaves_the_text_in_no_file_of_the_database(team, pg_server, e5_embedder) -> None:
    eng_conn, _ops, _both, admin = team
    eng = TeamStore(eng_conn, e5_embedder)
    plan = "Project Zanzibar-417 launches on the ninth of March"
    purged = eng.remember(TeamSave("decision", plan, ("team:eng",), details="Zanzibar-417 x"))
    eng.remember(TeamSave("decision", "Project Atlas launches in the spring", ("team:eng",)))
    eng.retire(purged.memory_id)  # a retired memory can be purged too
    admin.execute("ANALYZE mama_team.memories")  # statistics may sample the text as well
    admin.commit()
    # The control: before the purge the text is on disk (the table, its index, its stats).
    before = _files_holding(pg_server.data_dir, admin, SECRET_PLAN)
    assert before, "the text should be in the table's files before the purge"

    with pytest.raises(TeamMemoryNotFoundError):
        purge_memory(admin, 10_000)
    event_id = purge_memory(admin, purged.memory_id)
    assert event_id == 4
    assert _files_holding(pg_server.data_dir, admin, SECRET_PLAN) == []
    row = admin.execute(
        "SELECT summary, topic, details, embedding, status FROM mama_team.memories WHERE id = %s",
        (purged.memory_id,),
    ).fetchone()
    admin.commit()
    assert row == ("", "", "", None, "purged")
    with pytest.raises(TeamInputError, match="already purged"):
        purge_memory(admin, purged.memory_id)
    found = _summaries(eng, "when does the project launch")
    assert found == ["Project Atlas launches in the spring"]  # the control, and only it
    report = verify_chain(admin)
    assert report.ok and report.events == 4, report.problems
    # A member may not purge, not even in its own scope.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        eng_conn.execute("SELECT mama_team.purge(%s)", (purged.memory_id + 1,))
    eng_conn.rollback()
