"""``python -m bench.retrieval`` runs end to end on any file in the sets' format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.compare import compare
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


def test_chosen_methods_a_sweep_and_the_cached_subset(
    tmp_path: Path, bench_cache: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_locomo(tmp_path / "l.json")
    out_json = tmp_path / "out.json"
    base = ["locomo", str(tmp_path / "l.json"), "--model-cache", str(model_cache_dir)]
    chosen = ["--methods", "when", "--method", "few=prf:prf_terms=2,prf_names_only=true"]
    # A fresh cache holds nothing: the cached-only subset is empty and says so.
    assert main([*base, *chosen, "--cached-only"]) == 0
    assert "subset: 0 of 1 stores" in capsys.readouterr().out
    # Positive control: a plain run fills the cache, and the subset is then the whole file.
    assert main([*base, *chosen]) == 0
    assert main([*base, *chosen, "--cached-only", "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert "subset: 1 of 1 stores" in printed
    assert "when: " in printed and "when-v1=1/depth=30" in printed
    assert "few: " in printed and "prf-v1=0.5/docs=3/terms=2/names" in printed
    assert "episode-v1=" not in printed  # only the chosen methods ran

    lines = compare(json.loads(out_json.read_text()), "recall@10", ("1", "2", "3", "4"))
    assert lines[0].startswith("locomo: recall@10")
    assert any(" when " in line and "[" in line for line in lines[2:])
    assert any(" few " in line and "[" in line for line in lines[2:])
