-- Connectors: each one's durable cursor (written in the same transaction as the
-- observations it covers, so a crash never loses or repeats an item) and its
-- health (last poll, items stored, last error, whether it waits for the owner),
-- which `mama doctor`, `mama connectors list` and the tray read. The items
-- themselves are observations (with their channel, scope and metadata in the
-- core's observation_facets); nothing here holds source text.

CREATE TABLE connector_cursors (
    name       TEXT PRIMARY KEY,           -- the owner's name for the connector
    cursor     TEXT NOT NULL,              -- opaque to the runtime (JSON by convention)
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE connector_health (
    name             TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('idle', 'ok', 'failing', 'blocked',
                         'paused')),
    owner_paused     INTEGER NOT NULL DEFAULT 0,   -- `mama connectors pause` (any process)
    blocked_settings TEXT,                 -- fingerprint of the settings that were refused
    last_poll_at     TEXT,
    last_ok_at       TEXT,
    items_stored     INTEGER NOT NULL DEFAULT 0,
    failures         INTEGER NOT NULL DEFAULT 0,   -- in a row, for the backoff
    last_error_code  TEXT,
    last_error       TEXT,
    next_poll_at     TEXT,
    updated_at       TEXT NOT NULL
) STRICT;
