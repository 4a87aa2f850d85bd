"""How far a method's gain over ``fused`` stands above the noise of the question sample.

    python -m bench.compare RESULT.json [RESULT.json …] [--metric recall@10]

Reads the ``--json`` output of ``bench.retrieval`` and prints, per category
and overall, each method's mean difference from the default (``fused``) with a
95 % paired bootstrap interval over questions (2,000 resamples, fixed seed):
the same questions are drawn for both methods, so the interval is the noise of
*which questions the dev set happens to hold*, the noise that decides whether a
gain carries to the held-out conversations. A gain is "above the noise" when
the whole interval is above zero.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

RESAMPLES = 2000
SEED = 17


def paired_interval(delta: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """The 95 % bootstrap interval of the mean of per-question differences."""
    if delta.size == 0:
        return 0.0, 0.0
    draws = rng.integers(0, delta.size, size=(RESAMPLES, delta.size))
    means = delta[draws].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def compare(result: dict[str, Any], metric: str, headline: Sequence[str] | None) -> list[str]:
    """Lines of the table for one result file."""
    questions = result["questions"]
    methods = [m for m in result["methods"] if m not in ("fused", "plain-bm25")]
    categories = sorted({q["category"] for q in questions})
    groups: list[tuple[str, set[str]]] = [(c, {c}) for c in categories]
    if headline is not None:
        groups.append(("overall 1-4", {c for c in categories if c[:1] in headline}))
    groups.append(("overall", set(categories)))
    scale = 100.0 if result["dataset"] == "locomo" and metric.startswith("recall") else 1.0
    rng = np.random.default_rng(SEED)
    lines = [f"{result['dataset']}: {metric}, method - fused, mean and 95% paired bootstrap"]
    lines.append(f"{'group':<28}{'method':<14}{'n':>5}{'delta':>9}{'interval':>22}")
    for label, cats in groups:
        chosen = [q for q in questions if q["category"] in cats]
        base = np.array([q["fused"]["metrics"][metric] for q in chosen]) * scale
        for method in methods:
            if method not in chosen[0]:
                continue
            other = np.array([q[method]["metrics"][metric] for q in chosen]) * scale
            delta = other - base
            low, high = paired_interval(delta, rng)
            mark = " +" if low > 0 else (" -" if high < 0 else "")
            lines.append(
                f"{label:<28}{method:<14}{len(chosen):>5}{delta.mean():>9.2f}"
                f"{f'[{low:.2f}, {high:.2f}]':>22}{mark}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__)
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--metric", default=None, help="recall@10 (LoCoMo), recall_all@5 (LME)")
    args = parser.parse_args(argv)
    for path in args.results:
        result = json.loads(path.read_text(encoding="utf-8"))
        locomo = result["dataset"] == "locomo"
        metric = args.metric or ("recall@10" if locomo else "recall_all@5")
        print("\n".join(compare(result, metric, ("1", "2", "3", "4") if locomo else None)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
