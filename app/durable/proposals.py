"""New proposals become review cards for the owner, each exactly once: proposed
judgments, and changes an agent proposed to the owner's records.

The feed walks ``judgments`` past a durable cursor (``runtime_state``), so it
sees proposals from this process and from others (``mama mcp``, the CLI) as
soon as the engine's change-sets announce them (the periodic pass is a fallback);
the journal's de-duplication makes a second look harmless.

Proposals saved in one source-delta turn become ONE card for that turn ("4 things
found in #ops"), queued once the turn is over (the cursor waits on the first of
them until then), instead of one card each.

The first scan of a store (no cursor yet: the runtime never ran on it) cards
a few waiting proposals, but a backlog becomes one notice instead of a flood
of cards — they wait in the tray's review window.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.durable.journal import DeliveryJournal
from app.durable.mailbox import input_state, input_state_by_ref
from app.durable.state import get_state, set_state
from app.durable.transaction import RuntimeDb
from mama_core.memory.proposal_reads import (
    newest_id,
    proposed_in_turn_of,
    proposed_up_to,
    recorded_after,
)
from mama_core.memory.proposed_changes import ChangeProposal, changes_after, pending_by_id
from mama_core.store.connection import Connection

CURSOR_KEY = "proposal_cursor"
CHANGE_CURSOR_KEY = "change_proposal_cursor"
CHANGE_KEY = "change:"
"""The de-duplication key of a proposed change's card is this and the change's id."""
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
        cards: list[tuple[int, int | None]] = []  # (judgment id, group's input id)
        with self.db.read() as conn:
            rows = recorded_after(conn, cursor)
            for judgment_id, status, provenance in rows:
                if status != "proposed":
                    cursor = judgment_id
                    continue
                group = _turn_group(conn, provenance)
                if group is not None and not group.finished:
                    break  # its turn still runs: card the turn's proposals together after
                if group is not None and len(group.ids) > 1:
                    cards.append((group.ids[0], group.input_id))
                else:
                    cards.append((judgment_id, None))
                cursor = judgment_id
        queued: list[int] = []
        for judgment_id, input_id in cards:
            key = None if input_id is None else f"group:{input_id}"
            if self.journal.enqueue_proposal(judgment_id, key=key, group_input=input_id):
                queued.append(judgment_id)
        if rows:
            set_state(self.db, CURSOR_KEY, str(cursor))
        return queued

    def _first_scan(self) -> list[int]:
        with self.db.read() as conn:
            last = newest_id(conn)
            waiting = proposed_up_to(conn, last)
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
        outcome, a link) or settings (timezone, brief), each once; Approve on the card
        applies it as the owner. Returns the records' ids (a settings card has none)."""
        stored = get_state(self.db, CHANGE_CURSOR_KEY)
        with self.db.read() as conn:
            rows = changes_after(conn, int(stored or 0))
        waiting = [
            (change_id, judgment_id) for change_id, judgment_id, state in rows if state == "pending"
        ]
        if stored is None and len(waiting) > FIRST_SCAN_CARDS:
            waiting = []  # a backlog waits in the review window, as for proposals
        queued = [
            judgment_id
            for change_id, judgment_id in waiting
            if self.journal.enqueue_proposal(judgment_id, key=f"{CHANGE_KEY}{change_id}")
            and judgment_id is not None
        ]
        if rows or stored is None:
            set_state(self.db, CHANGE_CURSOR_KEY, str(rows[-1][0] if rows else 0))
        return queued


@dataclass(frozen=True)
class ProposalGroup:
    """What one source-delta turn proposed: reviewed together, on one card."""

    input_id: int
    source_ref: str
    finished: bool
    """The turn is over (done or given up): nothing more will join the group."""
    origin: str
    ids: tuple[int, ...]
    """The group's proposals still waiting for the owner, oldest first."""


def proposal_group(db: RuntimeDb, input_id: int) -> ProposalGroup | None:
    """The proposals the turn of source-delta input ``input_id`` made (None: no input)."""
    with db.read() as conn:
        row = input_state(conn, input_id)
        return None if row is None else _group(conn, row)


def _turn_group(conn: Connection, provenance_json: str) -> ProposalGroup | None:
    """The group of a proposal saved in a source-delta turn, or None (any other turn)."""
    try:
        provenance: Any = json.loads(provenance_json)
    except ValueError:
        return None
    if not isinstance(provenance, dict) or provenance.get("turn") != "source_delta":
        return None
    refs: Any = provenance.get("source_refs")  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(refs, list) or len(refs) < 2:  # pyright: ignore[reportUnknownArgumentType]
        return None
    row = input_state_by_ref(conn, str(refs[1]))
    return None if row is None else _group(conn, row)


def _group(conn: Connection, row: tuple[int, str, str]) -> ProposalGroup:
    input_id, source_ref, state = row
    members = proposed_in_turn_of(conn, source_ref)
    origin = next((str(o) for _, o in members if o), "") or source_ref
    return ProposalGroup(
        input_id,
        source_ref,
        state in ("done", "dead"),
        origin,
        tuple(j for j, _ in members),
    )


def waiting_setting_change(db: RuntimeDb, key: str) -> ChangeProposal | None:
    """The change to the owner's settings a card with de-duplication ``key`` shows, if
    it still waits (decided or superseded since: None, and the card is not sent)."""
    if not key.startswith(CHANGE_KEY) or not key[len(CHANGE_KEY) :].isdigit():
        return None
    with db.read() as conn:
        change = pending_by_id(conn, int(key[len(CHANGE_KEY) :]))
    return change if change is not None and change.setting_key is not None else None
