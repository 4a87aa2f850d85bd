-- The owner's settings that steer the agent's schedule: the owner's timezone and
-- the daily brief (on or off, which days, what time, what it covers). Each
-- change is a new row written by the one writer with its event (append-only,
-- like judgments); the latest row per key is the setting in force. Only the
-- owner, or an agent in a turn the owner started, may write one
-- (owner.set_timezone, owner.set_brief).
CREATE TABLE owner_settings (
    id       INTEGER PRIMARY KEY,
    key      TEXT NOT NULL,             -- 'timezone' | 'brief'
    value    TEXT NOT NULL,             -- JSON
    event_id INTEGER NOT NULL,
    at       TEXT NOT NULL
) STRICT;

CREATE INDEX owner_settings_key ON owner_settings (key, id);
CREATE INDEX owner_settings_event ON owner_settings (event_id);

CREATE TRIGGER owner_settings_no_update
BEFORE UPDATE ON owner_settings
BEGIN
    SELECT RAISE(ABORT, 'owner settings are never changed in place; append a new row');
END;

CREATE TRIGGER owner_settings_no_delete
BEFORE DELETE ON owner_settings
BEGIN
    SELECT RAISE(ABORT, 'owner settings are never deleted; append a new row');
END;
