"""What each tab of the review window lists, and how it stays current.

A ``ListSpec`` is declarative: statuses, kinds, scopes and words, turned into
a ``memory.search`` payload (the catalog read) and into a predicate that
decides whether a changed record still belongs. A ``JudgmentList`` fills its
model from the catalog and then applies change-sets row by row; a list with
search words is re-ranked by searching again instead, since only recall
knows where a changed record ranks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mama_core.model import GUIDANCE_KIND_NAMES, RETIRED_STATUSES, STATUSES
from ui.qt import QtCore, Signal
from ui.review.models import JudgmentTableModel

if TYPE_CHECKING:
    from ui.bridge import EngineBridge

LIST_LIMIT = 200
"""The catalog's largest page; a fuller list says so and asks for a search."""


@dataclass(frozen=True)
class ListSpec:
    """What one tab lists."""

    statuses: tuple[str, ...]
    kinds: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    query: str = ""
    limit: int = LIST_LIMIT
    pending_changes: bool = False
    """Also list records with a change an agent proposed to them (the review queue)."""

    def payload(self) -> dict[str, Any]:
        """The ``memory.search`` input for this list."""
        payload: dict[str, Any] = {
            "query": self.query,
            "statuses": list(self.statuses),
            "limit": self.limit,
        }
        if self.kinds is not None:
            payload["kinds"] = list(self.kinds)
        if self.scopes is not None:
            payload["scopes"] = list(self.scopes)
        return payload

    def admits(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` belongs in this list by status (or a change waiting on it),
        kind and scope."""
        if is_earlier_state(record):
            return False
        waiting = self.pending_changes and bool(record.get("pending_change"))
        if record.get("status") not in self.statuses and not waiting:
            return False
        if self.kinds is not None and record.get("kind") not in self.kinds:
            return False
        return self.scopes is None or bool(set(self.scopes) & set(record.get("scopes") or []))

    @property
    def ranked(self) -> bool:
        """A list ranked by search words (recall decides the order, not recency)."""
        return bool(self.query.strip())

    def with_filters(
        self,
        *,
        query: str,
        statuses: tuple[str, ...],
        kinds: tuple[str, ...] | None,
        scopes: tuple[str, ...] | None,
    ) -> ListSpec:
        return replace(self, query=query, statuses=statuses, kinds=kinds, scopes=scopes)


def is_earlier_state(record: dict[str, Any]) -> bool:
    """A record a later one carries on with the same words (``continued_by``, set by
    ``mark_continued``): a commitment before Done or Edit due, a proposal before its
    approve or reject was undone. It is a step in one memory's history (the detail
    pane's), not a memory of its own: listing it would show one memory several times
    and count every Done or Undo as a retired memory."""
    return record.get("continued_by") is not None and record.get("status") in RETIRED_STATUSES


async def mark_continued(bridge: EngineBridge, records: Iterable[dict[str, Any]]) -> None:
    """Set ``continued_by`` on the retired ``records`` a later record carries on."""
    from mama_core.memory.owner_reads import continued_by

    retired = {int(r["id"]): r for r in records if r.get("status") in RETIRED_STATUSES}
    if not retired:
        return
    found = await bridge.read(lambda conn: continued_by(conn, sorted(retired)))
    for old, new in found.items():
        retired[old]["continued_by"] = new


PROPOSED = ListSpec(statuses=("proposed",), pending_changes=True)
ACTIVE_GUIDANCE = ListSpec(statuses=("active",), kinds=GUIDANCE_KIND_NAMES)
RETIRED = ListSpec(statuses=RETIRED_STATUSES)
ALL_MEMORIES = ListSpec(statuses=STATUSES)


class JudgmentList(QtCore.QObject):
    """A model kept equal to ``spec`` over the store: loaded once, then patched."""

    updated = Signal()
    """The model changed (a load finished or a change-set was applied)."""

    def __init__(
        self,
        bridge: EngineBridge,
        spec: ListSpec,
        parent: QtCore.QObject | None = None,
        model_type: type[JudgmentTableModel] = JudgmentTableModel,
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self.spec = spec
        self.model = model_type(self)
        self.truncated = False
        self.loaded_once = False
        self._generation = 0

    async def reload(self) -> bool:
        """Fill the model from ``memory.search``; an older, slower search never wins
        (False: a newer one was started meanwhile and will fill it)."""
        self._generation += 1
        generation = self._generation
        result = await self._bridge.dispatch("memory.search", self.spec.payload())
        if generation != self._generation:
            return False
        rows = list(result.get("results", []))
        if self.spec.pending_changes:
            rows = await self._with_changed_records(rows)
            if generation != self._generation:
                return False
        await mark_continued(self._bridge, rows)
        if generation != self._generation:
            return False
        self.truncated = len(rows) >= self.spec.limit
        self.model.set_rows(row for row in rows if not is_earlier_state(row))
        self.loaded_once = True
        self.updated.emit()
        return True

    async def _with_changed_records(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` and, first, the records a change waits on that the spec admits."""
        from mama_core.memory.owner_reads import pending_change_ids

        listed = {row.get("id") for row in rows}
        waiting: list[dict[str, Any]] = []
        for judgment_id in await self._bridge.read(pending_change_ids):
            if judgment_id in listed:
                continue
            read = await self._bridge.dispatch("memory.read", {"id": judgment_id})
            record = dict(read.get("record") or {})
            if record and self.spec.admits(record):
                waiting.append(record)
        return [*waiting, *rows]

    async def set_spec(self, spec: ListSpec) -> bool:
        self.spec = spec
        return await self.reload()

    def apply(self, records: dict[int, dict[str, Any] | None]) -> bool:
        """Patch the model with freshly read ``records`` (None: no longer readable).

        Returns False when the list is ranked and must be searched again instead.
        """
        if self.spec.ranked:
            return False
        for judgment_id, record in records.items():
            if record is not None and self.spec.admits(record):
                self.model.upsert(record)
            else:
                self.model.remove(judgment_id)
        if records:
            self.updated.emit()
        return True
