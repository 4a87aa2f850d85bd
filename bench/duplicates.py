"""Precision and recall of the restatement matcher on a labelled set of pairs.

    python -m bench.duplicates [--pairs FILE] [--model-cache DIR] [--builtin NAME ...] [--json OUT]

Each pair of ``bench/data/duplicate_pairs.json`` is a saved text ``a`` and a later
save ``b``, labelled ``same`` (b restates a: it should merge) or ``different`` (b
states another fact: another day, branch, number or name, a negation, a related
fact). "same" is the positive class, and a false positive costs more than a
miss: a merged save is a fact the owner told MAMA and did not get kept, a missed
one is a second copy search still groups by hand. So for each model the
threshold is the one with the best recall among those whose precision on the
``dev`` split is at least ``PRECISION_FLOOR`` (ties: the higher threshold); the
figures reported are the ``held_out`` split's, at that threshold and at the one
the model's ``ScoreScale.restatement_threshold`` uses.

Vectors come from the real GGUF model over the text a save embeds (summary only
here), compared as passages; the matcher is ``restatements.same_meaning`` (the
tombstone matcher's word checks with the restatement threshold). The last line
is ``MODEL held_out precision=… recall=… at threshold …`` per model.
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
from mama_core.embeddings.convert import E5_SMALL, MINILM
from mama_core.memory.restatements import same_meaning
from mama_core.model import embedding_text

PAIRS = Path(__file__).resolve().parent / "data" / "duplicate_pairs.json"
PRECISION_FLOOR = 0.95
THRESHOLDS = tuple(round(0.80 + step * 0.005, 3) for step in range(40))


@dataclass(frozen=True)
class Pair:
    """One labelled pair: ``b`` saved after ``a``."""

    a: str
    b: str
    same: bool
    language: str
    category: str
    split: str


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Pair(
            a=p["a"],
            b=p["b"],
            same=p["label"] == "same",
            language=p["language"],
            category=p["category"],
            split=p["split"],
        )
        for p in data["pairs"]
    ]


@dataclass(frozen=True)
class Scored:
    pair: Pair
    similarity: float
    swap_same_meaning: float

    def merged(self, threshold: float) -> bool:
        return same_meaning(
            self.pair.a, self.pair.b, self.similarity, threshold, self.swap_same_meaning
        )


def score(pairs: Sequence[Pair], embedder: Embedder) -> list[Scored]:
    """Embed every text once (as a save would: a passage) and score each pair."""
    texts = sorted({p.a for p in pairs} | {p.b for p in pairs})
    matrix = embedder.embed([embedding_text("", t, "", None) for t in texts], PASSAGE)
    vectors = {t: np.asarray(matrix[i], dtype=np.float32) for i, t in enumerate(texts)}
    swap = score_scale(embedder).swap_same_meaning
    return [Scored(p, float(np.dot(vectors[p.a], vectors[p.b])), swap) for p in pairs]


def confusion(scored: Sequence[Scored], threshold: float) -> dict[str, float]:
    """TP/FP/FN/TN with "same" (merged) as the positive class, precision and recall."""
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for s in scored:
        merged = s.merged(threshold)
        counts[("t" if merged == s.pair.same else "f") + ("p" if merged else "n")] += 1
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {
        **counts,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


def choose_threshold(dev: Sequence[Scored]) -> float:
    """The dev split's best recall with precision >= ``PRECISION_FLOOR`` (ties: higher)."""
    best = (-1.0, 0.0)
    for t in THRESHOLDS:
        r = confusion(dev, t)
        if r["precision"] >= PRECISION_FLOOR and (r["recall"], t) >= best:
            best = (r["recall"], t)
    return best[1] if best[0] >= 0 else THRESHOLDS[-1]


def report(name: str, scored: Sequence[Scored], configured: float) -> tuple[str, dict[str, Any]]:
    dev = [s for s in scored if s.pair.split == "dev"]
    held = [s for s in scored if s.pair.split == "held_out"]
    chosen = choose_threshold(dev)
    rows = {
        "dev@chosen": confusion(dev, chosen),
        "held_out@chosen": confusion(held, chosen),
        "held_out@configured": confusion(held, configured),
        "all@configured": confusion(scored, configured),
    }
    lines = [
        f"== {name}: {len(scored)} pairs ({len(dev)} dev, {len(held)} held out); "
        f"chosen on dev {chosen} (precision >= {PRECISION_FLOOR}), configured {configured}",
        f"{'split@threshold':<22}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}{'precision':>11}{'recall':>8}",
    ]
    for label, r in rows.items():
        lines.append(
            f"{label:<22}{r['tp']:>5}{r['fp']:>5}{r['fn']:>5}{r['tn']:>5}"
            f"{r['precision']:>11.3f}{r['recall']:>8.3f}"
        )
    lines += ["", f"{'language':<10}{'n':>4}{'P':>8}{'R':>8}   (held out, configured)"]
    for language in sorted({s.pair.language for s in held}):
        r = confusion([s for s in held if s.pair.language == language], configured)
        members = sum(1 for s in held if s.pair.language == language)
        lines.append(f"{language:<10}{members:>4}{r['precision']:>8.3f}{r['recall']:>8.3f}")
    lines += ["", f"{'threshold':<11}{'dev P':>7}{'dev R':>7}{'held P':>8}{'held R':>8}"]
    for t in THRESHOLDS[::4]:
        d, h = confusion(dev, t), confusion(held, t)
        lines.append(
            f"{t:<11.3f}{d['precision']:>7.3f}{d['recall']:>7.3f}"
            f"{h['precision']:>8.3f}{h['recall']:>8.3f}"
        )
    lines += ["", "wrong at the configured threshold (all splits):"]
    for s in scored:
        if s.merged(configured) != s.pair.same:
            want = "merge" if s.pair.same else "keep apart"
            lines.append(
                f"  cos {s.similarity:.3f} want {want:<10} [{s.pair.language} {s.pair.category}"
                f" {s.pair.split}] {s.pair.a!r} -> {s.pair.b!r}"
            )
    data = {"chosen_threshold": chosen, "configured_threshold": configured, "results": rows}
    return "\n".join(lines), data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.duplicates", description=__doc__)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--model-cache", type=Path, default=None, help="GGUF model cache folder")
    parser.add_argument(
        "--builtin",
        action="append",
        choices=[E5_SMALL, MINILM],
        help="built-in model(s) to score (default: both, the default model first)",
    )
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args(argv)

    model_cache = args.model_cache or Path(platformdirs.user_cache_dir("mama")) / "models"
    pairs = load_pairs(args.pairs)
    summary: list[str] = []
    out: dict[str, Any] = {}
    for builtin in args.builtin or [E5_SMALL, MINILM]:
        embedder = load_embedder(None, model_cache, builtin=builtin)
        configured = score_scale(embedder).restatement_threshold
        text, data = report(builtin, score(pairs, embedder), configured)
        print(text + "\n")
        held = data["results"]["held_out@configured"]
        data["model_id"] = embedder.model_id
        out[builtin] = data
        summary.append(
            f"{builtin} held_out precision={held['precision']:.3f} "
            f"recall={held['recall']:.3f} at threshold {configured}"
        )
    print("\n".join(summary))
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(out, indent=2, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
