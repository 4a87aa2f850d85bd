"""Milliseconds per embedding for one or more GGUF models, side by side in one run.

    python -m bench.embed_speed MODEL.gguf [MODEL.gguf ...] [--texts 300] [--rounds 3]

Texts are the LoCoMo dev turns (``../shared/bench/locomo_dev.json``), the length of
what MAMA embeds. For each model: one text per call (a query, or one saved memory)
p50/p95 in ms, and batches of 32 (a re-embedding) in texts per second. Models are
timed in alternating blocks, round after round, so a change in the machine's load
falls on all of them alike; the figures are still this machine's at this hour, for
comparing the models with each other, not absolute. Also prints each model's
cosine to the first model's vectors over the same texts (min and median).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from mama_core.embeddings import PASSAGE, QUERY
from mama_core.embeddings.gguf import GgufEmbedder

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo_dev.json"
BATCH = 32


def turn_texts(path: Path, count: int) -> list[str]:
    """The first ``count`` distinct turn texts of the LoCoMo file."""
    data = json.loads(path.read_text("utf-8"))
    texts: list[str] = []
    for sample in data:
        conversation = sample["conversation"]
        for key in sorted(k for k in conversation if k.startswith("session_") and "date" not in k):
            for turn in conversation[key]:
                text = str(turn.get("text", "")).strip()
                if text and text not in texts:
                    texts.append(text)
                if len(texts) == count:
                    return texts
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    texts = turn_texts(args.data, args.texts)
    embedders = [GgufEmbedder(path) for path in args.models]
    for embedder in embedders:
        embedder.embed(texts[:BATCH])  # load and warm up
    single: list[list[float]] = [[] for _ in embedders]
    batched: list[list[float]] = [[] for _ in embedders]
    for _ in range(args.rounds):
        for i, embedder in enumerate(embedders):
            for text in texts:
                start = time.perf_counter()
                embedder.embed([text], QUERY)  # what a search pays
                single[i].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            for at in range(0, len(texts), BATCH):
                embedder.embed(texts[at : at + BATCH], PASSAGE)  # what storing pays
            batched[i].append(len(texts) / (time.perf_counter() - start))

    reference = np.asarray(embedders[0].embed(texts), dtype=np.float32)
    print(f"{len(texts)} texts x {args.rounds} rounds, models in alternating blocks")
    for i, (path, embedder) in enumerate(zip(args.models, embedders, strict=True)):
        cuts = statistics.quantiles(single[i], n=100, method="inclusive")
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        cosines = np.sum(vectors * reference, axis=1) / (
            np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1)
        )
        print(
            f"{path.name}: {path.stat().st_size / 1e6:.1f} MB, one text p50 "
            f"{statistics.median(single[i]):.2f} ms p95 {cuts[94]:.2f} ms, batches of "
            f"{BATCH}: {statistics.median(batched[i]):.0f} texts/s, cosine to "
            f"{args.models[0].name}: min {cosines.min():.5f} median {np.median(cosines):.5f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
