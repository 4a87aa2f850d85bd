-- The Telegram pairing belongs to the app: the one paired owner (chat and user)
-- and the one-time pairing codes.
--
-- Adopted, not created anew: every store made so far got these tables from the
-- core's 0003_mailbox.sql (which stays as it is: the schema check rebuilds each
-- store's expected schema from the files applied to it, and the core's
-- 0005_keyed_log.sql seals telegram_owner for `mama verify`). The statements are
-- theirs word for word, with IF NOT EXISTS, so on every store this migration only
-- records that the app's series owns them (`schema:app` = 1 in `meta`); a change
-- to them from now on is a new file here, never a core migration.

CREATE TABLE IF NOT EXISTS telegram_owner (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    chat_id   INTEGER NOT NULL,
    user_id   INTEGER NOT NULL,
    username  TEXT NOT NULL DEFAULT '',
    paired_at TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS pairing_codes (
    code_hash  TEXT PRIMARY KEY,                   -- sha256 of the code
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
) STRICT;
