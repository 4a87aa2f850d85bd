-- A save that says exactly what a live record says (after normalising: case, punctuation,
-- spacing) is found with one index lookup instead of reading the records of its
-- neighbourhood: said_keys holds, per record not purged, the keyed hash of its
-- normalised summary and "applies when" (mama_said_key, under the store secret, so a
-- short text cannot be found by trying every value). Derived from judgments, like the
-- full-text indexes: the writer adds a record's key with the record (Tx.append_judgment)
-- and deletes it when the record is purged, in the same transaction (no trigger: a
-- trigger calling a MAMA function would make judgments unwritable to plain SQL, which
-- verify must be able to catch). The save still compares the texts themselves.
-- Safe to run again (a store put back to an older version re-runs what follows it).

CREATE TABLE IF NOT EXISTS said_keys (
    judgment_id INTEGER PRIMARY KEY REFERENCES judgments (id),
    said_key    TEXT NOT NULL
) STRICT;

CREATE INDEX IF NOT EXISTS said_keys_by_key ON said_keys (said_key);

INSERT OR REPLACE INTO said_keys (judgment_id, said_key)
SELECT id, mama_said_key(summary, applies_when) FROM judgments WHERE status != 'purged';
