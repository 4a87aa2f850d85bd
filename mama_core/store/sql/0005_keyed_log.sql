-- The log keeps keyed hashes, reasons are erasable text beside it, and the rows
-- written outside the one writer carry a keyed seal that `mama verify` checks.

-- Reasons (retire, reject, link, outcome, tombstone) live here, outside the
-- hash-chained event: the event keeps only the keyed hash of the text, so a
-- purge can erase the text (text NULL, erased_at set) and the chain still holds.
-- Events written before this version kept their reasons in the chained payload;
-- those stay as they were (the chain cannot be rewritten).
CREATE TABLE event_texts (
    event_id  INTEGER NOT NULL REFERENCES events (id),
    field     TEXT NOT NULL,            -- reason, outcome_reason
    text      TEXT,                     -- NULL once a purge erased it
    erased_at TEXT,
    PRIMARY KEY (event_id, field)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER event_texts_no_delete
BEFORE DELETE ON event_texts
BEGIN
    SELECT RAISE(ABORT, 'event texts are never deleted; a purge erases their text');
END;

CREATE TRIGGER event_texts_erase_only
BEFORE UPDATE ON event_texts
WHEN NEW.text IS NOT NULL OR NEW.event_id != OLD.event_id OR NEW.field != OLD.field
BEGIN
    SELECT RAISE(ABORT, 'event texts only change by being erased');
END;

-- Rows purged before this version kept a bare sha256 of their content: drop it
-- (the old events' copies cannot be changed; they stay, as the chain requires).
UPDATE judgments SET content_hash = '' WHERE status = 'purged';

-- Each event records the digests of the rows naming it (coverage.CHAINED):
-- these find them without scanning the tables on every write.
CREATE INDEX receipts_event ON receipts (event_id);
CREATE INDEX edges_event ON edges (event_id);
CREATE INDEX tombstones_event ON tombstones (event_id);
CREATE INDEX tombstones_lift_event ON tombstones (lift_event_id);
CREATE INDEX checkpoints_event ON checkpoints (event_id);
CREATE INDEX change_proposals_event ON change_proposals (event_id);
CREATE INDEX change_proposals_resolved_event ON change_proposals (resolved_event_id);

-- Seals: mama_seal() is the keyed hash of a row, registered on every store
-- connection (never stored). The triggers seal each insert and each legitimate
-- change, so no writer can forget; a change made without them breaks the seal.
ALTER TABLE observations ADD COLUMN seal TEXT;
ALTER TABLE telegram_owner ADD COLUMN seal TEXT;
ALTER TABLE embeddings ADD COLUMN seal TEXT;
ALTER TABLE mailbox ADD COLUMN seal TEXT;

UPDATE observations SET seal = mama_seal('observations', id, source, external_id, author,
    text, received_at, purged_at);
UPDATE telegram_owner SET seal = mama_seal('telegram_owner', id, chat_id, user_id, username,
    paired_at);
UPDATE embeddings SET seal = mama_seal('embeddings', judgment_id, model_id, dim, vector);
UPDATE mailbox SET seal = mama_seal('mailbox', id, kind, source_ref, observation_id, priority,
    meta, created_at);

CREATE TRIGGER observations_seal_insert AFTER INSERT ON observations
BEGIN
    UPDATE observations SET seal = mama_seal('observations', NEW.id, NEW.source,
        NEW.external_id, NEW.author, NEW.text, NEW.received_at, NEW.purged_at)
    WHERE id = NEW.id;
END;

CREATE TRIGGER observations_seal_update
AFTER UPDATE OF source, external_id, author, text, received_at, purged_at ON observations
BEGIN
    UPDATE observations SET seal = mama_seal('observations', NEW.id, NEW.source,
        NEW.external_id, NEW.author, NEW.text, NEW.received_at, NEW.purged_at)
    WHERE id = NEW.id;
END;

CREATE TRIGGER telegram_owner_seal_insert AFTER INSERT ON telegram_owner
BEGIN
    UPDATE telegram_owner SET seal = mama_seal('telegram_owner', NEW.id, NEW.chat_id,
        NEW.user_id, NEW.username, NEW.paired_at)
    WHERE id = NEW.id;
END;

CREATE TRIGGER telegram_owner_seal_update
AFTER UPDATE OF id, chat_id, user_id, username, paired_at ON telegram_owner
BEGIN
    UPDATE telegram_owner SET seal = mama_seal('telegram_owner', NEW.id, NEW.chat_id,
        NEW.user_id, NEW.username, NEW.paired_at)
    WHERE id = NEW.id;
END;

CREATE TRIGGER embeddings_seal_insert AFTER INSERT ON embeddings
BEGIN
    UPDATE embeddings SET seal = mama_seal('embeddings', NEW.judgment_id, NEW.model_id,
        NEW.dim, NEW.vector)
    WHERE judgment_id = NEW.judgment_id AND model_id = NEW.model_id;
END;

CREATE TRIGGER embeddings_seal_update AFTER UPDATE OF judgment_id, model_id, dim, vector
ON embeddings
BEGIN
    UPDATE embeddings SET seal = mama_seal('embeddings', NEW.judgment_id, NEW.model_id,
        NEW.dim, NEW.vector)
    WHERE judgment_id = NEW.judgment_id AND model_id = NEW.model_id;
END;

-- A mailbox entry's identity (kind, source, text) never changes; only its state does.
CREATE TRIGGER mailbox_seal_insert AFTER INSERT ON mailbox
BEGIN
    UPDATE mailbox SET seal = mama_seal('mailbox', NEW.id, NEW.kind, NEW.source_ref,
        NEW.observation_id, NEW.priority, NEW.meta, NEW.created_at)
    WHERE id = NEW.id;
END;
