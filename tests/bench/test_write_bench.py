"""``python -m bench.write`` runs end to end on a tiny store and ends with the figures
other checks parse, ``floor_ratio`` among them (no timing is asserted)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.write import main


def test_the_bench_ends_with_the_floor_ratio(
    tmp_path: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "write.json"
    args = ["--sizes", "20", "--appends", "3", "--batch", "10", "--with-model"]
    args += ["--corpus", str(tmp_path), "--model-cache", str(model_cache_dir)]
    assert main([*args, "--json", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "texts: generated work notes" in lines[1]  # the folder given holds no public sets
    last = lines[-1]
    ratio = re.search(r"(?:^| )floor_ratio=(\d+\.\d+)$", last)
    assert ratio is not None, last
    assert re.search(r"append_p50_ms@0k=\d+\.\d+ .*import_per_s=\d+ floor_p50_ms=\d+\.\d+ ", last)
    row = json.loads(out.read_text(encoding="utf-8"))["results"][0]
    assert row["stored"] == 20
    assert row["floor_ratio"] == pytest.approx(float(ratio.group(1)), abs=0.01)
    assert row["floor_ms"]["p50"] > 0 and row["secret_scan_ms"]["p50"] > 0
    # With the model, the embedding is inside the append: both were measured.
    assert row["append_with_model_ms"]["p50"] > 0 and row["embed_ms"]["p50"] > 0
