"""Retrieval quality of MAMA's recall on LoCoMo and LongMemEval files.

    python -m bench.retrieval locomo PATH [--json OUT] [--builtin MODEL]
    python -m bench.retrieval longmemeval PATH [--json OUT]
        [--methods fused,episode,prf,…] [--method LABEL=PRESET:field=value,…]
        [--cached-only]

For each store the protocol calls for (``bench.datasets``), memories are saved
through the real engine as the owner into a temporary encrypted store, vectors
come from the real GGUF model (cached by content hash between runs), and each
question is answered by ``Recall.search`` with four presets — fused (default),
BM25 only, vector only, and episode (default plus the ``episode-v1`` neighbour
stage) — plus a plain BM25 baseline (``bench.plain_bm25``)
measured in the same run. ``--methods`` picks other presets by name (``fused``
is the default preset and always runs), ``--method`` adds a preset with some
fields changed, for a sweep; ``--cached-only`` scores only the stores whose
every text is already in the embedding cache (a subset, said so in the output).
Rankings keep the top 100 (the default arm depth); MRR is over that list. Ends with the line
``overall recall@5=… recall@10=… mrr=…`` (LoCoMo: evidence recall in percent
and MRR over categories 1-4; LongMemEval: recall_all@5, recall_all@10 and
ndcg_any@10, in the slots of that line).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import platformdirs

from bench.datasets import Case, Question, locomo_cases, longmemeval_cases, session_of
from bench.embedding_cache import CachedEmbedder
from bench.harness import BenchStore, stored_embedding_text
from bench.metrics import (
    dedupe,
    evidence_recall,
    ndcg_any,
    recall_all,
    recall_any,
    reciprocal_rank,
)
from bench.plain_bm25 import PlainBM25
from bench.report import Column, Scores, format_table
from mama_core.embeddings import QUERY, load_embedder
from mama_core.recall import PRESETS, RecallConfig, RecallQuery

DEPTH = 100
METHODS: dict[str, RecallConfig] = {
    "fused": PRESETS["default"],
    "bm25": PRESETS["bm25_only"],
    "vector": PRESETS["vector_only"],
    "episode": PRESETS["episode"],
}
ALIASES = {"fused": "default", "bm25": "bm25_only", "vector": "vector_only"}


def parse_method(spec: str) -> tuple[str, RecallConfig]:
    """``LABEL=PRESET:field=value,…`` as a label and its config (numbers and true/false)."""
    label, _, rest = spec.partition("=")
    name, _, fields = rest.partition(":")
    base = PRESETS[ALIASES.get(name, name)]
    changes: dict[str, Any] = {}
    for item in filter(None, fields.split(",")):
        key, _, raw = item.partition("=")
        current = getattr(base, key)
        if isinstance(current, bool):
            changes[key] = raw.lower() in ("1", "true", "yes")
        else:
            changes[key] = type(current)(raw)
    return label, base.with_changes(name=label, **changes)


def choose_methods(names: str | None, specs: Sequence[str]) -> dict[str, RecallConfig]:
    """``METHODS``, or ``fused`` plus the named presets and the specs when any are given."""
    if names is None and not specs:
        return dict(METHODS)
    chosen = {"fused": PRESETS["default"]}
    for name in filter(None, (names or "").split(",")):
        chosen[name] = PRESETS[ALIASES.get(name, name)]
    for spec in specs:
        label, config = parse_method(spec)
        chosen[label] = config
    return chosen


BASELINE = "plain-bm25"

LOCOMO_METRICS = ("recall@5", "recall@10", "mrr")
LME_METRICS = (
    "recall_all@5",
    "recall_all@10",
    "recall_any@5",
    "recall_any@10",
    "ndcg_any@5",
    "ndcg_any@10",
    "mrr",
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def case_passages(case: Case) -> list[str]:
    """Every stored text of a case the model embeds (as passages): its memories as stored.
    Its questions are embedded as queries."""
    return [stored_embedding_text(m.text) for m in case.memories]


def score_locomo(ranked: Sequence[str], q: Question) -> dict[str, float]:
    return {
        "recall@5": evidence_recall(ranked, q.evidence, 5),
        "recall@10": evidence_recall(ranked, q.evidence, 10),
        "mrr": reciprocal_rank(ranked, q.evidence),
    }


def score_longmemeval(ranked_turns: Sequence[str], q: Question) -> dict[str, float]:
    sessions = dedupe([session_of(k) for k in ranked_turns])
    out: dict[str, float] = {}
    for k in (5, 10):
        out[f"recall_all@{k}"] = recall_all(sessions, q.evidence, k)
        out[f"recall_any@{k}"] = recall_any(sessions, q.evidence, k)
        out[f"ndcg_any@{k}"] = ndcg_any(sessions, q.evidence, k)
    out["mrr"] = reciprocal_rank(sessions, q.evidence)
    return out


class Run:
    """One benchmark run over a list of cases."""

    def __init__(
        self,
        dataset: str,
        cases: list[Case],
        embedder: CachedEmbedder,
        scorer: Callable[[Sequence[str], Question], dict[str, float]],
        metrics: tuple[str, ...],
        methods: dict[str, RecallConfig] | None = None,
    ) -> None:
        self.dataset = dataset
        self.methods = dict(METHODS) if methods is None else methods
        self.cases = cases
        self.embedder = embedder
        self.scorer = scorer
        self.scores = {name: Scores(metrics) for name in [*self.methods, BASELINE]}
        self.questions: list[dict[str, Any]] = []
        self.refused: list[dict[str, str]] = []
        self.latency_ms: list[float] = []
        self.method_ms: dict[str, list[float]] = {name: [] for name in self.methods}
        self.query_embed_ms: list[float] = []
        self.saved = 0
        self.save_seconds = 0.0

    def prefetch(self) -> float:
        """Embed every memory and question text not cached yet; seconds spent."""
        passages = [t for c in self.cases for t in case_passages(c)]
        questions = [q.text for c in self.cases for q in c.questions]
        began = time.perf_counter()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.perf_counter() - last[0] > 10 or done == total:
                last[0] = time.perf_counter()
                log(f"  embedding {done}/{total} new texts")

        self.embedder.prefetch(passages, progress)
        self.embedder.prefetch(questions, progress, role=QUERY)
        return time.perf_counter() - began

    def run(self) -> None:
        for n, case in enumerate(self.cases, start=1):
            self._case(case)
            if n % 10 == 0 or n == len(self.cases):
                log(f"  {n}/{len(self.cases)} stores done")

    def _case(self, case: Case) -> None:
        with BenchStore(self.embedder) as store:
            for memory in case.memories:
                store.save(memory)
            self.saved += len(store.key_of)
            self.save_seconds += store.save_seconds
            self.refused += [{"case": case.id, "key": k, "code": c} for k, c in store.refused]
            if store.cache.vector_count != len(store.key_of):
                raise RuntimeError(
                    f"vector cache holds {store.cache.vector_count} vectors after "
                    f"{len(store.key_of)} saves: change-sets were lost"
                )
            recall = store.recall()
            scopes = store.scopes()
            plain = PlainBM25([m.text for m in case.memories])
            for q in case.questions:
                self._question(q, case, store, recall, scopes, plain)

    def _question(
        self,
        q: Question,
        case: Case,
        store: BenchStore,
        recall: Any,
        scopes: list[str],
        plain: PlainBM25,
    ) -> None:
        began = time.perf_counter()
        vector = self.embedder.embed_one(q.text, QUERY)
        self.query_embed_ms.append((time.perf_counter() - began) * 1000)
        query = RecallQuery(q.text, scopes=scopes, limit=DEPTH)
        record: dict[str, Any] = {
            "id": q.id,
            "category": q.category,
            "question": q.text,
            "evidence": list(q.evidence),
        }
        # One untimed search first: the first search of a fresh store reads its
        # pages cold, which would be charged to whichever method ran first.
        recall.search(query, query_vector=vector, config=self.methods["fused"])
        for name, config in self.methods.items():
            began = time.perf_counter()
            hits = recall.search(query, query_vector=vector, config=config)
            elapsed = (time.perf_counter() - began) * 1000
            self.method_ms[name].append(elapsed)
            if name == "fused":
                self.latency_ms.append(elapsed)
            ranked = [store.key_of[h.id] for h in hits]
            values = self.scorer(ranked, q)
            self.scores[name].add(q.category, values)
            record[name] = {"metrics": values, "top10": ranked[:10]}
        ranked = [case.memories[i].key for i in plain.rank(q.text, DEPTH)]
        values = self.scorer(ranked, q)
        self.scores[BASELINE].add(q.category, values)
        record[BASELINE] = {"metrics": values, "top10": ranked[:10]}
        self.questions.append(record)


def _percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__)
    parser.add_argument("dataset", choices=("locomo", "longmemeval"))
    parser.add_argument("path", type=Path)
    parser.add_argument("--json", type=Path, dest="json_out", help="write all results here")
    parser.add_argument("--model-cache", type=Path, default=None, help="GGUF model cache folder")
    parser.add_argument(
        "--builtin", default=None, help="a built-in embedding model by name (default: MAMA's)"
    )
    parser.add_argument("--methods", default=None, help="presets to run, comma-separated")
    parser.add_argument(
        "--method", action="append", default=[], help="LABEL=PRESET:field=value,… (repeatable)"
    )
    parser.add_argument(
        "--cached-only",
        action="store_true",
        help="score only the stores whose texts are all in the embedding cache",
    )
    args = parser.parse_args(argv)
    methods = choose_methods(args.methods, args.method)

    model_cache = args.model_cache or Path(platformdirs.user_cache_dir("mama")) / "models"
    embedder = CachedEmbedder(load_embedder(None, model_cache, builtin=args.builtin))
    skipped: list[str] = []
    if args.dataset == "locomo":
        cases = list(locomo_cases(args.path))
        run = Run("locomo", cases, embedder, score_locomo, LOCOMO_METRICS, methods)
    else:
        cases = list(longmemeval_cases(args.path, skipped))
        run = Run("longmemeval", cases, embedder, score_longmemeval, LME_METRICS, methods)
    subset = ""
    if args.cached_only:
        kept = [
            c
            for c in cases
            if embedder.all_cached(case_passages(c))
            and embedder.all_cached([q.text for q in c.questions], QUERY)
        ]
        subset = f"  subset: {len(kept)} of {len(cases)} stores (those fully in the cache)"
        cases = kept
        run.cases = cases
    n_memories = sum(len(c.memories) for c in cases)
    n_questions = sum(len(c.questions) for c in cases)
    log(f"{args.dataset}: {len(cases)} stores, {n_memories} memories, {n_questions} questions")
    embed_seconds = run.prefetch()
    began = time.perf_counter()
    run.run()
    run_seconds = time.perf_counter() - began

    fusion = methods["fused"].fusion_version
    print(f"dataset: {args.dataset}  file: {args.path}")
    print(f"model: {embedder.model_id}  (dim {embedder.dim})")
    print(f"fusion: {fusion}")
    print(
        f"stores: {len(cases)}  memories saved: {run.saved}  refused: {len(run.refused)}  "
        f"questions: {n_questions}" + (f"  skipped: {len(skipped)}" if skipped else "") + subset
    )
    print(
        "methods: fused = default preset; bm25 / vector = the bm25_only / vector_only presets "
        "(same code path); episode = default + episode-v1 neighbours; plain-bm25 = "
        "rank_bm25-style Okapi over lowercase alphanumeric tokens, in memory, as the README's "
        "reference"
    )
    for name, config in methods.items():
        print(f"  {name}: {config.fusion_version}")
    print()
    if args.dataset == "locomo":
        columns = [
            Column("recall@5", "recall@5", True),
            Column("recall@10", "recall@10", True),
            Column("mrr", "MRR", False),
        ]
        categories = sorted({q.category for c in cases for q in c.questions})
        headline = [c for c in categories if not c.startswith("5")]
        groups: list[tuple[str, Sequence[str] | None]] = [(c, [c]) for c in categories]
        groups += [("overall 1-4", headline), ("overall 1-5", None)]
        print(format_table(run.scores, columns, groups))
        final = run.scores["fused"].summary(headline)
        line = (
            f"overall recall@5={final['recall@5'] * 100:.1f} "
            f"recall@10={final['recall@10'] * 100:.1f} mrr={final['mrr']:.3f}"
        )
    else:
        columns = [
            Column("recall_all@5", "r_all@5", False),
            Column("recall_all@10", "r_all@10", False),
            Column("recall_any@5", "r_any@5", False),
            Column("recall_any@10", "r_any@10", False),
            Column("ndcg_any@5", "ndcg@5", False),
            Column("ndcg_any@10", "ndcg@10", False),
            Column("mrr", "MRR", False),
        ]
        categories = sorted({q.category for c in cases for q in c.questions})
        groups = [(c, [c]) for c in categories]
        groups.append(("overall", None))
        print(format_table(run.scores, columns, groups))
        final = run.scores["fused"].summary()
        line = (
            f"overall recall@5={final['recall_all@5']:.3f} "
            f"recall@10={final['recall_all@10']:.3f} mrr={final['ndcg_any@10']:.3f}"
        )
    print()
    save_rate = run.saved / run.save_seconds if run.save_seconds else 0.0
    print(
        f"timing: embedding new texts {embed_seconds:.1f} s (cache hits {embedder.hits}, "
        f"misses {embedder.misses}); saving through the engine {run.save_seconds:.1f} s "
        f"({save_rate:.0f}/s, vectors from cache); recall p50 "
        f"{_percentile(run.latency_ms, 50):.2f} ms p95 {_percentile(run.latency_ms, 95):.2f} ms "
        f"(query embedding excluded; cached query vector lookup p50 "
        f"{_percentile(run.query_embed_ms, 50):.2f} ms); total {run_seconds:.1f} s"
    )
    print(
        "recall p50 per method, and its added cost: the median over questions of "
        "(method - fused), timed back to back on the same question:"
    )
    base_ms = run.method_ms["fused"]
    for name, samples in run.method_ms.items():
        added = [m - b for m, b in zip(samples, base_ms, strict=True)]
        print(
            f"  {name}: p50 {_percentile(samples, 50):.2f} ms, "
            f"added p50 {statistics.median(added) if added else 0.0:+.2f} ms, "
            f"mean {statistics.fmean(added) if added else 0.0:+.2f} ms"
        )
    if run.refused:
        codes: dict[str, int] = {}
        for r in run.refused:
            codes[r["code"]] = codes.get(r["code"], 0) + 1
        print(f"refused by the engine: {codes}")
    if args.dataset == "longmemeval":
        print("(LongMemEval: the overall line gives recall_all@5, recall_all@10, ndcg_any@10)")
    print(line)

    if args.json_out is not None:
        out = {
            "dataset": args.dataset,
            "path": str(args.path),
            "model_id": embedder.model_id,
            "fusion_version": fusion,
            "methods": {
                name: {
                    "fusion_version": methods[name].fusion_version if name in methods else None,
                    "by_category": {c: s.summary([c]) for c in sorted(s.by_category)},
                    "overall": s.summary(),
                }
                for name, s in run.scores.items()
            },
            "skipped": skipped,
            "refused": run.refused,
            "timing": {
                "embed_seconds": embed_seconds,
                "save_seconds": run.save_seconds,
                "recall_ms_p50": _percentile(run.latency_ms, 50),
                "recall_ms_p95": _percentile(run.latency_ms, 95),
                "method_ms_p50": {n: _percentile(v, 50) for n, v in run.method_ms.items()},
            },
            "overall_line": line,
            "questions": run.questions,
        }
        args.json_out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    embedder.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
