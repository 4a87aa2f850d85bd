"""Realistic judgment texts and questions for the speed benchmarks.

Texts are user turns of the public LongMemEval and LoCoMo files (the folder
``../shared/bench`` beside the repository, or ``MAMA_BENCH_CORPUS``), cut to a
judgment's length (one to three sentences, at most 300 characters). Repeats,
needed to reach 100,000 rows, get a unique ``#n`` tag so every row differs.
Questions are the sets' own questions. Without those files a small built-in
generator writes plausible work notes instead (and says so).
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

from bench.datasets import read_json

MAX_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def default_corpus_dir() -> Path:
    env = os.environ.get("MAMA_BENCH_CORPUS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "bench"


def clip(text: str) -> str:
    """The first sentences of ``text`` that fit in 300 characters (or a word-cut prefix)."""
    text = " ".join(text.split())
    if len(text) <= MAX_CHARS:
        return text
    out = ""
    for part in _SENTENCE_END.split(text):
        if len(out) + len(part) + 1 > MAX_CHARS:
            break
        out = f"{out} {part}".strip()
    if out:
        return out
    cut = text.rfind(" ", 0, MAX_CHARS)
    return text[: cut if cut > 0 else MAX_CHARS]


class Corpus:
    """Texts to store and questions to ask, and where they came from."""

    def __init__(self, texts: list[str], questions: list[str], source: str) -> None:
        self.texts = texts
        self.questions = questions
        self.source = source

    @classmethod
    def load(cls, folder: Path | None = None) -> Corpus:
        folder = folder or default_corpus_dir()
        lme = folder / "longmemeval_s_dev.json.gz"
        locomo = folder / "locomo_dev.json"
        texts: list[str] = []
        questions: list[str] = []
        if lme.is_file():
            for item in read_json(lme):
                questions.append(str(item["question"]))
                for session in item["haystack_sessions"]:
                    texts.extend(
                        clip(str(t["content"])) for t in session if t.get("role") == "user"
                    )
        if locomo.is_file():
            for sample in read_json(locomo):
                questions.extend(str(q["question"]) for q in sample["qa"])
                conv = sample["conversation"]
                for turns in conv.values():
                    if isinstance(turns, list):
                        texts.extend(clip(f"{t['speaker']}: {t.get('text', '')}") for t in turns)
        texts = [t for t in dict.fromkeys(texts) if t]
        if texts and questions:
            return cls(texts, questions, f"user turns of {lme.name} and {locomo.name}")
        return cls.generated()

    @classmethod
    def generated(cls, n: int = 20_000, seed: int = 7) -> Corpus:
        """Plausible work notes from a small grammar (when the public files are absent)."""
        rng = random.Random(seed)
        who = ["I", "We", "The team", "Anna", "Ben", "The client", "Support", "Finance"]
        verbs = ["decided to", "prefer to", "need to", "agreed to", "should", "will"]
        acts = ["deploy", "review", "archive", "email", "schedule", "migrate", "test", "pay"]
        things = [
            "the billing service",
            "the quarterly report",
            "invoices",
            "the staging database",
            "the onboarding docs",
            "the mobile app",
            "vendor contracts",
            "the backup job",
        ]
        whens = [
            "on Fridays",
            "before noon",
            "every sprint",
            "after the standup",
            "by the end of the month",
            "when the tests pass",
            "at least weekly",
        ]
        texts = [
            f"{rng.choice(who)} {rng.choice(verbs)} {rng.choice(acts)} {rng.choice(things)} "
            f"{rng.choice(whens)}."
            for _ in range(n)
        ]
        questions = [f"When do we {rng.choice(acts)} {rng.choice(things)}?" for _ in range(500)]
        return cls(list(dict.fromkeys(texts)), questions, "generated work notes")

    def text(self, i: int) -> str:
        """The i-th text; past the corpus, repeats tagged ``#i`` so every row differs."""
        base = self.texts[i % len(self.texts)]
        return base if i < len(self.texts) else f"{base} #{i}"
