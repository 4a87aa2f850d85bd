"""New proposals become review cards for the owner, each exactly once: proposed
judgments, and changes an agent proposed to the owner's records.

The feed walks ``judgments`` past a durable cursor (``runtime_state``), so it
sees proposals from this process and from others (``mama mcp``, the CLI) as
soon as the engine's change-sets announce them (the periodic pass is a fallback);
the journal's de-duplication makes a second look harmless.

The first scan of a store (no cursor yet: the runtime never ran on it) cards
a few waiting proposals, but a backlog becomes one notice instead of a flood
of cards — they wait in the tray's review window.
"""

from __future__ import annotations

from app.durable.journal import DeliveryJournal
from app.durable.state import get_state, set_state
from app.durable.transaction import RuntimeDb

CURSOR_KEY = "proposal_cursor"
CHANGE_CURSOR_KEY = "change_proposal_cursor"
FIRST_SCAN_CARDS = 3
"""At most this many proposals older than the runtime are sent as cards."""


class ProposalFeed:
    """Queues a review card for every judgment that was recorded as proposed."""

    def __init__(self, db: RuntimeDb, journal: DeliveryJournal) -> None:
        self.db = db
        self.journal = journal

    def scan(self) -> list[int]:
        """Queue cards for proposals (and changes proposed to the owner's records) past
        the cursors; return the judgment ids queued."""
        return self._scan_judgments() + self._scan_changes()

    def _scan_judgments(self) -> list[int]:
        stored = get_state(self.db, CURSOR_KEY)
        if stored is None:
            return self._first_scan()
        cursor = int(stored)
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

    def _first_scan(self) -> list[int]:
        with self.db.read() as conn:
            last = int(conn.execute("SELECT coalesce(max(id), 0) FROM judgments").fetchone()[0])
            waiting = [
                int(row[0])
                for row in conn.execute(
                    "SELECT id FROM judgments WHERE status = 'proposed' AND id <= ? ORDER BY id",
                    (last,),
                )
            ]
        queued: list[int] = []
        if len(waiting) <= FIRST_SCAN_CARDS:
            queued = [j for j in waiting if self.journal.enqueue_proposal(j)]
        else:
            self.journal.enqueue_notice(
                f"backlog:{last}",
                f"{len(waiting)} proposals made before I was connected are waiting for your "
                "review: open Review in the MAMA tray. New ones will come here.",
            )
        set_state(self.db, CURSOR_KEY, str(last))
        return queued

    def _scan_changes(self) -> list[int]:
        """Cards for changes an agent proposed to the owner's records (a retirement, an
        outcome, a link), each once; Approve on the card applies it as the owner."""
        stored = get_state(self.db, CHANGE_CURSOR_KEY)
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT id, judgment_id, state FROM change_proposals WHERE id > ? ORDER BY id",
                (int(stored or 0),),
            ).fetchall()
        waiting = [(int(r[0]), int(r[1])) for r in rows if str(r[2]) == "pending"]
        if stored is None and len(waiting) > FIRST_SCAN_CARDS:
            waiting = []  # a backlog waits in the review window, as for proposals
        queued = [
            judgment_id
            for change_id, judgment_id in waiting
            if self.journal.enqueue_proposal(judgment_id, key=f"change:{change_id}")
        ]
        if rows or stored is None:
            set_state(self.db, CHANGE_CURSOR_KEY, str(int(rows[-1][0]) if rows else 0))
        return queued
