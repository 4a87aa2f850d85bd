"""A connector kind for scheduler tests: each poll takes the next scripted outcome.

Registered in ``app.connectors.kinds.KINDS`` by the tests (``scripted``), so the
scheduler builds it exactly as it builds Trello. ``SCRIPTS[name]`` is the list of
outcomes (a Batch to return or a ConnectorError to raise); an empty script
returns an empty batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from app.connectors.base import Batch

SCRIPTS: dict[str, list[Batch | Exception]] = {}
POLLS: dict[str, list[str | None]] = {}
"""The cursor each poll was given, per connector name."""

OPTIONS_HELP: dict[str, str] = {"anything": "ignored"}
SECRETS: tuple[str, ...] = ()


class Scripted:
    kind: ClassVar[str] = "scripted"

    def __init__(self, name: str) -> None:
        self.name = name

    async def poll(self, cursor: str | None, limit: int) -> Batch:
        POLLS.setdefault(self.name, []).append(cursor)
        script = SCRIPTS.get(self.name, [])
        outcome = script.pop(0) if script else Batch((), cursor or "", False)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def check(self) -> str:
        return "scripted"

    async def aclose(self) -> None:
        return None


def build(name: str, options: Mapping[str, Any], secret: Callable[[str], str | None]) -> Scripted:
    return Scripted(name)
