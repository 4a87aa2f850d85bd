"""Per-category tables of retrieval metrics, as plain text and as JSON-ready dicts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.metrics import mean


@dataclass
class Scores:
    """Per-question metric values of one method, grouped by category."""

    metrics: tuple[str, ...]
    by_category: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def add(self, category: str, values: dict[str, float]) -> None:
        self.by_category.setdefault(category, []).append(values)

    def summary(self, categories: Sequence[str] | None = None) -> dict[str, float]:
        """Mean of each metric over the questions of ``categories`` (all when None)."""
        rows = [
            r
            for c, rs in self.by_category.items()
            if categories is None or c in categories
            for r in rs
        ]
        out = {m: mean([r[m] for r in rows]) for m in self.metrics}
        out["n"] = float(len(rows))
        return out


@dataclass(frozen=True)
class Column:
    metric: str
    header: str
    percent: bool


def format_table(
    scores: dict[str, Scores],
    columns: Sequence[Column],
    groups: Sequence[tuple[str, Sequence[str] | None]],
) -> str:
    """One block per group (a category or an overall), one row per method."""
    head = f"{'group':<26}{'method':<12}{'n':>5}" + "".join(f"{c.header:>12}" for c in columns)
    lines = [head, "-" * len(head)]
    for label, categories in groups:
        for method, s in scores.items():
            summary = s.summary(categories)
            if not summary["n"]:
                continue
            cells = "".join(
                f"{summary[c.metric] * 100:>12.1f}" if c.percent else f"{summary[c.metric]:>12.3f}"
                for c in columns
            )
            lines.append(f"{label:<26}{method:<12}{int(summary['n']):>5}{cells}")
        lines.append("")
    return "\n".join(lines).rstrip()
