"""The session-start guidance index: active guidance within a token budget.

Constraints come first, then preferences, workflows and lessons, newest first
within a kind. Records are added in that order while they fit; one that does
not fit is skipped (a later, shorter one may still fit) and counted in a final
"N more not shown" line. The budget covers the whole text, trailer included
(see ``tokens`` for how tokens are counted), and is never exceeded.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from mama_core.guidance.items import active_guidance, latest_event_id
from mama_core.guidance.tokens import approx_tokens, chars_for
from mama_core.store.connection import Connection

DEFAULT_BUDGET_TOKENS = 1500
HEADER = "Guidance from the owner (follow it; ids for reference):"


def trailer(omitted: int) -> str:
    """The last line when some records did not fit."""
    return f"({omitted} more not shown; use memory.search to find them)"


@dataclass(frozen=True)
class RenderedGuidance:
    """The index text and what it holds.

    ``watermark`` is the newest event id when the index was read: pass it to
    ``render_delta`` on the next turn to get only what changed since.
    """

    text: str
    tokens: int
    budget_tokens: int
    shown_ids: tuple[int, ...]
    total: int
    watermark: int

    @property
    def omitted(self) -> int:
        return self.total - len(self.shown_ids)


def render_index(
    conn: Connection, scopes: Collection[str], budget_tokens: int = DEFAULT_BUDGET_TOKENS
) -> RenderedGuidance:
    """Active guidance in ``scopes`` rendered for a session start, within ``budget_tokens``."""
    own_tx = not conn.in_transaction
    if own_tx:
        conn.execute("BEGIN")  # one snapshot for the records and the watermark
    try:
        items = active_guidance(conn, scopes)
        watermark = latest_event_id(conn)
    finally:
        if own_tx:
            conn.execute("COMMIT")
    limit = chars_for(budget_tokens)
    blocks = [item.render() for item in items]

    def size(lines: list[str]) -> int:
        return sum(len(line) for line in lines) + max(len(lines) - 1, 0)

    everything = [HEADER, *blocks] if blocks else []
    if size(everything) <= limit:
        return _result(everything, budget_tokens, tuple(i.id for i in items), len(items), watermark)

    # Not all fit: keep room for the trailer at its longest.
    reserve = 1 + len(trailer(len(items)))
    lines = [HEADER]
    used = len(HEADER)
    shown: list[int] = []
    for item, block in zip(items, blocks, strict=True):
        if used + 1 + len(block) + reserve <= limit:
            lines.append(block)
            used += 1 + len(block)
            shown.append(item.id)
    lines.append(trailer(len(items) - len(shown)))
    if size(lines) > limit:
        lines = [trailer(len(items))]  # the header does not fit beside the trailer
        shown = []
        if size(lines) > limit:
            lines = []
    return _result(lines, budget_tokens, tuple(shown), len(items), watermark)


def _result(
    lines: list[str], budget: int, shown: tuple[int, ...], total: int, watermark: int
) -> RenderedGuidance:
    text = "\n".join(lines)
    return RenderedGuidance(text, approx_tokens(text), budget, shown, total, watermark)
