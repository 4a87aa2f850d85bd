"""New proposals become review cards for the owner, each exactly once.

The feed walks ``judgments`` past a durable cursor (``runtime_state``), so it
sees proposals from this process (woken by the engine's change-sets) and from
others (``mama mcp``, the CLI) on its periodic pass; the journal's
de-duplication makes a second look harmless.
"""

from __future__ import annotations

from app.runtime.journal import DeliveryJournal
from app.runtime.state import get_state, set_state
from app.runtime.transaction import RuntimeDb

CURSOR_KEY = "proposal_cursor"


class ProposalFeed:
    """Queues a review card for every judgment that was recorded as proposed."""

    def __init__(self, db: RuntimeDb, journal: DeliveryJournal) -> None:
        self.db = db
        self.journal = journal

    def scan(self) -> list[int]:
        """Queue cards for proposals past the cursor; return the judgment ids queued."""
        cursor = int(get_state(self.db, CURSOR_KEY) or 0)
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT id, status FROM judgments WHERE id > ? ORDER BY id", (cursor,)
            ).fetchall()
        queued: list[int] = []
        for judgment_id, status in rows:
            if str(status) == "proposed" and self.journal.enqueue_proposal(int(judgment_id)):
                queued.append(int(judgment_id))
        if rows:
            set_state(self.db, CURSOR_KEY, str(int(rows[-1][0])))
        return queued
