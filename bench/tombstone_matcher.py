"""Precision and recall of the tombstone matcher on a labelled set of pairs.

    python -m bench.tombstone_matcher [--threshold COS] [--pairs FILE] [--model GGUF] [--json OUT]

Each group of ``tests/mama_core/memory/data/tombstone_pairs.json`` retires one
text; each candidate is a later save that must be ``caught`` (the retired text
again: exact, near-exact, paraphrase) or must ``pass`` (a negation, an opposite,
other numbers, dates or names, another fact). Vectors come from the real GGUF
model over the same text a save embeds (summary and applies-when). Two
matchers are scored, "caught" being the positive class:

- ``before``: the fingerprint, or cosine >= threshold (the matcher as it was);
- ``after``: the fingerprint, or cosine >= threshold unless the words tell the
  texts apart (``mama_core.memory.tombstone_match``, what saves use now).

Prints the confusion counts, precision and recall of each, the cases each gets
wrong, a threshold sweep, and ends with the line
``before precision=… recall=…; after precision=… recall=…``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from mama_core.embeddings import PASSAGE, Embedder, load_embedder
from mama_core.embeddings.base import score_scale
from mama_core.memory.tombstone_match import difference, near_duplicate
from mama_core.memory.tombstones import fingerprint
from mama_core.model import embedding_text

PAIRS = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "mama_core"
    / "memory"
    / "data"
    / "tombstone_pairs.json"
)
MATCHERS = ("before", "after")
SETS = ("built", "held_out", "multilingual")


@dataclass(frozen=True)
class Pair:
    """One labelled save after a retired text."""

    retired: str
    kind: str
    applies_when: str | None
    text: str
    label: str
    """``caught`` or ``passes``."""
    category: str
    required: bool
    set_name: str
    """``built`` (the matcher's word lists were written against it), ``held_out`` (written
    after them, never tuned to) or ``multilingual`` (translations into other languages)."""

    @property
    def held_out(self) -> bool:
        return self.set_name == "held_out"


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    """The labelled pairs of ``path``, flattened."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Pair(
            retired=group["retired"],
            kind=group["kind"],
            applies_when=group.get("applies_when"),
            text=case["text"],
            label=case["label"],
            category=case["kind"],
            required=bool(case["required"]),
            set_name=group.get("set", "built"),
        )
        for group in data["groups"]
        for case in group["cases"]
    ]


def saved_text(summary: str, applies_when: str | None) -> str:
    """What a save of ``summary`` embeds (no topic or details in this set)."""
    return embedding_text("", summary, "", applies_when)


@dataclass(frozen=True)
class Scored:
    """One pair with its cosine and both matchers' verdicts (True: refused)."""

    pair: Pair
    similarity: float
    same_text: bool
    difference: str | None
    swap_same_meaning: float = 0.0
    """The model's swap cue (``ScoreScale.swap_same_meaning``)."""

    def refused(self, matcher: str, threshold: float) -> bool:
        if self.same_text:
            return True
        if matcher == "before":
            return self.similarity >= threshold
        return near_duplicate(
            self.pair.retired, self.pair.text, self.similarity, threshold, self.swap_same_meaning
        )


def score(pairs: Sequence[Pair], embedder: Embedder) -> list[Scored]:
    """Embed each retired text and candidate once and score every pair."""
    texts = sorted(
        {saved_text(p.retired, p.applies_when) for p in pairs}
        | {saved_text(p.text, p.applies_when) for p in pairs}
    )
    vectors = {t: np.asarray(embedder.embed_one(t, PASSAGE), dtype=np.float32) for t in texts}
    return [
        Scored(
            pair=p,
            similarity=float(
                np.dot(
                    vectors[saved_text(p.retired, p.applies_when)],
                    vectors[saved_text(p.text, p.applies_when)],
                )
            ),
            same_text=fingerprint(p.retired) == fingerprint(p.text),
            difference=difference(p.retired, p.text),
            swap_same_meaning=score_scale(embedder).swap_same_meaning,
        )
        for p in pairs
    ]


def confusion(scored: Sequence[Scored], matcher: str, threshold: float) -> dict[str, float]:
    """TP/FP/FN/TN with "caught" as positive, precision, recall and required correctness."""
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "required_wrong": 0}
    for s in scored:
        refused = s.refused(matcher, threshold)
        caught = s.pair.label == "caught"
        counts[("t" if refused == caught else "f") + ("p" if refused else "n")] += 1
        if s.pair.required and refused != caught:
            counts["required_wrong"] += 1
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {
        **counts,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


def wrong(scored: Sequence[Scored], matcher: str, threshold: float) -> list[Scored]:
    return [s for s in scored if s.refused(matcher, threshold) != (s.pair.label == "caught")]


def report(scored: Sequence[Scored], threshold: float) -> tuple[str, dict[str, Any]]:
    """The printed report and its JSON form."""
    results = {m: confusion(scored, m, threshold) for m in MATCHERS}
    required = sum(1 for s in scored if s.pair.required)
    lines = [
        f"{len(scored)} labelled saves ({required} required), threshold {threshold}",
        "",
        f"{'matcher':<10}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}"
        f"{'precision':>11}{'recall':>8}{'required wrong':>16}",
    ]
    for m, r in results.items():
        lines.append(
            f"{m:<10}{r['tp']:>5}{r['fp']:>5}{r['fn']:>5}{r['tn']:>5}"
            f"{r['precision']:>11.3f}{r['recall']:>8.3f}{r['required_wrong']:>16}"
        )
    lines += [
        "",
        f"{'set':<10}{'n':>5}{'before P':>10}{'before R':>10}{'after P':>9}{'after R':>9}",
    ]
    by_set: dict[str, dict[str, dict[str, float]]] = {}
    for name in SETS:
        members = [s for s in scored if s.pair.set_name == name]
        if not members:
            continue
        by_set[name] = {m: confusion(members, m, threshold) for m in MATCHERS}
        b, a = by_set[name]["before"], by_set[name]["after"]
        lines.append(
            f"{name:<10}{len(members):>5}{b['precision']:>10.3f}{b['recall']:>10.3f}"
            f"{a['precision']:>9.3f}{a['recall']:>9.3f}"
        )
    categories = sorted({s.pair.category for s in scored})
    lines += ["", f"{'category':<16}{'n':>4}{'before ok':>11}{'after ok':>10}"]
    for c in categories:
        members = [s for s in scored if s.pair.category == c]
        ok = {
            m: sum(1 for s in members if s.refused(m, threshold) == (s.pair.label == "caught"))
            for m in MATCHERS
        }
        lines.append(f"{c:<16}{len(members):>4}{ok['before']:>11}{ok['after']:>10}")
    for m in MATCHERS:
        lines += ["", f"{m}: wrong"]
        for s in wrong(scored, m, threshold):
            want = "refuse" if s.pair.label == "caught" else "allow"
            lines.append(
                f"  cos {s.similarity:.3f} want {want:<6} [{s.pair.category}] "
                f"{s.pair.retired!r} -> {s.pair.text!r}"
                + ("" if s.pair.set_name == "built" else f" [{s.pair.set_name}]")
                + (f" ({s.difference})" if m == "after" and s.difference else "")
            )
    lines += ["", f"{'threshold':<11}{'before P':>9}{'before R':>9}{'after P':>9}{'after R':>9}"]
    sweep: list[dict[str, float]] = []
    for step in range(80, 100, 2):
        t = step / 100
        b, a = confusion(scored, "before", t), confusion(scored, "after", t)
        sweep.append(
            {
                "threshold": t,
                "before_precision": b["precision"],
                "before_recall": b["recall"],
                "after_precision": a["precision"],
                "after_recall": a["recall"],
            }
        )
        lines.append(
            f"{t:<11.2f}{b['precision']:>9.3f}{b['recall']:>9.3f}"
            f"{a['precision']:>9.3f}{a['recall']:>9.3f}"
        )
    b, a = results["before"], results["after"]
    lines += [
        "",
        f"before precision={b['precision']:.3f} recall={b['recall']:.3f}; "
        f"after precision={a['precision']:.3f} recall={a['recall']:.3f}",
    ]
    data = {
        "threshold": threshold,
        "cases": len(scored),
        "required": required,
        "results": results,
        "by_set": by_set,
        "sweep": sweep,
        "wrong": {
            m: [
                {
                    "retired": s.pair.retired,
                    "text": s.pair.text,
                    "label": s.pair.label,
                    "category": s.pair.category,
                    "similarity": round(s.similarity, 4),
                }
                for s in wrong(scored, m, threshold)
            ]
            for m in MATCHERS
        },
    }
    return "\n".join(lines), data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tombstone_matcher", description=__doc__)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument(
        "--threshold", type=float, default=None, help="cosine (default: the model's own)"
    )
    parser.add_argument("--model-cache", type=Path, default=None, help="GGUF model cache folder")
    parser.add_argument(
        "--model", type=Path, default=None, help="a GGUF embedding model (default: MAMA's)"
    )
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args(argv)

    model_cache = args.model_cache or Path(platformdirs.user_cache_dir("mama")) / "models"
    embedder = load_embedder(args.model, model_cache)
    print(f"model id: {embedder.model_id}", file=sys.stderr)
    threshold = args.threshold
    if threshold is None:
        threshold = score_scale(embedder).duplicate_threshold
    text, data = report(score(load_pairs(args.pairs), embedder), threshold)
    data["model_id"] = embedder.model_id
    print(text)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
