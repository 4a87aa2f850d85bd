"""Connector items and batches for tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from app.connectors.base import Batch, Item

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def item(
    n: int,
    *,
    channel: str = "Roadmap",
    scope: str = "project:trello/Roadmap",
    text: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Item:
    return Item(
        source="trello:me",
        external_id=f"action-{n}",
        channel=channel,
        scope=scope,
        author="Anna",
        at=T0 + timedelta(minutes=n),
        text=text if text is not None else f"Anna moved 'Card {n}' from Doing to Done",
        metadata=metadata if metadata is not None else {"card": f"Card {n}"},
    )


def batch(*items: Item, more: bool = False) -> Batch:
    last = items[-1].external_id if items else ""
    return Batch(items=tuple(items), cursor=json.dumps({"last": last}), more=more)
