"""Row-level security, by raw SQL on each member's own connection: a member of team:eng
cannot read or insert rows of team:ops, and no member changes any row in place, beside
positive controls that the same statements reach the member's own team's rows."""

from __future__ import annotations

import psycopg
import pytest

from app.team.members import invite_member
from app.team.schema import init_team_store
from app.team.store import TeamSave, TeamStore, verify_chain
from mama_core.embeddings import GgufEmbedder


@pytest.fixture
def members(
    team_db: str, unique: str, e5_embedder: GgufEmbedder
) -> tuple[psycopg.Connection, psycopg.Connection, psycopg.Connection]:
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, e5_embedder.dim, e5_embedder.model_id)
        eng = invite_member(admin, team_db, f"eng_{unique}", ["team:eng"])
        ops = invite_member(admin, team_db, f"ops_{unique}", ["team:ops"])
    eng_conn = psycopg.connect(eng.join_string)
    ops_conn = psycopg.connect(ops.join_string)
    admin_conn = psycopg.connect(team_db)
    TeamStore(eng_conn, e5_embedder).remember(
        TeamSave("decision", "Releases ship on Thursdays", ("team:eng",))
    )
    TeamStore(ops_conn, e5_embedder).remember(
        TeamSave("decision", "The pager rotation changes on Mondays", ("team:ops",))
    )
    yield eng_conn, ops_conn, admin_conn
    for conn in (eng_conn, ops_conn, admin_conn):
        conn.close()


def _summaries(conn: psycopg.Connection, table: str = "memories") -> list[str]:
    rows = conn.execute(f"SELECT summary FROM mama_team.{table} ORDER BY id").fetchall()
    conn.commit()
    return [r[0] for r in rows]


def test_a_member_reads_only_rows_of_its_scopes(members) -> None:
    eng, ops, admin = members
    assert _summaries(admin) == [
        "Releases ship on Thursdays",
        "The pager rotation changes on Mondays",
    ]  # both rows are there
    assert _summaries(eng) == ["Releases ship on Thursdays"]
    assert _summaries(ops) == ["The pager rotation changes on Mondays"]
    # The bindings and the events follow the same rule.
    eng_scopes = eng.execute("SELECT scope FROM mama_team.memory_scopes").fetchall()
    eng_events = eng.execute("SELECT scopes FROM mama_team.events").fetchall()
    assert eng_scopes == [("team:eng",)] and eng_events == [(["team:eng"],)]
    eng.rollback()
    # A filter naming the other team's rows finds nothing; the control finds its own.
    assert eng.execute(
        "SELECT count(*) FROM mama_team.memories WHERE 'team:ops' = ANY(scopes)"
    ).fetchone() == (0,)
    assert eng.execute(
        "SELECT count(*) FROM mama_team.memories WHERE 'team:eng' = ANY(scopes)"
    ).fetchone() == (1,)
    eng.rollback()


def test_a_member_cannot_insert_into_another_teams_scope(members, e5_embedder) -> None:
    eng, _ops, admin = members
    vector = "[" + ",".join(["0.1"] * e5_embedder.dim) + "]"
    insert = (
        "INSERT INTO mama_team.memories (kind, summary, scopes, created_at, content_hash, "
        "model_id, embedding) VALUES ('decision', %s, %s, 'now', 'x', 'm', %s::vector)"
    )
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        eng.execute(insert, ("planted in ops", ["team:ops"], vector))
    eng.rollback()
    # Nor by naming both scopes, nor into the bindings of an ops row.
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        eng.execute(insert, ("planted in both", ["team:eng", "team:ops"], vector))
    eng.rollback()
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        eng.execute("INSERT INTO mama_team.memory_scopes VALUES (1, 'team:ops')")
    eng.rollback()
    # The control: the same statement into its own scope (a child of it) goes in.
    eng.execute(insert, ("raw but allowed", ["team:eng/web"], vector))
    eng.commit()
    assert "raw but allowed" in _summaries(eng)
    assert "planted in ops" not in _summaries(admin)


def test_no_member_changes_a_row_in_place(members) -> None:
    """Memory is append-only: an UPDATE by raw SQL is refused on another team's rows and
    on the member's own, so no change can bypass the chain."""
    eng, ops, admin = members
    for member, change in (
        (eng, "UPDATE mama_team.memories SET status = 'stale'"),
        (eng, "UPDATE mama_team.memories SET scopes = '{team:ops}'"),
        (ops, "UPDATE mama_team.memories SET summary = 'rewritten'"),
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            member.execute(change)
        member.rollback()
    rows = admin.execute("SELECT summary, status FROM mama_team.memories ORDER BY id").fetchall()
    admin.commit()
    assert rows == [
        ("Releases ship on Thursdays", "active"),
        ("The pager rotation changes on Mondays", "active"),
    ]
    # Control: the same connections still read and write what they were granted.
    assert "Releases ship on Thursdays" in _summaries(eng)
    assert "The pager rotation changes on Mondays" in _summaries(ops)


def test_a_member_cannot_grant_itself_a_scope(members) -> None:
    eng, _ops, _admin = members
    own = eng.execute("SELECT scope FROM mama_team.grants").fetchall()
    eng.rollback()
    assert own == [("team:eng",)]  # it sees its own grant, and only that
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        eng.execute("INSERT INTO mama_team.grants VALUES (current_user, 'team:ops')")
    eng.rollback()
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        eng.execute("SET ROLE postgres")
    eng.rollback()


def test_the_chain_holds_both_teams_events(members) -> None:
    _eng, _ops, admin = members
    report = verify_chain(admin)
    assert report.ok, report.problems
    assert report.events == 2
    # A changed row is found (the control that verify can fail).
    admin.execute("UPDATE mama_team.memories SET summary = 'rewritten' WHERE id = 1")
    admin.commit()
    broken = verify_chain(admin)
    assert not broken.ok and "memory #1 does not match its event 1" in broken.problems


def test_a_grant_covers_its_children_and_nothing_that_only_starts_alike(
    team_db: str, unique: str, e5_embedder: GgufEmbedder
) -> None:
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, e5_embedder.dim, e5_embedder.model_id)
        lead = invite_member(admin, team_db, f"lead_{unique}", ["team:eng", "team:engineering"])
        eng = invite_member(admin, team_db, f"eng_{unique}", ["team:eng"])
        web = invite_member(admin, team_db, f"web_{unique}", ["team:eng/web"])
    with psycopg.connect(lead.join_string) as conn:
        store = TeamStore(conn, e5_embedder)
        for scope in ("team:eng", "team:eng/web", "team:engineering"):
            store.remember(TeamSave("fact", f"a note in {scope}", (scope,)))
    with psycopg.connect(lead.join_string) as conn:
        assert len(_summaries(conn)) == 3  # the control: all three rows are readable
    with psycopg.connect(eng.join_string) as conn:
        assert _summaries(conn) == ["a note in team:eng", "a note in team:eng/web"]
        events = conn.execute("SELECT scopes FROM mama_team.events ORDER BY id").fetchall()
        assert events == [(["team:eng"],), (["team:eng/web"],)]
        store = TeamStore(conn, e5_embedder)
        scoped = store.search("a note", 10, scopes=["team:eng"])
        assert sorted(h.summary for h in scoped) == ["a note in team:eng", "a note in team:eng/web"]
        child = store.search("a note", 10, scopes=["team:eng/web"])
        assert [h.summary for h in child] == ["a note in team:eng/web"]
    with psycopg.connect(web.join_string) as conn:
        assert _summaries(conn) == ["a note in team:eng/web"]
        hits = TeamStore(conn, e5_embedder).search("a note", 10)
        assert [h.summary for h in hits] == ["a note in team:eng/web"]
