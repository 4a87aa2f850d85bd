"""The multilingual notes file is sound, and ``python -m bench.multilingual`` runs on it."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bench.multilingual import main
from bench.multilingual_notes import (
    REQUIRED_SCRIPTS,
    NoteSet,
    load_notes,
    problems,
    scripts_in,
    shared_topics,
)
from bench.roles import PASSAGE, QUERY, RoleEmbedder
from mama_core.embeddings.base import Embedder


@pytest.fixture
def bench_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bench-cache"
    monkeypatch.setenv("MAMA_BENCH_CACHE", str(folder))
    return folder


def test_the_notes_file_covers_every_script_with_overlapping_topics() -> None:
    notes = load_notes()
    assert problems(notes, min_per_language=30) == []
    counts = Counter(n.language for n in notes.notes)
    assert len(notes.notes) >= 300 and len(counts) >= 9
    assert min(counts.values()) >= 30, counts
    assert set(REQUIRED_SCRIPTS) <= {n.script for n in notes.notes}
    for script in REQUIRED_SCRIPTS:
        assert any(script in scripts_in(n.note) for n in notes.notes), script
    assert any(scripts_in(n.note) >= {"Han", "Japanese"} for n in notes.notes)  # kana + kanji
    # Distractors: every topic has notes in at least three languages, most in all.
    topics = {n.topic for n in notes.notes}
    assert set(shared_topics(notes.notes, 3)) == topics
    assert len(shared_topics(notes.notes, len(counts))) >= 20


def test_a_broken_notes_file_is_refused_with_its_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = load_notes()
    first, second, japanese = notes.notes[0], notes.notes[1], notes.notes[-40]
    assert japanese.language == "ja"
    broken = NoteSet(
        notes.languages,
        (
            first,
            dataclasses.replace(second, note=first.note),
            dataclasses.replace(notes.notes[2], question_native=" "),
            dataclasses.replace(japanese, note="Tanaka's birthday is 5 November."),
        ),
    )
    found = problems(broken)
    assert any("same note as en-01" in p for p in found)
    assert any("empty question_native" in p for p in found)
    assert any("note has no Japanese letters" in p for p in found)
    # The control: the same notes unbroken have none of these problems.
    present = {c: v for c, v in notes.languages.items() if c in ("en", "ja")}
    intact = NoteSet(present, (first, second, notes.notes[2], japanese))
    assert problems(intact) == []

    path = tmp_path / "broken.json"
    path.write_text(
        json.dumps(
            {
                "languages": {c: {"name": n, "script": s} for c, (n, s) in notes.languages.items()},
                "notes": [dataclasses.asdict(n) for n in broken.notes],
            }
        ),
        encoding="utf-8",
    )
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "problems)" in err and "Traceback" not in err


def test_the_bench_asks_every_note_in_both_directions_through_the_engine(
    tmp_path: Path, bench_cache: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "out.json"
    args = ["--languages", "en,de,ja", "--per-language", "4", "--json", str(out_json)]
    assert main([*args, "--model-cache", str(model_cache_dir)]) == 0
    printed = capsys.readouterr().out
    for label in ("en->en", "en'->en", "en->de", "de->de", "en->ja", "ja->ja", "every"):
        assert f" {label} " in printed, label
    assert "top-1" in printed and "r@5" in printed and "cosine" in printed
    # MAMA's embedder takes roles itself (MiniLM's add no prefix).
    assert "roles: native" in printed and "refused: 0" in printed
    last = printed.strip().splitlines()[-1]
    assert last.startswith("overall top1=") and " recall@5=" in last and " worst=" in last

    result = json.loads(out_json.read_text(encoding="utf-8"))
    records = result["questions"]
    assert len(records) == 3 * 4 * 2
    assert {m: result["methods"][m]["overall"]["n"] for m in ("fused", "vector", "cosine")} == {
        "fused": 24.0,
        "vector": 24.0,
        "cosine": 24.0,
    }
    # Positive control: an English note is found first by its English question.
    control = next(r for r in records if r["id"] == "en-01" and r["direction"] == "en")
    assert control["fused"]["top5"][0] == "en-01"
    assert control["fused"]["metrics"]["top1"] == 1.0
    assert any(bench_cache.iterdir())

    # The bilingual protocol: English plus one language per store, the same questions.
    capsys.readouterr()
    bilingual = ["--stores", "bilingual", "--json", str(out_json)]
    assert main([*args[:4], *bilingual, "--model-cache", str(model_cache_dir)]) == 0
    assert "stores: bilingual" in capsys.readouterr().out
    result = json.loads(out_json.read_text(encoding="utf-8"))
    assert result["stores"] == "bilingual" and len(result["questions"]) == 3 * 4 * 2
    control = next(r for r in result["questions"] if r["id"] == "en-01")
    assert control["fused"]["top5"][0] == "en-01"


class Role(enum.Enum):
    """How a model with roles might name them (a stand-in for the embedder's own type)."""

    QUERY = "query"
    PASSAGE = "passage"


class RoleLess:
    """The real embedder behind an ``embed(texts)`` with no roles (as MAMA's was)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class RoleAware:
    """The real embedder behind an ``embed(texts, role=…)``, recording the roles it is given."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.roles: list[Role] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id + "+roles"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str], role: Role = Role.PASSAGE) -> np.ndarray:
        self.roles.append(role)
        return self.inner.embed([f"{role.value}: {t}" for t in texts])

    def embed_one(self, text: str, role: Role = Role.PASSAGE) -> np.ndarray:
        return self.embed([text], role)[0]


def test_roles_go_to_the_embedder_when_it_has_them_else_prefixes_when_asked(
    bench_cache: Path, embedder: Embedder
) -> None:
    text = "When is Tanaka-san's birthday?"
    roleless = RoleLess(embedder)
    plain = RoleEmbedder(roleless, prefixes=False)
    prefixed = RoleEmbedder(roleless, prefixes=True)
    aware = RoleAware(roleless)
    native = RoleEmbedder(aware, prefixes=True)
    try:
        assert (plain.mode, prefixed.mode, native.mode) == ("none", "prefix", "native")
        # Without roles a question and a note of the same text are one vector...
        assert np.array_equal(plain.embed_one(text, QUERY), plain.embed_one(text, PASSAGE))
        # ...with prefixes they differ, and each is the model's vector of the prefixed text.
        query = prefixed.embed_one(text, QUERY)
        assert not np.allclose(query, prefixed.embed_one(text, PASSAGE))
        assert np.allclose(query, embedder.embed([f"query: {text}"])[0], atol=1e-6)
        # An embedder with roles gets them as its own type, and no prefix from the bench.
        assert np.allclose(native.embed_one(text, QUERY), query, atol=1e-6)
        native.embed_one(text)  # the engine's call: stored text, a passage
        assert aware.roles == [Role.QUERY, Role.PASSAGE]
        assert prefixed.model_id.endswith("+role-prefixes") and native.model_id == aware.model_id
    finally:
        for wrapper in (plain, prefixed, native):
            wrapper.close()
