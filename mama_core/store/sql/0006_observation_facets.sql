-- Where an observation came from beyond its source: the channel (a Slack channel,
-- a mail folder, a Trello board), the memory scope it belongs to, and metadata
-- (JSON: thread, subject, attachments by name and size, url). Connector items
-- carry one; the owner's messages and MAMA's replies do not.
--
-- The scope is what bounds an agent's reads of observations (observation.list /
-- observation.read): an agent sees an item only if its grant holds the item's
-- scope. A purge empties the metadata with the text (a subject is the owner's to
-- forget too); the channel and scope stay, as the source and external id do.
CREATE TABLE observation_facets (
    observation_id INTEGER PRIMARY KEY REFERENCES observations (id),
    channel        TEXT NOT NULL DEFAULT '',
    scope          TEXT NOT NULL,
    metadata       TEXT NOT NULL DEFAULT '{}',
    seal           TEXT
) STRICT;

CREATE INDEX observation_facets_scope ON observation_facets (scope, observation_id);

CREATE TRIGGER observation_facets_no_delete
BEFORE DELETE ON observation_facets
BEGIN
    SELECT RAISE(ABORT, 'observation facets are never deleted; a purge erases their metadata');
END;

CREATE TRIGGER observation_facets_erase_only
BEFORE UPDATE OF observation_id, channel, scope, metadata ON observation_facets
WHEN NEW.observation_id != OLD.observation_id OR NEW.channel != OLD.channel
    OR NEW.scope != OLD.scope OR NEW.metadata != '{}'
BEGIN
    SELECT RAISE(ABORT, 'observation facets only change by having their metadata erased');
END;

CREATE TRIGGER observation_facets_seal_insert AFTER INSERT ON observation_facets
BEGIN
    UPDATE observation_facets SET seal = mama_seal('observation_facets', NEW.observation_id,
        NEW.channel, NEW.scope, NEW.metadata)
    WHERE observation_id = NEW.observation_id;
END;

CREATE TRIGGER observation_facets_seal_update
AFTER UPDATE OF observation_id, channel, scope, metadata ON observation_facets
BEGIN
    UPDATE observation_facets SET seal = mama_seal('observation_facets', NEW.observation_id,
        NEW.channel, NEW.scope, NEW.metadata)
    WHERE observation_id = NEW.observation_id;
END;
