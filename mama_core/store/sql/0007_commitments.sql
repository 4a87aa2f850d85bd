-- Commitments: a judgment kind for who owes what to whom by when, with its terms
-- in a side table written in the same transaction as the judgment.
--
-- 1. judgments.kind may now be 'commitment'. SQLite cannot change a CHECK in place,
-- so the table is rebuilt as SQLite documents ("Making Other Kinds Of Table Schema
-- Changes"): the runner turns foreign keys off outside this transaction and runs
-- PRAGMA foreign_key_check before it commits. Rows keep their ids, so the FTS
-- indexes (external content, rowid = id) and every reference stay valid; the
-- indexes and triggers dropped with the old table are made again, word for word.

CREATE TABLE judgments_rebuilt (
    id            INTEGER PRIMARY KEY,          -- also the FTS rowid
    kind          TEXT NOT NULL CHECK (kind IN ('decision', 'fact', 'preference',
                      'constraint', 'lesson', 'workflow', 'task', 'schedule',
                      'commitment')),
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

INSERT INTO judgments_rebuilt (id, kind, topic, summary, details, applies_when, steps,
    confidence, status, superseded_by, outcome, valid_from, valid_until, recorded_at,
    provenance, involvement, command_id, content_hash)
SELECT id, kind, topic, summary, details, applies_when, steps, confidence, status,
    superseded_by, outcome, valid_from, valid_until, recorded_at, provenance, involvement,
    command_id, content_hash
FROM judgments;

DROP TABLE judgments;
ALTER TABLE judgments_rebuilt RENAME TO judgments;

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

-- 2. The terms of each commitment record. Append-only like judgments: closing or
-- rescheduling a commitment appends a new judgment (superseding the open one) with
-- its own terms row; a row changes only when a purge erases it. The "what" is the
-- judgment's summary; the names of who owes whom and the due are the owner's to
-- forget too, so a purge empties them (owed_by, owed_to '', due NULL, erased_at set).
CREATE TABLE commitment_terms (
    judgment_id INTEGER PRIMARY KEY REFERENCES judgments (id),
    owed_by     TEXT NOT NULL,              -- 'owner' or a person's name
    owed_to     TEXT NOT NULL,              -- 'owner', a person's name, or '' (unnamed)
    due_at      TEXT,                       -- ISO 8601 UTC, or NULL (no due)
    due_tz      TEXT,                       -- the IANA zone the due was given in
    state       TEXT NOT NULL CHECK (state IN ('open', 'done', 'dropped')),
    event_id    INTEGER NOT NULL REFERENCES events (id),
    erased_at   TEXT
) STRICT;

CREATE INDEX commitment_terms_event ON commitment_terms (event_id);
CREATE INDEX commitment_terms_state_due ON commitment_terms (state, due_at);

CREATE TRIGGER commitment_terms_no_delete
BEFORE DELETE ON commitment_terms
BEGIN
    SELECT RAISE(ABORT, 'commitment terms are never deleted; a purge erases them');
END;

CREATE TRIGGER commitment_terms_erase_only
BEFORE UPDATE ON commitment_terms
WHEN NEW.judgment_id != OLD.judgment_id OR NEW.state != OLD.state
    OR NEW.event_id != OLD.event_id OR NEW.erased_at IS NULL OR NEW.owed_by != ''
    OR NEW.owed_to != '' OR NEW.due_at IS NOT NULL OR NEW.due_tz IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'commitment terms only change by being erased');
END;

-- The observations a commitment was found in (ids only: a purge of the observation
-- erases its text there, the link stays).
CREATE TABLE commitment_sources (
    judgment_id    INTEGER NOT NULL REFERENCES judgments (id),
    observation_id INTEGER NOT NULL REFERENCES observations (id),
    PRIMARY KEY (judgment_id, observation_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX commitment_sources_observation ON commitment_sources (observation_id);

CREATE TRIGGER commitment_sources_no_update
BEFORE UPDATE ON commitment_sources
BEGIN
    SELECT RAISE(ABORT, 'commitment sources are append-only');
END;

CREATE TRIGGER commitment_sources_no_delete
BEFORE DELETE ON commitment_sources
BEGIN
    SELECT RAISE(ABORT, 'commitment sources are append-only');
END;
