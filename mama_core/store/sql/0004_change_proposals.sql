-- Changes to the owner's records that someone else proposed: an agent's retire,
-- outcome or link on a record the owner stated or approved waits here until the
-- owner approves (the change is applied as the owner's own event) or rejects it
-- (the record is left untouched). At most one change per record waits at a time.

CREATE TABLE change_proposals (
    id                INTEGER PRIMARY KEY,
    action            TEXT NOT NULL CHECK (action IN ('memory.retire',
                          'memory.update_outcome', 'memory.link')),
    judgment_id       INTEGER NOT NULL REFERENCES judgments (id), -- the owner's record
    payload           TEXT NOT NULL,            -- JSON: the proposed action's input
    proposed_by       TEXT NOT NULL,            -- JSON: the proposing actor and turn
    state             TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
    created_at        TEXT NOT NULL,
    event_id          INTEGER NOT NULL REFERENCES events (id),
    resolved_at       TEXT,
    resolved_event_id INTEGER REFERENCES events (id)
) STRICT;

CREATE UNIQUE INDEX change_proposals_one_pending ON change_proposals (judgment_id)
    WHERE state = 'pending';
CREATE INDEX change_proposals_state ON change_proposals (state, id);
