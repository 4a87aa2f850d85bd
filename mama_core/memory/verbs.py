"""What can be done with a record: one transition table, read by the handlers that
refuse and by every front end that shows what a reader may do.

A verb applies to a record in some statuses, and some verbs are the owner's alone.
Approve and reject also decide a change an agent proposed to one of the owner's
records (``proposed_changes``), whatever the record's status. The handlers refuse
through ``require`` (``invalid_transition``); an owner-only verb asked by anyone
else is refused by the dispatcher (``not_granted``) before any status is looked at,
and ``refusal`` says the same. Each record read carries ``allowed`` (``allowed``):
the verbs this reader may apply to it now, so the review window, the batch buttons,
Telegram and the chat show what the core says instead of re-deriving it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from mama_core.errors import InvalidTransitionError, NotGrantedError
from mama_core.model import STATUSES, Status


class Verb(StrEnum):
    """What the owner or an agent may do to a record."""

    APPROVE = "approve"
    EDIT_APPROVE = "edit_approve"
    """The owner's words replace the proposal's, and the result is active."""
    REJECT = "reject"
    RETIRE = "retire"
    REPLACE = "replace"
    """A save naming the record in ``replaces``."""
    PURGE = "purge"


@dataclass(frozen=True)
class Rule:
    """Where one verb applies and who may apply it."""

    action: str
    """The catalog action that carries the verb."""
    statuses: tuple[Status, ...]
    """The statuses it applies to, in ``Status`` order."""
    owner_only: bool
    doing: str
    """The verb as a refusal names it: ``approving it needs it proposed``."""
    on_waiting_change: bool = False
    """It also decides a change proposed to the record, whatever its status."""
    one_change_at_a_time: bool = False
    """Anyone but the owner only proposes it on the owner's records, and is refused
    while another change waits there (``proposed_changes.propose``)."""


def _all_but(*excluded: Status) -> tuple[Status, ...]:
    return tuple(Status(s) for s in STATUSES if s not in excluded)


TABLE: Mapping[Verb, Rule] = MappingProxyType(
    {
        Verb.APPROVE: Rule(
            "review.approve", (Status.PROPOSED,), True, "approving it", on_waiting_change=True
        ),
        Verb.EDIT_APPROVE: Rule(
            "memory.save", (Status.PROPOSED,), True, "editing and approving it"
        ),
        Verb.REJECT: Rule(
            "review.reject", (Status.PROPOSED,), True, "rejecting it", on_waiting_change=True
        ),
        Verb.RETIRE: Rule(
            "memory.retire", (Status.ACTIVE,), False, "retiring it", one_change_at_a_time=True
        ),
        Verb.REPLACE: Rule("memory.save", (Status.PROPOSED, Status.ACTIVE), False, "replacing it"),
        Verb.PURGE: Rule("memory.purge", _all_but(Status.PURGED), True, "purging it"),
    }
)
"""The one transition table: every verb, the statuses it applies to, and who may."""


def applies(verb: Verb, status: str, *, owner: bool = True, waiting_change: bool = False) -> bool:
    """Whether ``verb`` applies to a record in ``status`` (with a change waiting on it),
    for the owner or someone else."""
    rule = TABLE[verb]
    if waiting_change and rule.on_waiting_change:
        return True
    if waiting_change and rule.one_change_at_a_time and not owner:
        return False
    return status in rule.statuses


def allowed(status: str, *, owner: bool, waiting_change: bool = False) -> list[str]:
    """The verbs a reader (the owner or not) may apply now to a record in ``status``,
    in table order: what each record read carries as ``allowed``."""
    return [
        verb.value
        for verb, rule in TABLE.items()
        if (owner or not rule.owner_only)
        and applies(verb, status, owner=owner, waiting_change=waiting_change)
    ]


def refusal(verb: Verb, status: str, *, owner: bool, waiting_change: bool = False) -> str | None:
    """The error code that refuses ``verb`` on a record in ``status`` for this reader,
    or None when it may be done. Who comes before what: the dispatcher refuses an
    owner-only action to anyone else before the handler reads the record."""
    if TABLE[verb].owner_only and not owner:
        return NotGrantedError.code
    if not applies(verb, status, owner=owner, waiting_change=waiting_change):
        return InvalidTransitionError.code
    return None


def may(record: Mapping[str, object], verb: Verb) -> bool:
    """Whether a record as read (``memory.read``'s record, a search row) says its reader
    may apply ``verb`` now: what the front ends ask instead of comparing statuses."""
    listed = record.get("allowed")
    return isinstance(listed, (list, tuple)) and verb.value in listed


def require(verb: Verb, judgment_id: object, status: str) -> None:
    """Refuse ``verb`` (``invalid_transition``) unless it applies to the record
    ``judgment_id`` in ``status``; the handlers call this before they change anything."""
    if applies(verb, status):
        return
    rule = TABLE[verb]
    raise InvalidTransitionError(
        f"Judgment {judgment_id} is {status}; {rule.doing} needs it "
        f"{' or '.join(s.value for s in rule.statuses)}.",
        details={"id": judgment_id, "status": status},
    )
