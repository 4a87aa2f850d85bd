"""``mama team init``: the extension, the schema, the tables, the member group role and
the row-level security policies, in one transaction, on an empty database or on one that
is already ours (idempotent).

Every table members touch has row-level security enabled and forced. A member role sees
only rows whose scopes its grants cover (``team:eng`` covers ``team:eng`` and
``team:eng/...``); the grants live in ``mama_team.grants``, which a member reads only
its own rows of and cannot write. Members write no table: they call the functions of
``app.team.write_functions``. A store an older MAMA made is upgraded by init, step by
numbered step, in the same one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from app.team import write_functions
from app.team.errors import ForeignDatabaseError, TeamError

SCHEMA = "mama_team"
FORMAT = "mama-team"
SCHEMA_VERSION = 3
"""Version 1 (the first slice) let members insert rows and move the chain head by SQL;
2 makes ``app.team.write_functions`` their only write path; 3 adds retire and purge."""
MEMBER_GROUP = "mama_team_member"
"""The NOLOGIN role every member role is in; the policies name it."""
GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first event (as in the SQLite store's chain)."""
TEXT_SEARCH_CONFIG = "english"

_REACH = """
CREATE FUNCTION mama_team.reach_of(ss text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT coalesce(array_agg(DISTINCT array_to_string(parts[1:n], '/')), '{}')
    FROM unnest(ss) AS s, string_to_array(s, '/') AS parts,
         generate_series(1, cardinality(parts)) AS n
$$;
"""
"""Each scope and its ancestors (``team:eng/web`` -> ``team:eng``, ``team:eng/web``): a
row is readable by a role whose grants overlap its reach, a test the read policies run
as one array overlap per row against the role's grants, read once per query."""

_TABLES = """
CREATE TABLE mama_team.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE mama_team.grants (
    role_name name NOT NULL,
    scope text NOT NULL,
    PRIMARY KEY (role_name, scope)
);
CREATE TABLE mama_team.memories (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL,
    summary text NOT NULL,
    topic text NOT NULL DEFAULT '',
    details text NOT NULL DEFAULT '',
    scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
    status text NOT NULL DEFAULT 'active',
    author name NOT NULL DEFAULT current_user,
    created_at text NOT NULL,
    content_hash text NOT NULL,
    model_id text NOT NULL,
    embedding vector({dim}) NOT NULL,
    reach text[] GENERATED ALWAYS AS (mama_team.reach_of(scopes)) STORED,
    words tsvector GENERATED ALWAYS AS (
        to_tsvector({tsconfig}::regconfig, topic || ' ' || summary || ' ' || details)
    ) STORED
);
CREATE INDEX memories_words ON mama_team.memories USING gin (words);
CREATE INDEX memories_reach ON mama_team.memories USING gin (reach);
CREATE TABLE mama_team.memory_scopes (
    memory_id bigint NOT NULL REFERENCES mama_team.memories (id) ON DELETE CASCADE,
    scope text NOT NULL,
    reach text[] GENERATED ALWAYS AS (mama_team.reach_of(ARRAY[scope])) STORED,
    PRIMARY KEY (memory_id, scope)
);
CREATE INDEX memory_scopes_by_scope ON mama_team.memory_scopes (scope, memory_id);
CREATE TABLE mama_team.events (
    id bigint PRIMARY KEY,
    at text NOT NULL,
    actor name NOT NULL DEFAULT current_user,
    action text NOT NULL,
    memory_id bigint,
    scopes text[] NOT NULL,
    reach text[] GENERATED ALWAYS AS (mama_team.reach_of(scopes)) STORED,
    content_hash text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL UNIQUE
);
CREATE TABLE mama_team.chain_head (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    last_id bigint NOT NULL,
    last_hash text NOT NULL
);
"""

# SECURITY INVOKER (the default): they read ``grants`` under the caller's own policy,
# so a role sees only its own grants.
_FUNCTIONS = """
CREATE FUNCTION mama_team.scope_granted(s text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM mama_team.grants g
        WHERE g.role_name = current_user AND (s = g.scope OR starts_with(s, g.scope || '/'))
    )
$$;
CREATE FUNCTION mama_team.my_grants() RETURNS text[]
LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(scope), '{}') FROM mama_team.grants WHERE role_name = current_user
$$;
CREATE FUNCTION mama_team.all_granted(ss text[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT cardinality(ss) > 0
       AND NOT EXISTS (SELECT 1 FROM unnest(ss) AS s WHERE NOT mama_team.scope_granted(s))
$$;
"""

_POLICIES = """
ALTER TABLE mama_team.grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE mama_team.grants FORCE ROW LEVEL SECURITY;
CREATE POLICY own_grants ON mama_team.grants FOR SELECT TO mama_team_member
    USING (role_name = current_user);

ALTER TABLE mama_team.memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE mama_team.memories FORCE ROW LEVEL SECURITY;
CREATE POLICY read_granted ON mama_team.memories FOR SELECT TO mama_team_member
    USING (reach && (SELECT mama_team.my_grants()));
CREATE POLICY write_granted ON mama_team.memories FOR INSERT TO mama_team_member
    WITH CHECK (mama_team.all_granted(scopes) AND author = current_user);

ALTER TABLE mama_team.memory_scopes ENABLE ROW LEVEL SECURITY;
ALTER TABLE mama_team.memory_scopes FORCE ROW LEVEL SECURITY;
CREATE POLICY read_granted ON mama_team.memory_scopes FOR SELECT TO mama_team_member
    USING (reach && (SELECT mama_team.my_grants()));
CREATE POLICY write_granted ON mama_team.memory_scopes FOR INSERT TO mama_team_member
    WITH CHECK (mama_team.scope_granted(scope));

ALTER TABLE mama_team.events ENABLE ROW LEVEL SECURITY;
ALTER TABLE mama_team.events FORCE ROW LEVEL SECURITY;
CREATE POLICY read_granted ON mama_team.events FOR SELECT TO mama_team_member
    USING (reach && (SELECT mama_team.my_grants()));
CREATE POLICY write_granted ON mama_team.events FOR INSERT TO mama_team_member
    WITH CHECK (mama_team.all_granted(scopes) AND actor = current_user);

-- The chain's head holds only an id and a hash: every member reads it and moves it
-- (under its row lock) when appending an event.
ALTER TABLE mama_team.chain_head ENABLE ROW LEVEL SECURITY;
ALTER TABLE mama_team.chain_head FORCE ROW LEVEL SECURITY;
CREATE POLICY everyone ON mama_team.chain_head FOR ALL TO mama_team_member
    USING (true) WITH CHECK (true);
"""

_V1_PRIVILEGES = """
REVOKE ALL ON SCHEMA mama_team FROM PUBLIC;
GRANT USAGE ON SCHEMA mama_team TO mama_team_member;
GRANT SELECT ON mama_team.meta, mama_team.grants TO mama_team_member;
GRANT SELECT, INSERT ON mama_team.memories, mama_team.memory_scopes, mama_team.events
    TO mama_team_member;
GRANT SELECT, UPDATE ON mama_team.chain_head TO mama_team_member;
"""
"""Schema 1's grants, which migration 2 takes back (see ``app.team.write_functions``)."""


@dataclass(frozen=True)
class InitResult:
    created: bool
    """False: the database was already ours (and nothing changed, unless upgraded)."""
    dim: int
    model_id: str
    upgraded_from: int | None = None
    """The schema version an older team store was upgraded from, if it was."""


def init_team_store(
    conn: psycopg.Connection[tuple[object, ...]],
    dim: int,
    model_id: str,
    *,
    version: int = SCHEMA_VERSION,
) -> InitResult:
    """Set up the team store on ``conn``'s database, in one transaction; a team store an
    older MAMA made is upgraded in the same transaction (all or nothing). ``version``
    below the current one is only for the upgrade tests, which need an old store."""
    with conn.transaction():
        existing = _ours(conn)
        if existing is not None:
            found_dim, found_model, found_version = existing
            _ensure_roles(conn)
            if found_version < SCHEMA_VERSION:
                _migrate(conn, found_version, SCHEMA_VERSION)
                return InitResult(False, found_dim, found_model, upgraded_from=found_version)
            _apply_privileges(conn, SCHEMA_VERSION)
            return InitResult(created=False, dim=found_dim, model_id=found_model)
        _refuse_if_not_empty(conn)
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        _ensure_roles(conn)
        conn.execute("CREATE SCHEMA mama_team")
        conn.execute(_REACH)
        conn.execute(
            sql.SQL(_TABLES).format(
                dim=sql.Literal(int(dim)), tsconfig=sql.Literal(TEXT_SEARCH_CONFIG)
            )
        )
        conn.execute(_FUNCTIONS)
        conn.execute(_POLICIES)
        conn.execute(_V1_PRIVILEGES)
        conn.execute(
            "INSERT INTO mama_team.meta (key, value) VALUES "
            "('format', %s), ('schema_version', '1'), ('dim', %s), ('model_id', %s)",
            (FORMAT, str(dim), model_id),
        )
        conn.execute(
            "INSERT INTO mama_team.chain_head (last_id, last_hash) VALUES (0, %s)",
            (GENESIS_HASH,),
        )
        _migrate(conn, 1, version)
    return InitResult(created=True, dim=dim, model_id=model_id)


def _migrate(conn: psycopg.Connection[tuple[object, ...]], found: int, target: int) -> None:
    """Schema ``found`` to ``target``, one numbered step after another, in the caller's
    transaction."""
    vector_type = _vector_type(conn)
    steps = {2: lambda: write_functions.migration_2(vector_type), 3: write_functions.migration_3}
    for step in range(found + 1, target + 1):
        for statement in steps[step]():
            conn.execute(statement.encode())
        conn.execute(
            "UPDATE mama_team.meta SET value = %s WHERE key = 'schema_version'", (str(step),)
        )
    # A new function is executable by PUBLIC: the grants are set again over all of them.
    _apply_privileges(conn, target)


def _apply_privileges(conn: psycopg.Connection[tuple[object, ...]], version: int) -> None:
    """The current grants again (a re-run of init on a current store changes nothing)."""
    if version < 2:
        conn.execute(_V1_PRIVILEGES)
        return
    conn.execute(write_functions.PRIVILEGES.format(vector=_vector_type(conn)).encode())
    if version >= 3:
        conn.execute(write_functions.RETIRE_PRIVILEGES)


def _vector_type(conn: psycopg.Connection[tuple[object, ...]]) -> str:
    """pgvector's type, schema-qualified: the write functions' search_path is pinned."""
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector'"
    ).fetchone()
    if row is None:
        raise TeamError("the vector extension is not installed in this database")
    return sql.Identifier(str(row[0])).as_string(conn) + ".vector"


def read_meta(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, str]:
    """The team store's ``meta`` rows (format, version, dim, model_id)."""
    rows = conn.execute("SELECT key, value FROM mama_team.meta").fetchall()
    return {str(k): str(v) for k, v in rows}


def _ours(conn: psycopg.Connection[tuple[object, ...]]) -> tuple[int, str, int] | None:
    """(dim, model_id, schema version) if the database holds our schema; None if it has
    no such schema; ``team_database_not_ours`` if the schema is there but is not ours, and
    an error if a newer MAMA made it."""
    has_schema = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)).fetchone()
    if has_schema is None:
        return None
    has_meta = conn.execute("SELECT to_regclass('mama_team.meta')").fetchone()
    meta = read_meta(conn) if has_meta and has_meta[0] is not None else {}
    if meta.get("format") != FORMAT:
        raise ForeignDatabaseError(
            "this database has a mama_team schema that MAMA did not make; "
            "give `mama team init` an empty database."
        )
    version = meta.get("schema_version", "")
    if not version.isdigit() or int(version) > SCHEMA_VERSION:
        raise TeamError(
            f"the team store is at schema version {version}; this MAMA knows versions up to "
            f"{SCHEMA_VERSION}: update MAMA."
        )
    return int(meta["dim"]), meta["model_id"], int(version)


def _refuse_if_not_empty(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    row = conn.execute(
        """
        SELECT n.nspname, c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
          AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname NOT LIKE 'pg\\_toast%%' AND n.nspname NOT LIKE 'pg\\_temp%%'
        ORDER BY 1, 2 LIMIT 1
        """
    ).fetchone()
    if row is not None:
        raise ForeignDatabaseError(
            f"this database is not empty (it has {row[0]}.{row[1]}); give `mama team init` "
            "an empty database of its own."
        )


def _ensure_roles(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """The member group and the write functions' owner (roles are the server's, not one
    database's: another team store on the same server shares them)."""
    for role in (MEMBER_GROUP, write_functions.WRITER):
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if exists is None:
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(role)))
