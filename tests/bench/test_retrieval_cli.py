"""``python -m bench.retrieval`` runs end to end on any file in the sets' format."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.retrieval import main
from tests.bench.test_metrics import write_locomo, write_longmemeval


@pytest.fixture
def bench_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bench-cache"
    monkeypatch.setenv("MAMA_BENCH_CACHE", str(folder))
    return folder


def test_locomo_end_to_end(
    tmp_path: Path, bench_cache: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_locomo(tmp_path / "l.json")
    out_json = tmp_path / "out.json"
    args = ["locomo", str(tmp_path / "l.json"), "--json", str(out_json)]
    assert main([*args, "--model-cache", str(model_cache_dir)]) == 0
    printed = capsys.readouterr().out
    last = printed.strip().splitlines()[-1]
    assert last.startswith("overall recall@5=") and " recall@10=" in last and " mrr=" in last
    assert "rrf-v1" in printed and "plain-bm25" in printed and "vector" in printed
    assert out_json.is_file() and any(bench_cache.iterdir())


def test_longmemeval_end_to_end(
    tmp_path: Path, bench_cache: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_longmemeval(tmp_path / "m.json")
    args = ["longmemeval", str(tmp_path / "m.json"), "--model-cache", str(model_cache_dir)]
    assert main(args) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    # One question, its evidence session found first: every metric is perfect.
    assert last == "overall recall@5=1.000 recall@10=1.000 mrr=1.000"
