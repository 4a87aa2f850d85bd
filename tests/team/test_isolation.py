"""Row-level security and the one write path, by raw SQL on each member's own connection:
a member of team:eng cannot read rows of team:ops, writes no table directly (not even in
its own scope), and its write function refuses scopes it was not granted, beside
positive controls that the same role reads and saves what it was given."""

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


def _vector(e5_embedder: GgufEmbedder) -> str:
    return "[" + ",".join(["0.1"] * e5_embedder.dim) + "]"


def test_a_member_writes_no_table_by_raw_sql(members, e5_embedder) -> None:
    """Not even in its own scope: the rows, the bindings, the events and the chain head
    are the write functions' alone (insufficient_privilege, SQLSTATE 42501)."""
    eng, _ops, admin = members
    vector = _vector(e5_embedder)
    forgeries = [
        (
            "INSERT INTO mama_team.memories (kind, summary, scopes, created_at, content_hash, "
            "model_id, embedding) VALUES ('decision', 'planted', '{team:eng}', 'now', 'x', 'm', "
            f"'{vector}'::vector)"
        ),
        "INSERT INTO mama_team.memory_scopes VALUES (1, 'team:eng/web')",
        (
            "INSERT INTO mama_team.events (id, at, action, memory_id, scopes, content_hash, "
            "prev_hash, hash) VALUES (3, 'now', 'team.remember', 1, '{team:eng}', 'x', 'y', 'z')"
        ),
        "UPDATE mama_team.chain_head SET last_id = 0",
        "DELETE FROM mama_team.events",
        "DELETE FROM mama_team.memories",
        "SELECT mama_team.append_event('now', 'team.remember', 1, '{team:eng}', 'x')",
        "SELECT mama_team.purge(1)",
    ]
    for statement in forgeries:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
            eng.execute(statement)
            pytest.fail(f"not refused: {statement}")
        assert refused.value.sqlstate == "42501", statement
        eng.rollback()
    assert verify_chain(admin).events == 2
    # The control: the same role, by raw SQL too, saves through the write function, and
    # the chain verifies with the server's hashes recomputed here.
    row = eng.execute(
        "SELECT memory_id, event_id FROM mama_team.remember("
        "'decision', 'raw but through the door', '', '', '{team:eng/web}', %s, %s::vector)",
        (e5_embedder.model_id, vector),
    ).fetchone()
    eng.commit()
    assert row is not None and row[1] == 3
    assert "raw but through the door" in _summaries(eng)
    report = verify_chain(admin)
    assert report.ok and report.events == 3, report.problems


def test_the_write_function_refuses_a_scope_not_granted(members, e5_embedder) -> None:
    eng, _ops, admin = members
    call = "SELECT * FROM mama_team.remember('decision', %s, '', '', %s, %s, %s::vector)"
    for scopes in (["team:ops"], ["team:eng", "team:ops"], ["team:engineering"]):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="was not granted"):
            eng.execute(call, ("planted", scopes, e5_embedder.model_id, _vector(e5_embedder)))
        eng.rollback()
    for malformed in (["team:eng/../ops"], [], ["project:web"]):
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            eng.execute(call, ("planted", malformed, e5_embedder.model_id, _vector(e5_embedder)))
        eng.rollback()
    assert "planted" not in _summaries(admin)
    # The control: the same call into its own scope goes in.
    eng.execute(call, ("allowed", ["team:eng"], e5_embedder.model_id, _vector(e5_embedder)))
    eng.commit()
    assert "allowed" in _summaries(admin)
    assert verify_chain(admin).ok


def test_the_servers_hashes_are_the_chain_rule_for_any_text(members, e5_embedder) -> None:
    """The content and event hashes the database computes are the ones verify recomputes
    (RFC 8785) for text with quotes, escapes, controls and non-ASCII letters."""
    eng, _ops, admin = members
    store = TeamStore(eng, e5_embedder)
    odd = 'He said "ship it"\\now\n\ttab \x01 \x7f café 日本 🚀 / </script>'
    store.remember(TeamSave("decision", odd, ("team:eng/web", "team:eng"), "tôpic", "d\u2028x"))
    report = verify_chain(admin)
    assert report.ok and report.events == 3, report.problems
    # The control: one changed character is found.
    admin.execute("UPDATE mama_team.memories SET summary = summary || ' ' WHERE id = 3")
    admin.commit()
    assert "memory #3 does not match its event 3" in verify_chain(admin).problems


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
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor become the writer
        eng.execute("SET ROLE mama_team_writer")
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
