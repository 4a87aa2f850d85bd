"""The one shape every connector has: poll from a cursor, return items and the next cursor.

A connector only reads. It never stores anything itself: the runtime writes a
batch's items as observations *and* the batch's cursor in one transaction, so a
crash at any moment loses no item and stores none twice (items are de-duplicated
by ``(source, external_id)``; a batch re-read after a crash finds its items already
there). A connector is therefore free to return an item twice; it must never skip
one.

Scope names (each item carries its own, so one connector may serve several):

- Slack:  ``channel:slack/#<channel name>`` (``channel:slack/<id>`` if it has no name)
- Mail:   ``channel:mail/<account>/<folder>``, e.g. ``channel:mail/me@example.com/INBOX``
- Trello: ``project:trello/<board name>``
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class Item:
    """One thing read from a source, as it will be kept (immutable once stored)."""

    source: str
    """The source kind and account, e.g. ``slack:T0123``, ``mail:me@example.com``,
    ``trello:<member id>``; with ``external_id`` it names the item uniquely."""
    external_id: str
    """Stable within ``source``: Slack ``<channel id>/<ts>``, mail
    ``<folder>/<Message-ID>`` (so a UIDVALIDITY change re-reads without duplicates;
    UIDVALIDITY and UID in ``metadata``), Trello the action id."""
    channel: str
    """Where it was said, as the owner knows it: ``#general``, ``INBOX``, a board name."""
    scope: str
    """The memory scope the item belongs to (see the module docstring)."""
    author: str
    """Who wrote it, as a name the owner recognises (a display name, ``Name <addr>``)."""
    at: datetime
    """When it was written at the source (timezone-aware)."""
    text: str
    """Readable text, already capped and decoded; never bytes."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """JSON-serialisable extras: thread ts, subject, attachments (name, size), url;
    ``REVISES`` / ``DELETES`` name (by ``external_id``) the item an edit or a
    deletion at the source is about."""


REVISES = "revises"
"""In an item's metadata: the ``external_id`` (same source) of the item it edits."""
DELETES = "deletes"
"""In an item's metadata: the ``external_id`` (same source) of the item deleted at the
source (ours stays: observations are immutable; only the owner purges)."""


class Problem(StrEnum):
    """Why a poll failed, as a machine code; the message says it to the owner."""

    AUTH = "invalid_auth"
    """The token or password is wrong or revoked: the owner must fix it."""
    PERMISSION = "missing_scope"
    """The token lacks a permission (a Slack scope, a Trello board it cannot read)."""
    NOT_FOUND = "not_found"
    """A channel, folder or board the owner picked no longer exists."""
    RATE_LIMITED = "rate_limited"
    """The source asked to wait (``retry_after`` seconds)."""
    UNAVAILABLE = "unavailable"
    """Network or server trouble (5xx, timeout, TLS): try again later with backoff."""
    CONFIG = "bad_config"
    """The connector's settings are incomplete or invalid."""


@dataclass(frozen=True)
class PartProblem:
    """One picked part of a source (a Slack channel, a mail folder, a Trello board) that
    could not be read in a poll whose other parts were read.

    A part that is gone or closed to the token is the owner's to fix, but it must not
    stop the others: the poll reads the rest and names this one in ``Batch.problems``.
    """

    part: str
    """The part as the owner picked it: ``#ops``, ``Projects``, a board name."""
    problem: Problem
    message: str
    """One line for the owner (never a token, never a traceback)."""


@dataclass(frozen=True)
class Batch:
    """What one ``poll`` read: its items (oldest first) and the cursor after them."""

    items: tuple[Item, ...]
    cursor: str
    """Opaque to the runtime (JSON text by convention); stored with the items."""
    more: bool = False
    """True when the source has more right now: the runtime polls again at once."""
    problems: tuple[PartProblem, ...] = ()
    """The picked parts this poll could not read (the others were read). A part not
    named here is fine; the runtime shows each one as its own problem."""


PART_PROBLEMS = frozenset({"not_found", "missing_scope"})
"""Problems of one part that a poll skips (``Problem`` values): the part is gone or
closed to the token. Anything else (the network, the token) concerns every part."""


class ConnectorError(Exception):
    """A poll that failed: ``problem`` for machines, the message (one line) for the owner."""

    def __init__(self, problem: Problem, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.problem = problem
        self.retry_after = retry_after

    def part_problem(self, part: str) -> PartProblem | None:
        """This error as the problem of one ``part`` only, if it is one (see
        ``PART_PROBLEMS``); None when it concerns the whole source."""
        if self.problem.value not in PART_PROBLEMS:
            return None
        message = str(self).splitlines()[0] if str(self) else self.problem.value
        return PartProblem(part, self.problem, message)

    @property
    def owner_must_act(self) -> bool:
        """Whether retrying cannot help until the owner changes something."""
        return self.problem in (
            Problem.AUTH,
            Problem.PERMISSION,
            Problem.NOT_FOUND,
            Problem.CONFIG,
        )


class Connector(Protocol):
    """A source the runtime polls. Implementations live in ``app/connectors/<kind>.py``."""

    kind: ClassVar[str]
    """``slack``, ``mail`` or ``trello``."""
    name: str
    """The owner's name for this connector instance (unique), e.g. ``work-slack``."""

    async def poll(self, cursor: str | None, limit: int) -> Batch:
        """Read up to about ``limit`` items after ``cursor`` (None: the first poll).

        Raises ConnectorError; any other exception is a bug the runtime reports as
        ``unavailable`` without a traceback reaching the owner.
        """
        ...

    async def check(self) -> str:
        """Test the credentials and picks; a one-line summary (``mama connectors test``)."""
        ...

    async def aclose(self) -> None:
        """Release network clients."""
        ...


class BrokenParts:
    """The parts one poll had to skip, collected as it goes (one per part)."""

    def __init__(self) -> None:
        self.problems: dict[str, PartProblem] = {}
        self._first: ConnectorError | None = None

    def skip(self, part: str, error: ConnectorError) -> bool:
        """Note ``error`` as ``part``'s own problem; False when it concerns the whole
        source (the caller re-raises it)."""
        problem = error.part_problem(part)
        if problem is None:
            return False
        self.problems.setdefault(part, problem)
        self._first = self._first or error
        return True

    def __contains__(self, part: str) -> bool:
        return part in self.problems

    def settle(self, parts: int) -> tuple[PartProblem, ...]:
        """The problems for ``Batch.problems``; when no part at all could be read, the
        first error is raised instead: then the source as a whole needs the owner (and
        waits for new settings), as it did before parts were told apart."""
        if self._first is not None and len(self.problems) >= parts:
            raise self._first
        return tuple(self.problems.values())


def listed(value: Any) -> Any:
    """A list option as the owner types it on the command line: ``"#a, #b"`` is
    ``["#a", "#b"]`` (a JSON list or a list passes through unchanged)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value
