"""``python -m bench.duplicates`` runs end to end with a real model: it chooses a
threshold on the dev split and reports the held-out split's precision and recall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.duplicates import PAIRS, load_pairs, main


def _pair(a: str, b: str, label: str, split: str) -> dict[str, str]:
    return {"a": a, "b": b, "label": label, "language": "en", "category": "t", "split": split}


def test_the_bench_scores_the_held_out_split(
    tmp_path: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.json"
    pairs.write_text(
        json.dumps(
            {
                "pairs": [
                    _pair("We ship on Thursdays", "We ship on Thursdays.", "same", "dev"),
                    _pair("We ship on Thursdays", "We ship on Tuesdays", "different", "dev"),
                    _pair("Deploy from main", "deploy from main!", "same", "held_out"),
                    _pair("Deploy from main", "Never deploy from main", "different", "held_out"),
                ]
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    args = ["--pairs", str(pairs), "--model-cache", str(model_cache_dir), "--json", str(out)]
    assert main([*args, "--builtin", "all-MiniLM-L6-v2"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("all-MiniLM-L6-v2 held_out precision=1.000 recall=1.000")
    held = json.loads(out.read_text())["all-MiniLM-L6-v2"]["results"]["held_out@configured"]
    assert (held["tp"], held["fp"], held["fn"], held["tn"]) == (1, 0, 0, 1)


def test_the_shipped_set_is_large_multilingual_and_split() -> None:
    pairs = load_pairs(PAIRS)
    assert len(pairs) >= 150
    assert len({p.language for p in pairs}) >= 6
    for split in ("dev", "held_out"):
        members = [p for p in pairs if p.split == split]
        assert sum(p.same for p in members) >= 40
        assert sum(not p.same for p in members) >= 40
    texts = {(p.a, p.b) for p in pairs if not p.same}
    assert ("We ship on Thursdays", "We ship on Tuesdays") in texts
    assert ("Deploy from main", "Deploy from the release branch") in texts
