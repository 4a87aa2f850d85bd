-- A change proposed to the owner's records may now also close or reschedule a
-- commitment: in a turn that carried or read words the owner did not write (a
-- forwarded mail, an observation read with a tool), the agent's commitment.close
-- and commitment.reschedule wait here for the owner, like its retire, outcome and
-- link. SQLite cannot change a CHECK in place, so the table is rebuilt as in 0007
-- (rows keep their ids; the indexes dropped with the old table are made again).

CREATE TABLE change_proposals_rebuilt (
    id                INTEGER PRIMARY KEY,
    action            TEXT NOT NULL CHECK (action IN ('memory.retire',
                          'memory.update_outcome', 'memory.link',
                          'commitment.close', 'commitment.reschedule')),
    judgment_id       INTEGER NOT NULL REFERENCES judgments (id), -- the owner's record
    payload           TEXT NOT NULL,            -- JSON: the proposed action's input
    proposed_by       TEXT NOT NULL,            -- JSON: the proposing actor and turn
    state             TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
    created_at        TEXT NOT NULL,
    event_id          INTEGER NOT NULL REFERENCES events (id),
    resolved_at       TEXT,
    resolved_event_id INTEGER REFERENCES events (id)
) STRICT;

INSERT INTO change_proposals_rebuilt (id, action, judgment_id, payload, proposed_by, state,
    created_at, event_id, resolved_at, resolved_event_id)
SELECT id, action, judgment_id, payload, proposed_by, state, created_at, event_id,
    resolved_at, resolved_event_id
FROM change_proposals;

DROP TABLE change_proposals;
ALTER TABLE change_proposals_rebuilt RENAME TO change_proposals;

CREATE UNIQUE INDEX change_proposals_one_pending ON change_proposals (judgment_id)
    WHERE state = 'pending';
CREATE INDEX change_proposals_state ON change_proposals (state, id);
CREATE INDEX change_proposals_event ON change_proposals (event_id);
CREATE INDEX change_proposals_resolved_event ON change_proposals (resolved_event_id);
