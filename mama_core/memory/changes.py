"""What one committed mutation changed, for subscribers (UI refresh, guidance deltas)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChangeSet:
    """Ids a commit touched: the event, new judgments, status changes and purges, and
    every judgment it read or amended (a link, an outcome, a change proposed to it)."""

    event_ids: tuple[int, ...]
    added: tuple[int, ...]
    status_changed: tuple[int, ...]
    purged: tuple[int, ...]
    action: str
    command_id: str
    touched: tuple[int, ...] = ()

    @classmethod
    def from_transitions(
        cls,
        event_id: int,
        action: str,
        command_id: str | None,
        transitions: Iterable[Mapping[str, Any]],
        touched: Iterable[int] = (),
    ) -> ChangeSet:
        """The change-set of one event from its status transitions (the event payload's
        ``transitions``): a transition from nothing adds a judgment, one to ``purged``
        purges it, any other changes its status. ``touched`` (the payload's
        ``touched``) also names records whose status did not change, e.g. one a
        change was proposed to.

        The one mapping for both the writer's own commits and the events other
        processes committed, so a subscriber cannot tell them apart.
        """
        added: list[int] = []
        changed: list[int] = []
        purged: list[int] = []
        for transition in transitions:
            judgment_id = int(transition["id"])
            if transition.get("from") is None:
                added.append(judgment_id)
            elif transition.get("to") == "purged":
                purged.append(judgment_id)
            else:
                changed.append(judgment_id)
        return cls(
            event_ids=(event_id,),
            added=tuple(added),
            status_changed=tuple(dict.fromkeys(changed)),
            purged=tuple(purged),
            action=action,
            command_id=command_id or "",
            touched=tuple(int(t) for t in touched),
        )
