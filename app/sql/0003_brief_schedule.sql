-- The daily brief's schedule and the briefs written, so that a restart neither
-- repeats a brief nor forgets one that fell due while the app was closed.
-- Nothing here holds text: the brief itself is a reply in the delivery journal.

CREATE TABLE schedules (
    name        TEXT PRIMARY KEY,      -- 'brief'
    fingerprint TEXT NOT NULL,         -- the settings it was armed with (a change re-arms)
    armed_at    TEXT NOT NULL,         -- no due time before this counts as missed
    last_due_at TEXT,                  -- the latest due time posted to the mailbox
    updated_at  TEXT NOT NULL
) STRICT;

-- One row per brief written for a scheduled input: the next brief counts what is
-- new since the last one whose input was answered.
CREATE TABLE briefs (
    input_id       INTEGER PRIMARY KEY,   -- mailbox.id of the scheduled input
    built_at       TEXT NOT NULL,
    through_obs_id INTEGER NOT NULL       -- the newest observation it covered
) STRICT;
