-- The store's own facts: its id and when it was created.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

INSERT INTO meta (key, value) VALUES
    ('store_id', lower(hex(randomblob(16)))),
    ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
