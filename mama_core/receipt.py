"""What a mutation returns: the typed receipt, and its wire form for agents and MCP.

The writer builds this receipt and stores its wire form as JSON (a replay hands
the stored one back); agents, MCP clients and the CLI's ``--json`` see that
dict, in-process callers the typed view: the fields every receipt has, plus the
verb's own (``tombstone_id``, ``change_id``, ...) in ``extra`` and what a
post-commit step reported (a purge's ``wal``, ``backups_removed``) in ``after``.
``to_wire()`` gives the dict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from mama_core.json_types import JsonObject

_COMMON = ("command_id", "action", "event_id", "at", "judgment_id", "status", "touched")


@dataclass(frozen=True)
class Receipt:
    """One committed (or replayed) mutation."""

    command_id: str
    action: str
    event_id: int
    at: str
    judgment_id: int | None
    status: str | None
    """The main judgment's status after the commit (None when there is none)."""
    touched: tuple[int, ...]
    replayed: bool
    """The command id was seen before: this is the first call's receipt, nothing written."""
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The verb's own fields (``tombstone_id``, ``change_id``, ``observations_purged`` ...)."""
    after: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """What the post-commit step reported (not in the stored receipt, after ``replayed``
    on the wire)."""
    stored: str | None = field(default=None, repr=False, compare=False)
    """On a replay, the stored receipt's JSON: its wire form is that one, as stored."""

    @classmethod
    def replay_of(cls, stored: str) -> Receipt:
        """The receipt of a replayed command: the stored one, marked ``replayed``."""
        wire = json.loads(stored)
        wire["replayed"] = True
        return replace(cls.from_wire(wire), stored=stored)

    def with_after(self, after: Mapping[str, Any]) -> Receipt:
        """This receipt with what its post-commit step reported."""
        return replace(self, after=MappingProxyType({**self.after, **after}))

    def stored_json(self) -> str:
        """The JSON the writer stores (the wire form before any post-commit fields)."""
        return json.dumps(replace(self, after=MappingProxyType({})).to_wire(), sort_keys=True)

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Receipt:
        """The typed receipt of a writer (or stored) receipt dict."""
        judgment_id = wire.get("judgment_id")
        status = wire.get("status")
        return cls(
            command_id=str(wire["command_id"]),
            action=str(wire["action"]),
            event_id=int(wire["event_id"]),
            at=str(wire["at"]),
            judgment_id=None if judgment_id is None else int(judgment_id),
            status=None if status is None else str(status),
            touched=tuple(int(i) for i in wire.get("touched") or ()),
            replayed=bool(wire.get("replayed", False)),
            extra=MappingProxyType(
                {k: v for k, v in wire.items() if k not in _COMMON and k != "replayed"}
            ),
        )

    def to_wire(self) -> JsonObject:
        """The receipt as agents, MCP clients and ``--json`` see it (a fresh dict)."""
        if self.stored is not None:
            wire: JsonObject = json.loads(self.stored)
            wire["replayed"] = self.replayed
            wire.update(self.after)
            return wire
        wire = {
            "command_id": self.command_id,
            "action": self.action,
            "event_id": self.event_id,
            "at": self.at,
            "judgment_id": self.judgment_id,
            "status": self.status,
            "touched": list(self.touched),
            **self.extra,
            "replayed": self.replayed,
        }
        wire.update(self.after)
        return wire

    @property
    def proposed(self) -> bool:
        """The change was proposed to the owner instead of applied."""
        return bool(self.extra.get("proposed", False))

    @property
    def change_id(self) -> int | None:
        """The proposed change made (or decided) by this call."""
        return _int_or_none(self.extra.get("change_id"))

    @property
    def tombstone_id(self) -> int | None:
        """The tombstone made (or lifted)."""
        return _int_or_none(self.extra.get("tombstone_id"))

    @property
    def observation_id(self) -> int | None:
        """The observation kept (observation.record) or the one purged."""
        return _int_or_none(self.extra.get("observation_id"))

    @property
    def checkpoint_id(self) -> int | None:
        """The checkpoint saved."""
        return _int_or_none(self.extra.get("checkpoint_id"))

    def get(self, key: str, default: Any = None) -> Any:
        """A verb's own or post-commit field by its wire name (``default`` when absent)."""
        if key in self.after:
            return self.after[key]
        return self.extra.get(key, default)

    @property
    def wal(self) -> str | None:
        """After a purge: ``truncated``, or ``pending`` while a reader holds the WAL."""
        value = self.get("wal")
        return None if value is None else str(value)

    @property
    def backups_removed(self) -> tuple[str, ...]:
        """After a purge: the backups it deleted."""
        return tuple(str(p) for p in self.get("backups_removed") or ())

    @property
    def observations_purged(self) -> tuple[int, ...]:
        """The observations whose text a purge erased."""
        return tuple(int(i) for i in self.extra.get("observations_purged") or ())


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
