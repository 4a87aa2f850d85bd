"""What one committed mutation changed, for subscribers (UI refresh, guidance deltas)."""

from __future__ import annotations

from dataclasses import dataclass


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
