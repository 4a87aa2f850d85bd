"""A store whose vectors are of another model catches up by itself, in the background.

The old memories are written with model A; the store is then opened with model B
(the same GGUF file under another model id: what an update of the default model
looks like to the store). Real SQLCipher files, the real model, real subprocesses.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from mama_core.embeddings import Embedder, GgufEmbedder
from mama_core.memory import Engine, Grant, SessionFacts, verify_store
from mama_core.memory.catch_up import CatchUpProgress
from mama_core.recall import RecallQuery, count_missing
from mama_core.store import DbKey, Store
from tests.conftest import REPO_ROOT

MODEL_B = "test-model-b"
OLD = "The espresso machine in the kitchen is broken"
MEANING = "coffee maker not working"
"""Shares no word with ``OLD``: only the vector arm can find it."""
WAIT = 300.0


def _fill(store: Store, embedder: Embedder, n: int) -> int:
    """Write ``n`` filler memories and ``OLD`` with ``embedder``; returns OLD's id."""
    with Engine(store, embedder) as engine:
        payloads: list[Mapping[str, Any]] = [
            {"kind": "fact", "summary": f"Room {i} on floor {i % 7} seats {i + 3} people"}
            for i in range(n)
        ]
        engine.dispatch_batch("memory.save", payloads, SessionFacts.owner_cli(), Grant.owner())
        receipt = engine.dispatch(
            "memory.save",
            {"kind": "fact", "summary": OLD, "scopes": ["global"]},
            SessionFacts.owner_cli(),
            Grant.owner(),
        )
    return int(receipt["judgment_id"])


def _model_b(embedder: Embedder) -> GgufEmbedder:
    assert isinstance(embedder, GgufEmbedder)
    return GgufEmbedder(embedder.model_path, model_id=MODEL_B)


def _vector_ids(engine: Engine, text: str) -> list[int]:
    """What the vector arm alone finds (the lexical arms switched off)."""
    from mama_core.recall import RecallConfig

    config = RecallConfig(name="vector-only", bm25_weight=0.0, trigram_weight=0.0)
    hits = engine.recall().search(RecallQuery(text, scopes=["global"]), config=config)
    return [h.id for h in hits]


def _ids(engine: Engine, text: str) -> list[int]:
    return [h.id for h in engine.recall().search(RecallQuery(text, scopes=["global"]))]


def _no_duplicates_and_verified(store: Store, expected: int) -> None:
    rows, distinct = store.conn.execute(
        "SELECT count(*), count(DISTINCT judgment_id) FROM embeddings WHERE model_id = ?",
        (MODEL_B,),
    ).fetchone()
    assert rows == distinct == expected
    report = verify_store(store.conn, store.secret)
    assert report.ok, report.problems


@pytest.fixture
def model_b(embedder: Embedder) -> Iterator[GgufEmbedder]:
    other = _model_b(embedder)
    yield other
    other.close()


def test_engine_catches_up_and_the_vector_arm_finds_old_memories(
    store: Store, embedder: Embedder, model_b: GgufEmbedder
) -> None:
    old_id = _fill(store, embedder, 70)
    assert count_missing(store.conn, MODEL_B) == 71
    seen: list[CatchUpProgress] = []
    held, release = threading.Event(), threading.Event()

    def listener(progress: CatchUpProgress) -> None:
        seen.append(progress)
        if progress.done > 0 and not release.is_set():
            held.set()
            assert release.wait(WAIT)  # the catch-up stands still after its first batch

    with Engine(store, model_b) as engine:
        # Before: model A's vector finds it, model B's arm has nothing; words still find it.
        assert old_id not in _vector_ids(engine, MEANING)
        assert _ids(engine, "espresso machine kitchen")[0] == old_id
        catch_up = engine.catch_up_vectors()
        catch_up.subscribe(listener)
        assert held.wait(WAIT)
        # Mid-way: saves and searches go on; recall falls back to words for the rest.
        new = engine.dispatch(
            "memory.save",
            {"kind": "fact", "summary": "The printer on floor 2 needs toner"},
            SessionFacts.owner_cli(),
            Grant.owner(),
        )
        assert _ids(engine, "printer toner")[0] == new["judgment_id"]
        assert _ids(engine, "espresso machine kitchen")[0] == old_id
        assert 0 < count_missing(store.conn, MODEL_B) < 71
        release.set()
        assert catch_up.wait_idle(WAIT)
        assert count_missing(store.conn, MODEL_B) == 0
        assert _vector_ids(engine, MEANING)[0] == old_id
    assert seen[0].done == 0 and seen[0].total == 71
    assert seen[-1].done == seen[-1].total == 71 and seen[-1].finished
    assert seen[0].describe() == "Updating memory search for the new model: 0 of 71"
    _no_duplicates_and_verified(store, 72)


def test_a_memory_saved_with_an_older_model_meanwhile_is_caught_up(
    store: Store, embedder: Embedder, model_b: GgufEmbedder, db_key: DbKey
) -> None:
    """Another process still on model A saves while this one runs model B."""
    _fill(store, embedder, 3)
    with Engine(store, model_b) as engine:
        catch_up = engine.catch_up_vectors()
        assert catch_up.wait_idle(WAIT)
        assert count_missing(store.conn, MODEL_B) == 0
        other = Store.open(store.path, db_key)
        try:
            with Engine(other, embedder) as old_engine:
                receipt = old_engine.dispatch(
                    "memory.save",
                    # The owner insists: the same words again are a second record
                    # (without it the save is answered "already remembered").
                    {"kind": "fact", "summary": OLD, "even_if_duplicate": True},
                    SessionFacts.owner_cli(),
                    Grant.owner(),
                )
        finally:
            other.close()
        done = threading.Event()
        catch_up.subscribe(lambda p: done.set() if p.finished and p.total == 1 else None)
        assert done.wait(WAIT)  # the change-set from the other process woke it
        assert count_missing(store.conn, MODEL_B) == 0
        assert receipt["judgment_id"] in _vector_ids(engine, MEANING)[:2]


def _child(db: Path, model_path: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.mama_core.recall.catch_up_child",
            str(db),
            str(model_path),
            MODEL_B,
            *extra,
        ],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _lines_until(proc: subprocess.Popen[str], prefix: str) -> list[str]:
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"the child ended without {prefix!r}: {lines}")


def test_a_killed_catch_up_resumes(store: Store, embedder: Embedder) -> None:
    old_id = _fill(store, embedder, 99)
    assert isinstance(embedder, GgufEmbedder)
    with _child(store.path, embedder.model_path, "hold") as first:
        try:
            lines = _lines_until(first, "progress 32 ")  # one batch committed, then held
        finally:
            first.kill()  # SIGKILL: no cleanup of any kind
            first.wait(WAIT)
    assert first.returncode == -9
    assert lines[-1] == "progress 32 100"
    assert count_missing(store.conn, MODEL_B) == 100 - 32
    with _child(store.path, embedder.model_path) as second:
        out, _ = second.communicate(timeout=WAIT)
    assert second.returncode == 0, out
    assert "progress 0 68" in out.splitlines()  # resumed: only the rest was left
    assert out.splitlines()[-1] == "done 100"
    assert count_missing(store.conn, MODEL_B) == 0
    _no_duplicates_and_verified(store, 100)
    with Engine(store, _model_b(embedder)) as engine:
        assert _vector_ids(engine, MEANING)[0] == old_id


def test_two_processes_catching_up_at_once_both_finish(store: Store, embedder: Embedder) -> None:
    """Interleaved for sure, not by luck: the first process is held mid-pass after one
    batch while the second does the rest; released, the first finds its remaining rows
    already embedded, writes nothing twice and still ends with every vector."""
    _fill(store, embedder, 159)
    assert isinstance(embedder, GgufEmbedder)
    with _child(store.path, embedder.model_path, "hold") as first:
        assert _lines_until(first, "progress 32 ")[-1] == "progress 32 160"
        with _child(store.path, embedder.model_path) as second:
            out_second, _ = second.communicate(timeout=WAIT)
        assert second.returncode == 0, out_second
        assert "progress 0 128" in out_second.splitlines()  # only what the first had not done
        # Release the first: its stdin closes, so its hold reads an empty line from now on.
        out_first, _ = first.communicate(input="", timeout=WAIT)
    assert first.returncode == 0, out_first
    for out in (out_first, out_second):
        # each process's own cache holds every vector, those the other one wrote too
        assert out.splitlines()[-1] == "done 160", out
    assert count_missing(store.conn, MODEL_B) == 0
    _no_duplicates_and_verified(store, 160)
