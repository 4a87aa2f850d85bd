"""Who may change the owner's records: the one rule every mutating verb applies.

A record the owner stated or approved (and any guidance in force) is the owner's. Only
the owner, speaking in an owner turn (``SessionFacts.acts_as_owner``), changes
it directly. Anyone else — an agent answering the owner, a coding agent over
MCP, a connector or scheduled turn — gets one of two answers:

- retiring it (``memory.retire``) becomes a *proposed change* the owner
  approves or rejects (``mama_core.memory.proposed_changes``); replacing it
  (``memory.save`` with ``replaces``) lands the new record ``proposed``, and the
  supersession waits for the owner's approval (``saving``/``review``);
- attaching an outcome or a link to it becomes a proposed change in a turn the
  owner started, and is refused with ``owner_turn_required`` in a turn the owner
  did not (outside content must not steer the owner's records at all).

Tombstones (``forbid_resave``) are the owner's alone everywhere: a call that
asks for one from anyone else is refused before anything is written
(``not_granted``), so the caller cannot mistake a silent no-op for protection.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel

from mama_core.errors import NotGrantedError, OwnerTurnRequiredError
from mama_core.model import GUIDANCE_KINDS, OWNER_INVOLVEMENTS, Involvement, Judgment, Kind
from mama_core.session import SessionFacts

PROPOSABLE_ACTIONS: frozenset[str] = frozenset(
    {"memory.save", "memory.retire", "memory.update_outcome", "memory.link"}
)
"""Verbs on the owner's records that a non-owner may propose instead of doing (a save
with ``replaces`` proposes by landing ``proposed`` itself)."""

OWNER_TURN_ONLY_ACTIONS: frozenset[str] = frozenset({"memory.update_outcome", "memory.link"})
"""Verbs on the owner's records that a non-owner turn may not even propose."""


class Decision(StrEnum):
    """What a mutation on the owner's records may do for this caller."""

    APPLY = "apply"
    PROPOSE = "propose"


def check_call(action: str, model: BaseModel, session: SessionFacts) -> None:
    """Refuse, before the writer, what no one but the owner may ask for: a tombstone."""
    if getattr(model, "forbid_resave", False) and not session.acts_as_owner:
        raise NotGrantedError(
            "Only the owner can forbid saving something again (a tombstone); "
            "retry without forbid_resave.",
            details={"action": action, "field": "forbid_resave"},
        )


def is_owners(judgment: Judgment) -> bool:
    """Whether ``judgment`` is the owner's: stated or approved by the owner, or guidance
    in force (which only the owner's word can have made active)."""
    if Involvement(judgment.involvement) in OWNER_INVOLVEMENTS:
        return True
    return Kind(judgment.kind) in GUIDANCE_KINDS and judgment.status == "active"


def protected(targets: Iterable[Judgment]) -> list[Judgment]:
    """The targets that are the owner's (see ``is_owners``)."""
    return [t for t in targets if is_owners(t)]


def decide(session: SessionFacts, action: str, targets: Iterable[Judgment]) -> Decision:
    """Whether ``action`` on ``targets`` is applied now or proposed to the owner.

    Raises ``owner_turn_required`` for an outcome or link on the owner's records
    from a turn the owner did not start.
    """
    if session.acts_as_owner:
        return Decision.APPLY
    owners = protected(targets)
    if not owners:
        return Decision.APPLY
    if action in OWNER_TURN_ONLY_ACTIONS and not session.is_owner_turn:
        ids = [t.id for t in owners]
        raise OwnerTurnRequiredError(
            f"The owner's records ({', '.join(f'#{i}' for i in ids)}) can only be changed in a "
            f"turn the owner started; this {session.turn.value} turn cannot touch them.",
            details={"ids": ids, "turn": session.turn.value, "action": action},
        )
    if action not in PROPOSABLE_ACTIONS:  # a programming error: every verb is listed
        raise NotGrantedError(
            f"{action} cannot change the owner's records.", details={"action": action}
        )
    return Decision.PROPOSE
