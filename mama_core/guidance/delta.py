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

The text is bounded like the session start: with a ``budget_tokens``, changes are
kept in order of weight (retirements and revisions of what the agent already
follows, then additions with constraints first, newest first within a kind)
while they fit, and the rest is counted in a last line naming the action that
reads them all (``guidance.changes`` with this delta's ``since`` and ``until``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, cast

from mama_core.guidance.items import KIND_ORDER, GuidanceItem, guidance_by_id, latest_event_id
from mama_core.guidance.tokens import chars_for
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
    budget_tokens: int | None = None
    """The most tokens ``text`` may take (None: unbounded)."""

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.revised or self.retired)

    @property
    def count(self) -> int:
        """How many changes there are, shown or not."""
        return len(self.added) + len(self.revised) + len(self.retired)

    @property
    def text(self) -> str:
        """The changes as lines for the agent ('' when nothing changed), within the budget."""
        return self.rendered()[0]

    @property
    def omitted(self) -> int:
        """How many changes did not fit in ``text``."""
        return self.rendered()[1]

    def rendered(self) -> tuple[str, int]:
        """(text, how many changes it leaves out)."""
        if self.is_empty:
            return "", 0
        blocks = self._blocks()
        lines = [DELTA_HEADER, *(block for _, block in blocks)]
        limit = None if self.budget_tokens is None else chars_for(self.budget_tokens)
        if limit is None or _size(lines) <= limit:
            return "\n".join(lines), 0
        reserve = 1 + len(self.trailer(len(blocks)))
        used = len(DELTA_HEADER)
        keep: set[int] = set()
        for position in sorted(range(len(blocks)), key=lambda n: blocks[n][0]):
            block = blocks[position][1]
            if used + 1 + len(block) + reserve <= limit:
                keep.add(position)
                used += 1 + len(block)
        shown = [block for n, (_, block) in enumerate(blocks) if n in keep]
        lines = [DELTA_HEADER, *shown, self.trailer(len(blocks) - len(shown))]
        if _size(lines) > limit:  # not even the header fits beside the count
            lines = [self.trailer(len(blocks))]
            shown = []
            if _size(lines) > limit:
                return "", len(blocks)
        return "\n".join(lines), len(blocks) - len(shown)

    def trailer(self, omitted: int) -> str:
        """The last line when ``omitted`` changes did not fit: their count and the read."""
        return (
            f"(and {omitted} more change{'' if omitted == 1 else 's'} not shown: read them "
            f'with guidance.changes {{"since": {self.since}, "until": {self.watermark}}})'
        )

    def _blocks(self) -> list[tuple[tuple[int, int, int], str]]:
        """Each change's lines with its weight (lower first), in display order."""
        out: list[tuple[tuple[int, int, int], str]] = []
        for item in self.added:
            out.append(((2, _kind_rank(item.kind), -item.id), "+ " + item.render()[2:]))
        for rev in self.revised:
            replaced = ", ".join(f"#{i}" for i in rev.replaces)
            weight = (1, _kind_rank(rev.item.kind), -rev.item.id)
            out.append((weight, f"~ {rev.item.render()[2:]} (replaces {replaced})"))
        for ret in self.retired:
            said = f": {' '.join(ret.summary.split())}" if ret.summary else ""
            line = f"- [#{ret.id}] {ret.kind} no longer applies ({ret.status}){said}"
            out.append(((0, _kind_rank(ret.kind), -ret.id), line))
        return out


DELTA_HEADER = "Guidance changed since your last turn:"


def _size(lines: list[str]) -> int:
    return sum(len(line) for line in lines) + max(len(lines) - 1, 0)


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def _transitions(payload_json: str) -> list[dict[str, Any]]:
    try:
        payload: Any = json.loads(payload_json)
    except (TypeError, ValueError):
        return []
    found = cast(dict[str, Any], payload).get("transitions") if isinstance(payload, dict) else None
    if not isinstance(found, list):
        return []
    return [t for t in found if isinstance(t, dict) and "id" in t]  # pyright: ignore[reportUnknownVariableType]


def render_delta(
    conn: Connection,
    scopes: Collection[str],
    since_event_id: int,
    budget_tokens: int | None = None,
    until_event_id: int | None = None,
) -> GuidanceDelta:
    """Guidance added, revised and retired after event ``since_event_id`` (up to
    ``until_event_id``, else the newest event), in ``scopes``; its text within
    ``budget_tokens`` when given."""
    own_tx = not conn.in_transaction
    if own_tx:
        conn.execute("BEGIN")  # one snapshot for the events and the rows
    try:
        newest = latest_event_id(conn)
        if until_event_id is not None:
            newest = min(newest, until_event_id)
        watermark = max(newest, since_event_id)
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
    return GuidanceDelta(
        since_event_id, watermark, tuple(added), tuple(revised), tuple(retired), budget_tokens
    )


def _said(item: GuidanceItem) -> str:
    return "" if item.status == "purged" else item.summary
