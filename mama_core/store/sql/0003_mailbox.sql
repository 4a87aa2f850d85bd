-- The owner runtime's durable tables: the mailbox of inputs, the delivery
-- journal of what is sent to the owner, the Telegram pairing, and small
-- runtime cursors. Every input's text lives in `observations` (immutable,
-- purgeable); these tables only point at it.

CREATE TABLE mailbox (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('owner_message', 'source_delta',
                       'scheduled', 'native_event')),
    source_ref     TEXT NOT NULL UNIQUE,           -- de-duplication key: SOURCE:EXTERNAL_ID
    observation_id INTEGER NOT NULL REFERENCES observations (id),
    priority       INTEGER NOT NULL,               -- lower first: owner messages are 0
    meta           TEXT NOT NULL DEFAULT '{}',     -- JSON: chat/message ids, never the text
    state          TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done', 'dead')),
    attempts       INTEGER NOT NULL DEFAULT 0,     -- claims so far
    available_at   TEXT NOT NULL,                  -- not claimed before this instant
    claim_token    TEXT,
    claimed_at     TEXT,
    last_error     TEXT,
    created_at     TEXT NOT NULL,
    finished_at    TEXT
) STRICT;

CREATE INDEX mailbox_due ON mailbox (state, priority, available_at, id);

-- The delivery journal: each message for the owner is a row before it is
-- sent, so a restart neither loses it nor sends it twice. A message the
-- channel splits is sent part by part; `parts_sent` counts the parts done.
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('reply', 'proposal', 'notice')),
    input_id        INTEGER REFERENCES mailbox (id),
    observation_id  INTEGER REFERENCES observations (id),   -- the text (replies, notices)
    judgment_id     INTEGER REFERENCES judgments (id),      -- the proposal shown
    dedup_key       TEXT NOT NULL UNIQUE,
    state           TEXT NOT NULL CHECK (state IN ('queued', 'sending', 'sent',
                        'uncertain', 'failed')),
    parts_sent      INTEGER NOT NULL DEFAULT 0,
    parts_uncertain INTEGER NOT NULL DEFAULT 0,    -- parts a crash caught in flight
    attempts        INTEGER NOT NULL DEFAULT 0,
    available_at    TEXT NOT NULL,
    last_error      TEXT,
    external_ref    TEXT,                          -- e.g. telegram:CHAT:MESSAGE (last part)
    created_at      TEXT NOT NULL,
    sent_at         TEXT
) STRICT;

CREATE INDEX deliveries_due ON deliveries (state, available_at, id);
CREATE INDEX deliveries_input ON deliveries (input_id);

-- The one paired Telegram owner (chat and user), and one-time pairing codes.
CREATE TABLE telegram_owner (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    chat_id   INTEGER NOT NULL,
    user_id   INTEGER NOT NULL,
    username  TEXT NOT NULL DEFAULT '',
    paired_at TEXT NOT NULL
) STRICT;

CREATE TABLE pairing_codes (
    code_hash  TEXT PRIMARY KEY,                   -- sha256 of the code
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
) STRICT;

-- Small durable cursors of the runtime (last judgment announced, agent session ids).
CREATE TABLE runtime_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
