"""The desk's side of the one conversation: its messages, what became of them, the history.

A message the owner types at the desk (``mama ask``, ``mama chat``) is an owner
message in the same mailbox as Telegram's, with source ``desk``; whichever
process runs the agent answers it, and the reply is journalled as for any input.
So any process can follow a desk turn through the store alone: ``outcome`` reads
the input's state and its reply, and ``conversation`` the exchange as both the
desk and Telegram wrote it (purged words are left out).

A runtime that takes desk turns from other processes says so under
``DESK_SERVER_KEY`` while it runs (an older MAMA never writes it), so the desk
knows whether a busy runtime lock means "hand the turn over" or "refuse".
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime

from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.mailbox import InputKind, InputState, Mailbox, NewInput, Posted
from app.durable.state import delete_state, get_state, set_state
from app.durable.transaction import RuntimeDb

DESK_SOURCE = "desk"
DESK_META_KEY = "desk"
"""In a desk input's meta: True, so the journal and the channel know where it came from."""
DESK_SERVER_KEY = "desk_server"
"""Runtime state: ``{"pid": …, "since": …}`` of the process that takes desk turns now."""


def desk_input(text: str, author: str = "owner") -> NewInput:
    """A message typed at the desk, as a mailbox input (a fresh reference each time)."""
    return NewInput(
        InputKind.OWNER_MESSAGE,
        DESK_SOURCE,
        secrets.token_hex(8),
        text,
        author=author,
        meta={DESK_META_KEY: True},
    )


def post_desk_message(mailbox: Mailbox, text: str) -> Posted:
    """Store the owner's desk message (and its observation) in the mailbox."""
    return mailbox.post(desk_input(text))


@dataclass(frozen=True)
class TurnOutcome:
    """Where an input stands, and its reply once there is one."""

    input_id: int
    state: InputState
    attempts: int
    last_error: str | None
    available_at: datetime
    reply: str | None
    """The reply's text (empty when the turn answered nothing); None until done."""
    reply_observation_id: int | None
    cards: tuple[int, ...]
    """Judgments the turn proposed, waiting for the owner's review."""

    @property
    def answered(self) -> bool:
        return self.state is InputState.DONE

    @property
    def failed_attempt(self) -> bool:
        """An attempt failed and a retry is scheduled (or it gave up): no reply is coming
        soon. A claim released by a restart does not count: it runs again at once."""
        if self.state is InputState.DEAD:
            return True
        return (
            self.state is InputState.PENDING
            and self.attempts > 0
            and self.last_error is not None
            and self.last_error != "interrupted by a restart"
        )


def outcome(db: RuntimeDb, input_id: int) -> TurnOutcome:
    """The input's state and reply (raises ``KeyError`` for an unknown input)."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT m.state, m.attempts, m.last_error, m.available_at, r.text, r.id, "
            "d.id IS NOT NULL FROM mailbox m "
            "LEFT JOIN deliveries d ON d.input_id = m.id AND d.kind = 'reply' "
            "LEFT JOIN observations r ON r.id = d.observation_id AND r.purged_at IS NULL "
            "WHERE m.id = ?",
            (input_id,),
        ).fetchone()
        if row is None:
            raise KeyError(input_id)
        cards = conn.execute(
            "SELECT judgment_id FROM deliveries WHERE input_id = ? AND kind = 'proposal' "
            "AND judgment_id IS NOT NULL ORDER BY id",
            (input_id,),
        ).fetchall()
    state = InputState(str(row[0]))
    reply: str | None = None
    if state is InputState.DONE:
        reply = str(row[4]) if row[4] is not None else ""
    return TurnOutcome(
        input_id=input_id,
        state=state,
        attempts=int(row[1]),
        last_error=None if row[2] is None else str(row[2]),
        available_at=unstamp(str(row[3])),
        reply=reply,
        reply_observation_id=None if row[5] is None else int(row[5]),
        cards=tuple(int(c[0]) for c in cards),
    )


def input_text(db: RuntimeDb, input_id: int) -> str | None:
    """The words of input ``input_id`` (None once purged), to quote them elsewhere."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT o.text FROM mailbox m JOIN observations o ON o.id = m.observation_id "
            "WHERE m.id = ? AND o.purged_at IS NULL",
            (input_id,),
        ).fetchone()
    return None if row is None else str(row[0])


@dataclass(frozen=True)
class ChatLine:
    """One bubble of the conversation: the owner's message or MAMA's reply."""

    input_id: int
    observation_id: int
    at: datetime
    from_owner: bool
    via: str
    """Where the owner wrote it: ``desk`` or ``telegram`` (a reply: where its message was)."""
    text: str
    state: InputState
    """The owner message's state (a reply's: its message's, always done)."""


def conversation(db: RuntimeDb, limit: int = 50) -> list[ChatLine]:
    """The last ``limit`` owner messages (desk and Telegram) with their replies, oldest
    first; a purged message or reply is left out, so it disappears from every view."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT m.id, m.state, o.id, o.source, o.text, o.received_at, o.purged_at, "
            "r.id, r.text, r.received_at, r.purged_at FROM mailbox m "
            "JOIN observations o ON o.id = m.observation_id "
            "LEFT JOIN deliveries d ON d.input_id = m.id AND d.kind = 'reply' "
            "LEFT JOIN observations r ON r.id = d.observation_id "
            "WHERE m.kind = 'owner_message' ORDER BY m.id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    lines: list[ChatLine] = []
    for row in reversed(rows):
        input_id, state = int(row[0]), InputState(str(row[1]))
        via = str(row[3])
        if row[6] is None:
            lines.append(
                ChatLine(input_id, int(row[2]), unstamp(str(row[5])), True, via, str(row[4]), state)
            )
        if row[7] is not None and row[10] is None:
            lines.append(
                ChatLine(
                    input_id, int(row[7]), unstamp(str(row[9])), False, via, str(row[8]), state
                )
            )
    return lines


# --- who takes desk turns -------------------------------------------------


@dataclass(frozen=True)
class DeskServer:
    """The process that runs the agent and takes desk turns from other processes."""

    pid: int
    since: str

    def alive(self) -> bool:
        """Whether that process still exists (a crash leaves the record behind)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def announce_desk_server(db: RuntimeDb, clock: Clock | None = None) -> None:
    """This process runs the agent and answers desk messages posted by others."""
    now = stamp((clock or SystemClock()).now())
    set_state(db, DESK_SERVER_KEY, json.dumps({"pid": os.getpid(), "since": now}))


def withdraw_desk_server(db: RuntimeDb) -> None:
    """This process stops serving (only its own record is removed)."""
    server = desk_server(db)
    if server is not None and server.pid == os.getpid():
        delete_state(db, DESK_SERVER_KEY)


def desk_server(db: RuntimeDb) -> DeskServer | None:
    """Who said it takes desk turns, or None (nobody, or an older MAMA runs)."""
    raw = get_state(db, DESK_SERVER_KEY)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
        return DeskServer(int(value["pid"]), str(value.get("since", "")))
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class ProposalCardLine:
    """A review card in the conversation (as Telegram shows it): when it was queued and
    the proposal it shows (the first of a group)."""

    judgment_id: int
    at: datetime


def proposal_cards(db: RuntimeDb, limit: int = 50) -> list[ProposalCardLine]:
    """The last ``limit`` review cards queued for the owner, oldest first, one per
    proposal; whether each still waits is the engine's to say."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT judgment_id, min(created_at) FROM deliveries "
            "WHERE kind = 'proposal' AND judgment_id IS NOT NULL "
            "GROUP BY judgment_id ORDER BY min(id) DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [ProposalCardLine(int(j), unstamp(str(at))) for j, at in reversed(rows)]
