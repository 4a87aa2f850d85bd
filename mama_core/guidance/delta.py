"""What changed in the agent's guidance since a watermark (an event id).

Computed from the event log: every event records its status transitions
(``from`` → ``to``, and ``superseded_by`` when a record is replaced). For each
guidance record a later event touched, its status *at the watermark* is the
``from`` of its first later transition, and its status now is the row's. Then:

- **added**: not active at the watermark, active now, replacing nothing the
  agent had;
- **revised**: active now and replacing guidance that was active at the
  watermark (an owner's edit is a superseding save);
- **retired**: active at the watermark, not now (stale, contradicted, rejected,
  purged, or superseded by something that is not itself a revision listed here).

Only guidance in the caller's scopes is considered; a purged record is named by
id and status only, its text being gone.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, cast

from mama_core.guidance.items import GuidanceItem, guidance_by_id, latest_event_id
from mama_core.model import STATUSES
from mama_core.store.connection import Connection


@dataclass(frozen=True)
class Revision:
    """Active guidance that replaced guidance the agent had."""

    item: GuidanceItem
    replaces: tuple[int, ...]


@dataclass(frozen=True)
class Retirement:
    """Guidance the agent had that no longer holds."""

    id: int
    kind: str
    status: str
    summary: str


@dataclass(frozen=True)
class GuidanceDelta:
    """Guidance changes between ``since`` and ``watermark`` (event ids)."""

    since: int
    watermark: int
    added: tuple[GuidanceItem, ...]
    revised: tuple[Revision, ...]
    retired: tuple[Retirement, ...]

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.revised or self.retired)

    @property
    def text(self) -> str:
        """The changes as lines for the agent ('' when nothing changed)."""
        if self.is_empty:
            return ""
        lines = ["Guidance changed since your last turn:"]
        lines += ["+ " + item.render()[2:] for item in self.added]
        for rev in self.revised:
            replaced = ", ".join(f"#{i}" for i in rev.replaces)
            lines.append(f"~ {rev.item.render()[2:]} (replaces {replaced})")
        for ret in self.retired:
            said = f": {' '.join(ret.summary.split())}" if ret.summary else ""
            lines.append(f"- [#{ret.id}] {ret.kind} no longer applies ({ret.status}){said}")
        return "\n".join(lines)


def _transitions(payload_json: str) -> list[dict[str, Any]]:
    try:
        payload: Any = json.loads(payload_json)
    except (TypeError, ValueError):
        return []
    found = cast(dict[str, Any], payload).get("transitions") if isinstance(payload, dict) else None
    if not isinstance(found, list):
        return []
    return [t for t in found if isinstance(t, dict) and "id" in t]  # pyright: ignore[reportUnknownVariableType]


def render_delta(conn: Connection, scopes: Collection[str], since_event_id: int) -> GuidanceDelta:
    """Guidance added, revised and retired after event ``since_event_id``, in ``scopes``."""
    own_tx = not conn.in_transaction
    if own_tx:
        conn.execute("BEGIN")  # one snapshot for the events and the rows
    try:
        watermark = max(latest_event_id(conn), since_event_id)
        before: dict[int, str | None] = {}
        replaced_by: dict[int, int] = {}
        for (payload,) in conn.execute(
            "SELECT payload FROM events WHERE id > ? AND id <= ? ORDER BY id",
            (since_event_id, watermark),
        ).fetchall():
            for t in _transitions(payload):
                jid = int(t["id"])
                before.setdefault(jid, t.get("from"))
                if t.get("to") == "superseded" and t.get("superseded_by") is not None:
                    replaced_by[jid] = int(t["superseded_by"])
        items = guidance_by_id(conn, list(before), scopes, STATUSES)
    finally:
        if own_tx:
            conn.execute("COMMIT")

    def had(jid: int) -> bool:
        return jid in items and before.get(jid) == "active"

    added: list[GuidanceItem] = []
    revised: list[Revision] = []
    for jid in sorted(items, reverse=True):
        item = items[jid]
        if item.status != "active" or had(jid):
            continue
        replaces = tuple(sorted(p for p, s in replaced_by.items() if s == jid and had(p)))
        if replaces:
            revised.append(Revision(item, replaces))
        else:
            added.append(item)
    revision_ids = {r.item.id for r in revised}
    retired = [
        Retirement(jid, items[jid].kind, items[jid].status, _said(items[jid]))
        for jid in sorted(items, reverse=True)
        if had(jid) and items[jid].status != "active" and replaced_by.get(jid) not in revision_ids
    ]
    return GuidanceDelta(since_event_id, watermark, tuple(added), tuple(revised), tuple(retired))


def _said(item: GuidanceItem) -> str:
    return "" if item.status == "purged" else item.summary
