-- A vector's seal may come with its row. The insert trigger of 0005 rewrote every
-- new embeddings row to add its seal: a second write of a 1.5 KB row that lives on
-- an overflow page, so each save freed, zeroed (secure_delete) and allocated a page
-- more than it needed. A writer that computes the seal itself now passes it in the
-- INSERT; the trigger still checks it and seals any row that came without its seal,
-- or with a wrong one, so no writer can forget it and none can forge it.

DROP TRIGGER embeddings_seal_insert;

CREATE TRIGGER embeddings_seal_insert AFTER INSERT ON embeddings
WHEN NEW.seal IS NOT mama_seal('embeddings', NEW.judgment_id, NEW.model_id, NEW.dim,
    NEW.vector)
BEGIN
    UPDATE embeddings SET seal = mama_seal('embeddings', NEW.judgment_id, NEW.model_id,
        NEW.dim, NEW.vector)
    WHERE judgment_id = NEW.judgment_id AND model_id = NEW.model_id;
END;
