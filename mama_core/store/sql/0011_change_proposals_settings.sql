-- A change proposed to the owner may now also be a change of the owner's settings
-- (their timezone, the daily brief): in a turn that carried or read words the owner
-- did not write, the agent's owner.set_timezone and owner.set_brief wait here for
-- the owner, like its commitment close or reschedule. A setting has no record, so
-- such a row names the setting (setting_key) instead of a judgment; exactly one of
-- the two is set. One settings change per key waits at a time: a newer one takes
-- the place of the older, which is closed as 'superseded' in the newer one's event.
-- The table is rebuilt as in 0010 (rows keep their ids; indexes are made again).

CREATE TABLE change_proposals_rebuilt (
    id                INTEGER PRIMARY KEY,
    action            TEXT NOT NULL CHECK (action IN ('memory.retire',
                          'memory.update_outcome', 'memory.link',
                          'commitment.close', 'commitment.reschedule',
                          'owner.set_timezone', 'owner.set_brief')),
    judgment_id       INTEGER REFERENCES judgments (id), -- the owner's record, or NULL
    setting_key       TEXT CHECK (setting_key IN ('timezone', 'brief')), -- or NULL
    payload           TEXT NOT NULL,            -- JSON: the proposed action's input
    proposed_by       TEXT NOT NULL,            -- JSON: the proposing actor and turn
    state             TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected',
                          'superseded')),
    created_at        TEXT NOT NULL,
    event_id          INTEGER NOT NULL REFERENCES events (id),
    resolved_at       TEXT,
    resolved_event_id INTEGER REFERENCES events (id),
    CHECK ((judgment_id IS NULL) <> (setting_key IS NULL)),
    CHECK ((setting_key IS NULL) = (action NOT IN ('owner.set_timezone', 'owner.set_brief')))
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
CREATE UNIQUE INDEX change_proposals_one_pending_setting ON change_proposals (setting_key)
    WHERE state = 'pending';
CREATE INDEX change_proposals_state ON change_proposals (state, id);
CREATE INDEX change_proposals_event ON change_proposals (event_id);
CREATE INDEX change_proposals_resolved_event ON change_proposals (resolved_event_id);
