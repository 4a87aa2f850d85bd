"""The team store's one write path: database functions members call, and nothing else.

A member's role has no INSERT, UPDATE or DELETE on any table. It saves with
``mama_team.remember(...)`` and retires with ``mama_team.retire(id)``: ``SECURITY
DEFINER`` functions owned by the NOLOGIN role ``mama_team_writer``, with their
``search_path`` pinned, that check the calling login role's grants (``session_user``
against ``mama_team.grants``) and write the row, its bindings, the event and the chain
head in the caller's one transaction, under the chain head's row lock (so two members
at once still make one chain). The event's hash and the memory's content hash are
computed here, by the server, with the same rule as ``app.team.store.event_hash`` (sha256
over RFC 8785 canonical JSON), so a member cannot hand in a hash of its choosing; ``mama
team verify`` recomputes both in Python. ``mama_team.purge(id)`` is the admin's only (no
member may execute it).

Migrations of the team schema, applied in order by ``app.team.schema``:

* 2: the write functions; members' INSERT/UPDATE privileges and write policies dropped.
* 3: retire and purge (a purged row keeps no text and no vector).
"""

from __future__ import annotations

WRITER = "mama_team_writer"
"""The NOLOGIN role that owns the write functions and alone may write the tables."""
REMEMBER = "team.remember"
RETIRE = "team.retire"
PURGE = "team.purge"

# The canonical JSON of an event's and a memory's fields, built by hand in key order
# (RFC 8785 sorts keys; these keys are ASCII). PostgreSQL's to_json(text) escapes as
# RFC 8785 does: '"', '\', \b \f \n \r \t, other controls as \u00xx, nothing else.
_HASHES = """
CREATE FUNCTION mama_team.json_sorted(ss text[]) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT '[' || coalesce(string_agg(to_json(s)::text, ',' ORDER BY s COLLATE "C"), '') || ']'
    FROM unnest(ss) AS s
$$;
CREATE FUNCTION mama_team.content_hash(
    kind text, summary text, topic text, details text, scopes text[], author text
) RETURNS text
LANGUAGE sql STABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT encode(sha256(convert_to(
        '{"author":' || to_json(author)::text
        || ',"details":' || to_json(details)::text
        || ',"kind":' || to_json(kind)::text
        || ',"scopes":' || mama_team.json_sorted(scopes)
        || ',"summary":' || to_json(summary)::text
        || ',"topic":' || to_json(topic)::text || '}', 'UTF8')), 'hex')
$$;
CREATE FUNCTION mama_team.event_hash(
    prev_hash text, id bigint, at text, actor text, action text, memory_id bigint,
    scopes text[], content_hash text
) RETURNS text
LANGUAGE sql STABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT encode(sha256(convert_to(prev_hash
        || '{"action":' || to_json(action)::text
        || ',"actor":' || to_json(actor)::text
        || ',"at":' || to_json(at)::text
        || ',"content_hash":' || to_json(content_hash)::text
        || ',"id":' || id::text
        || ',"memory_id":' || memory_id::text
        || ',"scopes":' || mama_team.json_sorted(scopes) || '}', 'UTF8')), 'hex')
$$;
"""

# Run only inside the SECURITY DEFINER functions (as mama_team_writer): no member may
# execute them directly.
_HELPERS = """
CREATE FUNCTION mama_team.holds_all(who name, ss text[]) RETURNS boolean
LANGUAGE sql STABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT cardinality(ss) > 0 AND NOT EXISTS (
        SELECT 1 FROM unnest(ss) AS s WHERE NOT EXISTS (
            SELECT 1 FROM mama_team.grants g
            WHERE g.role_name = who AND (s = g.scope OR starts_with(s, g.scope || '/'))
        )
    )
$$;
CREATE FUNCTION mama_team.grants_of(who name) RETURNS text[]
LANGUAGE sql STABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(array_agg(scope), '{}') FROM mama_team.grants WHERE role_name = who
$$;
CREATE FUNCTION mama_team.now_text() RETURNS text
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
    SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;
CREATE FUNCTION mama_team.append_event(
    p_at text, p_action text, p_memory_id bigint, p_scopes text[], p_content_hash text
) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_head_id bigint;
    v_head_hash text;
    v_hash text;
BEGIN
    -- The head's row lock orders every writer: one chain, no fork.
    SELECT last_id, last_hash INTO STRICT v_head_id, v_head_hash
        FROM mama_team.chain_head FOR UPDATE;
    v_hash := mama_team.event_hash(v_head_hash, v_head_id + 1, p_at, session_user, p_action,
                                   p_memory_id, p_scopes, p_content_hash);
    INSERT INTO mama_team.events (id, at, actor, action, memory_id, scopes, content_hash,
                                  prev_hash, hash)
        VALUES (v_head_id + 1, p_at, session_user, p_action, p_memory_id,
                ARRAY(SELECT s FROM unnest(p_scopes) AS s ORDER BY s COLLATE "C"),
                p_content_hash, v_head_hash, v_hash);
    UPDATE mama_team.chain_head SET last_id = v_head_id + 1, last_hash = v_hash;
    RETURN v_head_id + 1;
END
$$;
"""

_REMEMBER = """
CREATE FUNCTION mama_team.remember(
    p_kind text, p_summary text, p_topic text, p_details text, p_scopes text[],
    p_model_id text, p_embedding {vector}
) RETURNS TABLE (memory_id bigint, event_id bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_scopes text[];
    v_bad text;
    v_at text := mama_team.now_text();
    v_hash text;
    v_id bigint;
BEGIN
    v_scopes := ARRAY(SELECT DISTINCT s FROM unnest(p_scopes) AS s ORDER BY s);
    IF cardinality(v_scopes) = 0 THEN
        RAISE EXCEPTION 'a team memory needs at least one team scope'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT s INTO v_bad FROM unnest(v_scopes) AS s
        WHERE s IS NULL
           OR s !~ '^team:[a-z0-9][a-z0-9_-]{{0,62}}(/[a-z0-9][a-z0-9_-]{{0,62}}){{0,7}}$'
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '% is not a team scope', coalesce(v_bad, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT mama_team.holds_all(session_user, v_scopes) THEN
        RAISE EXCEPTION 'role % was not granted all of %', session_user, v_scopes
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF p_model_id IS DISTINCT FROM
       (SELECT value FROM mama_team.meta WHERE key = 'model_id') THEN
        RAISE EXCEPTION 'the team store''s vectors are not from %', p_model_id
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_hash := mama_team.content_hash(p_kind, p_summary, p_topic, p_details, v_scopes,
                                      session_user);
    INSERT INTO mama_team.memories (kind, summary, topic, details, scopes, author,
                                    created_at, content_hash, model_id, embedding)
        VALUES (p_kind, p_summary, p_topic, p_details, v_scopes, session_user, v_at,
                v_hash, p_model_id, p_embedding)
        RETURNING id INTO v_id;
    INSERT INTO mama_team.memory_scopes (memory_id, scope)
        SELECT v_id, s FROM unnest(v_scopes) AS s;
    memory_id := v_id;
    event_id := mama_team.append_event(v_at, '{remember}', v_id, v_scopes, v_hash);
    RETURN NEXT;
END
$$;
"""

_V2_PRIVILEGES = """
DROP POLICY IF EXISTS write_granted ON mama_team.memories;
DROP POLICY IF EXISTS write_granted ON mama_team.memory_scopes;
DROP POLICY IF EXISTS write_granted ON mama_team.events;
DROP POLICY IF EXISTS everyone ON mama_team.chain_head;
CREATE POLICY read_head ON mama_team.chain_head FOR SELECT TO mama_team_member USING (true);
CREATE POLICY writer ON mama_team.grants FOR SELECT TO mama_team_writer USING (true);
CREATE POLICY writer ON mama_team.memories FOR ALL TO mama_team_writer
    USING (true) WITH CHECK (true);
CREATE POLICY writer ON mama_team.memory_scopes FOR ALL TO mama_team_writer
    USING (true) WITH CHECK (true);
CREATE POLICY writer ON mama_team.events FOR ALL TO mama_team_writer
    USING (true) WITH CHECK (true);
CREATE POLICY writer ON mama_team.chain_head FOR ALL TO mama_team_writer
    USING (true) WITH CHECK (true);
"""

PRIVILEGES = """
REVOKE ALL ON SCHEMA mama_team FROM PUBLIC;
GRANT USAGE ON SCHEMA mama_team TO mama_team_member, mama_team_writer;
REVOKE ALL ON ALL TABLES IN SCHEMA mama_team FROM PUBLIC, mama_team_member, mama_team_writer;
GRANT SELECT ON ALL TABLES IN SCHEMA mama_team TO mama_team_member;
GRANT SELECT ON mama_team.meta, mama_team.grants TO mama_team_writer;
GRANT SELECT, INSERT ON mama_team.memory_scopes, mama_team.events TO mama_team_writer;
GRANT SELECT, INSERT, UPDATE ON mama_team.memories TO mama_team_writer;
GRANT SELECT, UPDATE ON mama_team.chain_head TO mama_team_writer;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA mama_team FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mama_team.reach_of(text[]), mama_team.my_grants(),
    mama_team.scope_granted(text), mama_team.all_granted(text[]),
    mama_team.json_sorted(text[]),
    mama_team.content_hash(text, text, text, text, text[], text),
    mama_team.event_hash(text, bigint, text, text, text, bigint, text[], text)
    TO mama_team_member, mama_team_writer;
GRANT EXECUTE ON FUNCTION mama_team.holds_all(name, text[]), mama_team.grants_of(name),
    mama_team.now_text(), mama_team.append_event(text, text, bigint, text[], text)
    TO mama_team_writer;
GRANT EXECUTE ON FUNCTION mama_team.remember(text, text, text, text, text[], text, {vector})
    TO mama_team_member;
"""
"""Every grant on the schema as it stands now (re-applied by an idempotent init): members
read what their policies let them and execute the write functions; only the writer role
writes. Revoking from PUBLIC matters: a new function is executable by everyone."""

_V2_OWNERS = """
ALTER FUNCTION mama_team.remember(text, text, text, text, text[], text, {vector})
    OWNER TO mama_team_writer;
"""

_RETIRE = """
CREATE FUNCTION mama_team.retire(p_memory_id bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    m record;
BEGIN
    SELECT id, scopes, reach, status, content_hash INTO m
        FROM mama_team.memories WHERE id = p_memory_id FOR UPDATE;
    IF NOT FOUND OR NOT m.reach && mama_team.grants_of(session_user) THEN
        RAISE EXCEPTION 'there is no team memory #% in your scopes', p_memory_id
            USING ERRCODE = 'no_data_found';
    END IF;
    IF NOT mama_team.holds_all(session_user, m.scopes) THEN
        RAISE EXCEPTION 'team memory #% is also in scopes role % was not granted (%)',
            p_memory_id, session_user, m.scopes USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF m.status <> 'active' THEN
        RAISE EXCEPTION 'team memory #% is already %', p_memory_id, m.status
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    UPDATE mama_team.memories SET status = 'retired' WHERE id = p_memory_id;
    RETURN mama_team.append_event(mama_team.now_text(), '{retire}', p_memory_id, m.scopes,
                                  m.content_hash);
END
$$;
CREATE FUNCTION mama_team.purge(p_memory_id bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    m record;
BEGIN
    SELECT id, scopes, status, content_hash INTO m
        FROM mama_team.memories WHERE id = p_memory_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no team memory #%', p_memory_id
            USING ERRCODE = 'no_data_found';
    END IF;
    IF m.status = 'purged' THEN
        RAISE EXCEPTION 'team memory #% is already purged', p_memory_id
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    UPDATE mama_team.memories
        SET summary = '', topic = '', details = '', embedding = NULL, status = 'purged'
        WHERE id = p_memory_id;
    RETURN mama_team.append_event(mama_team.now_text(), '{purge}', p_memory_id, m.scopes,
                                  m.content_hash);
END
$$;
"""

_V3_SCHEMA = """
ALTER TABLE mama_team.memories ALTER COLUMN embedding DROP NOT NULL;
ALTER TABLE mama_team.memories ADD CONSTRAINT memories_status
    CHECK (status IN ('active', 'retired', 'purged'));
ALTER TABLE mama_team.memories ADD CONSTRAINT memories_purged_empty
    CHECK (status = 'purged' OR embedding IS NOT NULL);
"""

RETIRE_PRIVILEGES = """
GRANT EXECUTE ON FUNCTION mama_team.retire(bigint) TO mama_team_member;
"""
"""Re-applied with ``PRIVILEGES`` from schema 3 on. ``purge`` is executed by no member: only
the admin (a superuser, or a role in ``mama_team_writer``) runs it."""

_V3_OWNERS = """
ALTER FUNCTION mama_team.retire(bigint) OWNER TO mama_team_writer;
ALTER FUNCTION mama_team.purge(bigint) OWNER TO mama_team_writer;
"""


def migration_2(vector_type: str) -> list[str]:
    """The statements that make the write functions members' only write path."""
    return [
        _HASHES,
        _HELPERS,
        _REMEMBER.format(vector=vector_type, remember=REMEMBER),
        _V2_PRIVILEGES,
        # The new owner needs CREATE on the schema at the moment of the change only.
        f"GRANT CREATE ON SCHEMA mama_team TO {WRITER}",
        _V2_OWNERS.format(vector=vector_type),
        f"REVOKE CREATE ON SCHEMA mama_team FROM {WRITER}",
        PRIVILEGES.format(vector=vector_type),
    ]


def migration_3() -> list[str]:
    """Retire (a member's, in the scopes it holds) and purge (the admin's)."""
    return [
        _V3_SCHEMA,
        _RETIRE.replace("'{retire}'", f"'{RETIRE}'").replace("'{purge}'", f"'{PURGE}'"),
        f"GRANT CREATE ON SCHEMA mama_team TO {WRITER}",
        _V3_OWNERS,
        f"REVOKE CREATE ON SCHEMA mama_team FROM {WRITER}",
        RETIRE_PRIVILEGES,
    ]
