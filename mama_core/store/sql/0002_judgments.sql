-- The judgment engine's tables. Judgments are append-only: their text never
-- changes except when the owner purges it; status changes come from later
-- records and each leaves an event.

CREATE TABLE judgments (
    id            INTEGER PRIMARY KEY,          -- also the FTS rowid
    kind          TEXT NOT NULL CHECK (kind IN ('decision', 'fact', 'preference',
                      'constraint', 'lesson', 'workflow', 'task', 'schedule')),
    topic         TEXT NOT NULL DEFAULT '',
    summary       TEXT NOT NULL,
    details       TEXT NOT NULL DEFAULT '',
    applies_when  TEXT,
    steps         TEXT,                         -- JSON array of strings, workflows
    confidence    REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    status        TEXT NOT NULL CHECK (status IN ('proposed', 'active', 'superseded',
                      'stale', 'contradicted', 'rejected', 'purged')),
    superseded_by INTEGER REFERENCES judgments (id),
    outcome       TEXT,                         -- latest outcome; each change is an event
    valid_from    TEXT NOT NULL,                -- world time (ISO 8601 UTC)
    valid_until   TEXT,
    recorded_at   TEXT NOT NULL,                -- store time
    provenance    TEXT NOT NULL,                -- JSON, stamped by the host
    involvement   TEXT NOT NULL CHECK (involvement IN ('owner_stated', 'owner_approved',
                      'agent_inferred', 'source_derived')),
    command_id    TEXT NOT NULL,
    content_hash  TEXT NOT NULL                 -- sha256 of the canonical content
) STRICT;

CREATE INDEX judgments_status_kind ON judgments (status, kind);
CREATE INDEX judgments_superseded_by ON judgments (superseded_by);

-- Text is append-only: only a purge may change it.
CREATE TRIGGER judgments_text_append_only
BEFORE UPDATE OF kind, topic, summary, details, applies_when, steps, valid_from,
    recorded_at, provenance, command_id, content_hash ON judgments
WHEN NEW.status != 'purged'
BEGIN
    SELECT RAISE(ABORT, 'judgments are append-only');
END;

CREATE TRIGGER judgments_no_delete
BEFORE DELETE ON judgments
BEGIN
    SELECT RAISE(ABORT, 'judgments are never deleted; purge erases their text');
END;

CREATE TABLE scopes (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE       -- global | user:NAME | channel:NAME | project:NAME
) STRICT;

CREATE TABLE scope_bindings (
    judgment_id INTEGER NOT NULL REFERENCES judgments (id),
    scope_id    INTEGER NOT NULL REFERENCES scopes (id),
    PRIMARY KEY (judgment_id, scope_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX scope_bindings_scope ON scope_bindings (scope_id, judgment_id);

CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    action      TEXT NOT NULL,
    actor       TEXT NOT NULL,              -- JSON: kind, name, turn
    command_id  TEXT,
    judgment_id INTEGER,                    -- the main record touched, if any
    payload     TEXT NOT NULL,              -- JSON; never the text of a judgment
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE
) STRICT;

CREATE INDEX events_judgment ON events (judgment_id, id);

CREATE TRIGGER events_append_only_update
BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TRIGGER events_append_only_delete
BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TABLE edges (
    id         INTEGER PRIMARY KEY,
    src_id     INTEGER NOT NULL REFERENCES judgments (id),
    dst_id     INTEGER NOT NULL REFERENCES judgments (id),
    kind       TEXT NOT NULL CHECK (kind IN ('supersedes', 'refines', 'contradicts',
                   'builds_on', 'derived_from', 'relates_to', 'caused_by')),
    reason     TEXT,
    created_at TEXT NOT NULL,
    event_id   INTEGER NOT NULL REFERENCES events (id)
) STRICT;

CREATE INDEX edges_src ON edges (src_id, kind);
CREATE INDEX edges_dst ON edges (dst_id, kind);

CREATE TABLE receipts (
    command_id   TEXT PRIMARY KEY,
    principal    TEXT NOT NULL,
    action       TEXT NOT NULL,
    payload_hash TEXT NOT NULL,            -- sha256 of the RFC 8785 canonical payload
    receipt      TEXT NOT NULL,            -- JSON returned on replay
    event_id     INTEGER REFERENCES events (id),
    created_at   TEXT NOT NULL
) STRICT;

CREATE TABLE tombstones (
    id            INTEGER PRIMARY KEY,
    judgment_id   INTEGER REFERENCES judgments (id),
    fingerprint   TEXT NOT NULL,           -- sha256 of the normalised text
    vector        BLOB,                    -- float32, of model_id
    model_id      TEXT,
    reason        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    event_id      INTEGER NOT NULL REFERENCES events (id),
    lifted_at     TEXT,
    lift_event_id INTEGER REFERENCES events (id)
) STRICT;

CREATE INDEX tombstones_fingerprint ON tombstones (fingerprint);

CREATE TABLE tombstone_scopes (
    tombstone_id INTEGER NOT NULL REFERENCES tombstones (id),
    scope_id     INTEGER NOT NULL REFERENCES scopes (id),
    PRIMARY KEY (tombstone_id, scope_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE checkpoints (
    id         INTEGER PRIMARY KEY,
    scope_id   INTEGER NOT NULL REFERENCES scopes (id),
    summary    TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT '{}', -- JSON: open threads, next steps, files
    created_at TEXT NOT NULL,
    provenance TEXT NOT NULL,
    event_id   INTEGER NOT NULL REFERENCES events (id)
) STRICT;

CREATE INDEX checkpoints_scope ON checkpoints (scope_id, id);

CREATE TABLE observations (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,             -- telegram, slack:<team>, gmail, trello, ...
    external_id TEXT NOT NULL,
    author      TEXT NOT NULL DEFAULT '',
    text        TEXT NOT NULL,
    received_at TEXT NOT NULL,
    purged_at   TEXT,
    UNIQUE (source, external_id)
) STRICT;

CREATE TABLE embeddings (
    judgment_id INTEGER NOT NULL REFERENCES judgments (id),
    model_id    TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB NOT NULL,             -- float32 little-endian, L2-normalised
    PRIMARY KEY (judgment_id, model_id)
) STRICT, WITHOUT ROWID;

-- Full-text search, external content over the judgments table. Two indexes:
-- words (Porter stemming, diacritics folded) and trigrams (CJK and partial words).
CREATE VIRTUAL TABLE judgments_fts USING fts5 (
    topic, summary, details,
    content = 'judgments', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE judgments_trigram USING fts5 (
    topic, summary, details,
    content = 'judgments', content_rowid = 'id',
    tokenize = 'trigram'
);

-- Deleted tokens leave the index at once (purge must really erase).
INSERT INTO judgments_fts (judgments_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO judgments_trigram (judgments_trigram, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER judgments_fts_insert AFTER INSERT ON judgments
BEGIN
    INSERT INTO judgments_fts (rowid, topic, summary, details)
        VALUES (NEW.id, NEW.topic, NEW.summary, NEW.details);
    INSERT INTO judgments_trigram (rowid, topic, summary, details)
        VALUES (NEW.id, NEW.topic, NEW.summary, NEW.details);
END;

CREATE TRIGGER judgments_fts_update AFTER UPDATE OF topic, summary, details ON judgments
BEGIN
    INSERT INTO judgments_fts (judgments_fts, rowid, topic, summary, details)
        VALUES ('delete', OLD.id, OLD.topic, OLD.summary, OLD.details);
    INSERT INTO judgments_fts (rowid, topic, summary, details)
        VALUES (NEW.id, NEW.topic, NEW.summary, NEW.details);
    INSERT INTO judgments_trigram (judgments_trigram, rowid, topic, summary, details)
        VALUES ('delete', OLD.id, OLD.topic, OLD.summary, OLD.details);
    INSERT INTO judgments_trigram (rowid, topic, summary, details)
        VALUES (NEW.id, NEW.topic, NEW.summary, NEW.details);
END;
