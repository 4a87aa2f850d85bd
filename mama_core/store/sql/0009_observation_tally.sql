-- Observations are never deleted (a purge erases their text), and a deletion is
-- found: the seal of each row shows an edit, not a row gone. So the store keeps a
-- tally, one sealed row: how many observations were ever inserted and the last id,
-- counted by a trigger in the inserting transaction; `mama verify` compares it with
-- the rows there, and the chain anchor kept outside the file carries the count too
-- (a tally put back from an older copy is found as well).
--
-- `anchored` is 1 once a chain anchor has been kept outside the file: from then on
-- the store does not verify without one (deleting the anchor is not a way out).
CREATE TABLE store_tally (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    observations     INTEGER NOT NULL,
    last_observation INTEGER NOT NULL,
    anchored         INTEGER NOT NULL DEFAULT 0 CHECK (anchored IN (0, 1)),
    seal             TEXT
) STRICT;

INSERT INTO store_tally (id, observations, last_observation)
SELECT 1, count(*), coalesce(max(id), 0) FROM observations;

UPDATE store_tally SET seal = mama_seal('store_tally', id, observations, last_observation,
    anchored);

CREATE TRIGGER observations_no_delete
BEFORE DELETE ON observations
BEGIN
    SELECT RAISE(ABORT, 'observations are never deleted; a purge erases their text');
END;

CREATE TRIGGER observations_tally AFTER INSERT ON observations
BEGIN
    UPDATE store_tally SET observations = observations + 1,
        last_observation = max(last_observation, NEW.id)
    WHERE id = 1;
END;

CREATE TRIGGER store_tally_no_delete
BEFORE DELETE ON store_tally
BEGIN
    SELECT RAISE(ABORT, 'the store tally is never deleted');
END;

CREATE TRIGGER store_tally_only_grows
BEFORE UPDATE OF id, observations, last_observation, anchored ON store_tally
WHEN NEW.id != OLD.id OR NEW.observations < OLD.observations
    OR NEW.last_observation < OLD.last_observation OR NEW.anchored < OLD.anchored
BEGIN
    SELECT RAISE(ABORT, 'the store tally only grows');
END;

CREATE TRIGGER store_tally_seal
AFTER UPDATE OF id, observations, last_observation, anchored ON store_tally
BEGIN
    UPDATE store_tally SET seal = mama_seal('store_tally', NEW.id, NEW.observations,
        NEW.last_observation, NEW.anchored)
    WHERE id = NEW.id;
END;
