"""Cross-language recall on owner notes: does a question find its note, in any script?

    python -m bench.multilingual [PATH] [--model GGUF] [--role-prefixes]
        [--stores all|bilingual] [--languages en,de,ja] [--per-language N]
        [--methods fused,vector,…] [--json OUT]

Every note of the notes file (``bench/data/multilingual_notes.json`` unless PATH
is given; see ``bench.multilingual_notes``) is saved through the real engine
as the owner into one temporary encrypted store (``bench.harness.BenchStore``,
the path ``bench.retrieval`` uses; ``--stores bilingual``: the English notes
plus one other language per store instead), with vectors from the real GGUF model: the
default model, or the file ``--model`` names. Each note is then asked for twice
— by its English question (en->xx) and by its question in its own language
(xx->xx) — and ranked by ``Recall.search`` with the default preset (fused) and
the vector-only preset, and by plain cosine over the stored vectors (the model
alone, no recall thresholds). Scored: top-1 (the note is first), recall@5 and
MRR, per language and direction, and overall.

Questions are embedded as queries and notes as passages: through the embedder's
own ``role`` parameter when it has one, else with e5's ``query: ``/``passage: ``
text prefixes when ``--role-prefixes`` is given, else as they are
(``bench.roles``). Vectors are cached by content hash between runs
(``bench.embedding_cache``). Ends with the line
``overall top1=… recall@5=… worst=<language> <direction> top1=…`` (fused).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from bench.harness import BenchStore, Memory, stored_embedding_text
from bench.metrics import evidence_recall, reciprocal_rank
from bench.multilingual_notes import DEFAULT_PATH, Note, NoteSet, load_notes, problems
from bench.report import Scores
from bench.retrieval import ALIASES, parse_method
from bench.roles import PASSAGE, QUERY, RoleEmbedder
from mama_core.embeddings import load_embedder
from mama_core.errors import MamaError
from mama_core.recall import PRESETS, Recall, RecallConfig, RecallQuery

DEPTH = 100
METRICS = ("top1", "recall@5", "mrr")
COSINE = "cosine"
DEFAULT_METHODS = ("fused", "vector", COSINE)
DIRECTIONS = ("en", "native")
# Every note gets the same event time: the benchmark is about meaning, not dates.
NOTED_AT = datetime(2026, 1, 12, 9, 0)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Ask:
    """One question: the note it should find and the direction it is asked in."""

    note: Note
    direction: str

    @property
    def text(self) -> str:
        return self.note.question_en if self.direction == "en" else self.note.question_native

    @property
    def category(self) -> str:
        return f"{self.note.language}|{self.direction}"


def direction_label(language: str, direction: str) -> str:
    """``en->de`` / ``de->de``; English notes' second phrasing is ``en'->en``."""
    if direction == "en":
        return f"en->{language}"
    return "en'->en" if language == "en" else f"{language}->{language}"


def score(ranked: Sequence[str], key: str) -> dict[str, float]:
    return {
        "top1": float(bool(ranked) and ranked[0] == key),
        "recall@5": evidence_recall(ranked, [key], 5),
        "mrr": reciprocal_rank(ranked, [key]),
    }


def choose_methods(names: str | None, specs: Sequence[str] = ()) -> dict[str, RecallConfig | None]:
    """Recall presets by bench name (``fused``, ``vector``, ``bm25`` or a preset), and cosine;
    ``specs`` add presets with some fields changed (``LABEL=PRESET:field=value,…``)."""
    chosen: dict[str, RecallConfig | None] = {}
    for raw in (names or ",".join(DEFAULT_METHODS)).split(","):
        name = raw.strip()
        if not name:
            continue
        chosen[name] = None if name == COSINE else PRESETS[ALIASES.get(name, name)]
    for spec in specs:
        label, config = parse_method(spec)
        chosen[label] = config
    return chosen


class MultilingualRun:
    """One store of every note, and every note's two questions asked of it."""

    def __init__(
        self,
        notes: NoteSet,
        embedder: RoleEmbedder,
        methods: dict[str, RecallConfig | None],
        stores: str = "all",
    ) -> None:
        self.notes = notes
        self.stores = stores
        self.embedder = embedder
        self.methods = methods
        self.asks = [Ask(n, d) for n in notes.notes for d in DIRECTIONS]
        self.scores = {name: Scores(METRICS) for name in methods}
        self.records: list[dict[str, Any]] = []
        self.refused: list[tuple[str, str]] = []  # (note id, the engine's error code)
        self.save_seconds = 0.0

    def prefetch(self) -> float:
        """Embed every note (as a passage) and question (as a query) not cached yet."""
        began = time.perf_counter()
        passages = [stored_embedding_text(n.note) for n in self.notes.notes]
        self.embedder.prefetch(passages, PASSAGE, _progress("notes"))
        self.embedder.prefetch([a.text for a in self.asks], QUERY, _progress("questions"))
        return time.perf_counter() - began

    def run(self) -> None:
        for stored, asked in store_plans(self.notes, self.stores):
            self._store(stored, asked)

    def _store(self, stored: Sequence[Note], asked: Sequence[Note]) -> None:
        with BenchStore(self.embedder) as store:
            for note in stored:
                store.save(Memory(note.id, note.note, NOTED_AT))
            self.refused += store.refused
            self.save_seconds += store.save_seconds
            if store.cache.vector_count != len(store.key_of):
                raise RuntimeError("the vector cache lost change-sets while saving")
            keys = [store.key_of[i] for i in sorted(store.key_of)]
            passages = self.embedder.embed(
                [stored_embedding_text(self._note(k).note) for k in keys], PASSAGE
            )
            recall = store.recall()
            scopes = store.scopes()
            for ask in (Ask(n, d) for n in asked for d in DIRECTIONS):
                self._ask(ask, store, recall, scopes, keys, passages)

    def _note(self, key: str) -> Note:
        return next(n for n in self.notes.notes if n.id == key)

    def _ask(
        self,
        ask: Ask,
        store: BenchStore,
        recall: Recall,
        scopes: list[str],
        keys: list[str],
        passages: np.ndarray,
    ) -> None:
        vector = self.embedder.embed_one(ask.text, QUERY)
        record: dict[str, Any] = {
            "id": ask.note.id,
            "language": ask.note.language,
            "direction": ask.direction,
            "question": ask.text,
        }
        for name, config in self.methods.items():
            if config is None:
                order = np.argsort(-(passages @ vector), kind="stable")[:DEPTH]
                ranked = [keys[i] for i in order]
            else:
                query = RecallQuery(ask.text, scopes=scopes, limit=DEPTH)
                hits = recall.search(query, query_vector=vector, config=config)
                ranked = [store.key_of[h.id] for h in hits]
            values = score(ranked, ask.note.id)
            self.scores[name].add(ask.category, values)
            record[name] = {"metrics": values, "top5": ranked[:5]}
        self.records.append(record)

    def miss_kinds(self, method: str) -> dict[str, int]:
        """What took first place when the note did not: same topic, same language, other."""
        by_id = {n.id: n for n in self.notes.notes}
        kinds = {"same topic, other language": 0, "same language, other topic": 0}
        kinds.update({"same topic and language": 0, "other": 0, "nothing found": 0})
        for record in self.records:
            top = record[method]["top5"]
            if top and top[0] == record["id"]:
                continue
            if not top:
                kinds["nothing found"] += 1
                continue
            wanted, got = by_id[record["id"]], by_id[top[0]]
            same_topic, same_lang = wanted.topic == got.topic, wanted.language == got.language
            if same_topic and same_lang:
                kinds["same topic and language"] += 1
            elif same_topic:
                kinds["same topic, other language"] += 1
            elif same_lang:
                kinds["same language, other topic"] += 1
            else:
                kinds["other"] += 1
        return kinds


def store_plans(notes: NoteSet, stores: str) -> list[tuple[tuple[Note, ...], tuple[Note, ...]]]:
    """The stores to build, each as (notes saved, notes asked for).

    ``all``: one store of every note, every note asked (an owner who writes in
    all these languages). ``bilingual``: the English notes alone, then one store
    per other language of its notes and the English ones, its own notes asked
    (an owner who writes in English and one language of their own).
    """
    if stores == "all":
        return [(notes.notes, notes.notes)]
    english = tuple(n for n in notes.notes if n.language == "en")
    plans = [(english, english)] if english else []
    for code in notes.languages:
        if code != "en":
            own = tuple(n for n in notes.notes if n.language == code)
            plans.append((english + own, own))
    return plans


def _progress(what: str) -> Any:
    def progress(done: int, total: int) -> None:
        log(f"  embedding {what}: {done}/{total} new texts")

    return progress


def groups(notes: NoteSet) -> list[tuple[str, str, str, list[str] | None]]:
    """Table rows: (language, script, direction label, categories), then the overall rows."""
    rows: list[tuple[str, str, str, list[str] | None]] = []
    for code, (_, script) in notes.languages.items():
        for direction in DIRECTIONS:
            rows.append((code, script, direction_label(code, direction), [f"{code}|{direction}"]))
    codes = list(notes.languages)
    rows.append(("all", "", "en->xx", [f"{c}|en" for c in codes if c != "en"]))
    rows.append(("all", "", "xx->xx", [f"{c}|native" for c in codes if c != "en"]))
    rows.append(("all", "", "every", None))
    return rows


def format_multilingual(
    scores: dict[str, Scores], rows: list[tuple[str, str, str, list[str] | None]]
) -> str:
    """One row per language and direction, top-1 and recall@5 of every method side by side."""
    methods = list(scores)
    head1 = f"{'':<8}{'':<12}{'':<10}{'':>5}" + "".join(f"{m:>16}" for m in methods)
    head2 = f"{'lang':<8}{'script':<12}{'direction':<10}{'n':>5}" + "".join(
        f"{'top-1':>8}{'r@5':>8}" for _ in methods
    )
    lines = [head1, head2, "-" * len(head2)]
    for lang, script, label, categories in rows:
        first = scores[methods[0]].summary(categories)
        if not first["n"]:
            continue
        if lang == "all" and lines[-1] and not lines[-1].startswith("all"):
            lines.append("")
        cells = ""
        for method in methods:
            s = scores[method].summary(categories)
            cells += f"{s['top1']:>8.3f}{s['recall@5']:>8.3f}"
        lines.append(f"{lang:<8}{script:<12}{label:<10}{int(first['n']):>5}{cells}")
    return "\n".join(lines)


def worst_direction(scores: Scores, notes: NoteSet) -> tuple[str, float]:
    """The language and direction with the lowest top-1, as ``xx en->xx`` and its value."""
    worst = ("", 2.0)
    for code in notes.languages:
        for direction in DIRECTIONS:
            s = scores.summary([f"{code}|{direction}"])
            if s["n"] and s["top1"] < worst[1]:
                worst = (f"{code} {direction_label(code, direction)}", s["top1"])
    return worst


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.multilingual", description=__doc__)
    parser.add_argument("path", type=Path, nargs="?", default=DEFAULT_PATH, help="notes file")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF embedding model")
    parser.add_argument("--model-cache", type=Path, default=None, help="GGUF model cache folder")
    parser.add_argument(
        "--role-prefixes",
        action="store_true",
        help="put 'query: '/'passage: ' before questions/notes if the embedder has no roles",
    )
    parser.add_argument("--languages", default=None, help="language codes, comma-separated")
    parser.add_argument("--per-language", type=int, default=None, help="first N notes of each")
    parser.add_argument(
        "--methods", default=None, help=f"comma-separated (default {','.join(DEFAULT_METHODS)})"
    )
    parser.add_argument(
        "--method",
        action="append",
        default=[],
        metavar="LABEL=PRESET:field=value,…",
        help="add a preset with some fields changed (repeatable), as in bench.retrieval",
    )
    parser.add_argument(
        "--stores",
        choices=("all", "bilingual"),
        default="all",
        help="one store of every note (default), or English plus one language per store",
    )
    parser.add_argument("--json", type=Path, dest="json_out", help="write all results here")
    args = parser.parse_args(argv)

    try:
        notes = load_notes(args.path)
        methods = choose_methods(args.methods, args.method)
    except (ValueError, KeyError) as exc:
        print(f"bench.multilingual: {exc}", file=sys.stderr)
        return 2
    wrong = problems(notes)
    if wrong:
        print(
            f"bench.multilingual: {args.path}: {wrong[0]} ({len(wrong)} problems)", file=sys.stderr
        )
        return 2
    languages = args.languages.split(",") if args.languages else None
    notes = notes.subset(languages, args.per_language)
    if not notes.notes:
        print("bench.multilingual: no notes left after --languages/--per-language", file=sys.stderr)
        return 2

    model_cache = args.model_cache or Path(platformdirs.user_cache_dir("mama")) / "models"
    try:
        inner = load_embedder(args.model, model_cache)
    except MamaError as exc:
        print(f"bench.multilingual: {exc}", file=sys.stderr)
        return 2
    embedder = RoleEmbedder(inner, prefixes=args.role_prefixes)
    run = MultilingualRun(notes, embedder, methods, args.stores)
    log(f"multilingual: {len(notes.notes)} notes, {len(run.asks)} questions")
    embed_seconds = run.prefetch()
    began = time.perf_counter()
    run.run()
    run_seconds = time.perf_counter() - began

    fused = next(iter(methods))
    config = methods[fused]
    print(f"file: {args.path}")
    print(f"model: {embedder.model_id}  (dim {embedder.dim})")
    print(f"roles: {embedder.describe()}")
    if args.role_prefixes and embedder.mode == "native":
        print("  (--role-prefixes not applied: the embedder adds its own)")
    print(f"fusion: {config.fusion_version if config else COSINE}")
    print(
        f"notes: {len(notes.notes)} in {len(notes.languages)} languages  "
        f"questions: {len(run.asks)}  refused: {len(run.refused)}  stores: {args.stores}"
        + (" (every note in one store)" if args.stores == "all" else " (English + one language)")
    )
    print(
        "methods: fused = default preset; vector = vector_only preset (same code path, "
        "its minimum score applies); cosine = the model alone: every stored note ranked "
        "by cosine to the question"
    )
    for name, cfg in methods.items():
        if cfg is not None:
            print(f"  {name}: {cfg.fusion_version}")
    print()
    print(format_multilingual(run.scores, groups(notes)))
    print()
    for name in methods:
        kinds = run.miss_kinds(name)
        missed = sum(kinds.values())
        described = ", ".join(f"{k} {v}" for k, v in kinds.items() if v)
        print(f"top-1 misses, {name}: {missed}" + (f" (first was: {described})" if missed else ""))
    if run.refused:
        print(f"refused by the engine: {run.refused}")
    print(
        f"timing: embedding new texts {embed_seconds:.1f} s (cache hits {embedder.hits}, "
        f"misses {embedder.misses}); saving {run.save_seconds:.1f} s; questions "
        f"{run_seconds - run.save_seconds:.1f} s"
    )
    summary = run.scores[fused].summary()
    where, worst = worst_direction(run.scores[fused], notes)
    line = (
        f"overall top1={summary['top1']:.3f} recall@5={summary['recall@5']:.3f} "
        f"worst={where} top1={worst:.3f}"
    )
    print(line)

    if args.json_out is not None:
        out = {
            "path": str(args.path),
            "model_id": embedder.model_id,
            "roles": embedder.mode,
            "stores": args.stores,
            "methods": {
                name: {
                    "fusion_version": cfg.fusion_version if cfg else COSINE,
                    "by_category": {c: s.summary([c]) for c in sorted(s.by_category)},
                    "overall": s.summary(),
                    "misses": run.miss_kinds(name),
                }
                for (name, cfg), s in zip(methods.items(), run.scores.values(), strict=True)
            },
            "refused": run.refused,
            "overall_line": line,
            "questions": run.records,
        }
        args.json_out.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    embedder.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
