-- A save that says exactly what a live record says (after normalising: case, punctuation,
-- spacing) is found with one index lookup instead of reading the records of its
-- neighbourhood: said_keys holds, per record not purged, the keyed hash of its
-- normalised summary and "applies when" (mama_said_key, under the store secret, so a
-- short text cannot be found by trying every value). Derived from judgments, like the
-- full-text indexes: kept by these triggers in the writer's own transaction, emptied of
-- a record when it is purged. The save still compares the texts themselves.
-- Safe to run again (a store put back to an older version re-runs what follows it).

CREATE TABLE IF NOT EXISTS said_keys (
    judgment_id INTEGER PRIMARY KEY REFERENCES judgments (id),
    said_key    TEXT NOT NULL
) STRICT;

CREATE INDEX IF NOT EXISTS said_keys_by_key ON said_keys (said_key);

INSERT OR REPLACE INTO said_keys (judgment_id, said_key)
SELECT id, mama_said_key(summary, applies_when) FROM judgments WHERE status != 'purged';

DROP TRIGGER IF EXISTS said_keys_insert;
CREATE TRIGGER said_keys_insert AFTER INSERT ON judgments
WHEN NEW.status != 'purged'
BEGIN
    INSERT INTO said_keys (judgment_id, said_key)
    VALUES (NEW.id, mama_said_key(NEW.summary, NEW.applies_when));
END;

DROP TRIGGER IF EXISTS said_keys_update;
CREATE TRIGGER said_keys_update AFTER UPDATE OF summary, applies_when, status ON judgments
WHEN NEW.summary IS NOT OLD.summary
    OR NEW.applies_when IS NOT OLD.applies_when
    OR (NEW.status = 'purged') IS NOT (OLD.status = 'purged')
BEGIN
    DELETE FROM said_keys WHERE judgment_id = NEW.id;
    INSERT INTO said_keys (judgment_id, said_key)
    SELECT NEW.id, mama_said_key(NEW.summary, NEW.applies_when) WHERE NEW.status != 'purged';
END;
