-- A connector's parts (a Slack channel, a mail folder, a Trello board) that its
-- last poll could not read while it read the others: each is the owner's own
-- problem to see and fix, without stopping the rest of that source. Replaced by
-- every stored batch (a part read again is gone from here). No source text.

CREATE TABLE connector_parts (
    name    TEXT NOT NULL,                 -- the connector (connector_health.name)
    part    TEXT NOT NULL,                 -- '#ops', 'Projects', a board name
    code    TEXT NOT NULL,                 -- a Problem value: not_found, missing_scope
    message TEXT NOT NULL,                 -- one line for the owner
    since   TEXT NOT NULL,                 -- first poll that could not read it
    PRIMARY KEY (name, part)
) STRICT;
