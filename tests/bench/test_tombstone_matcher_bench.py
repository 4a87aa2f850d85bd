"""``python -m bench.tombstone_matcher`` runs end to end with the real model and scores
the old rule and the current matcher on the labelled pairs it is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.tombstone_matcher import PAIRS, load_pairs, main


def test_the_bench_scores_before_and_after(
    tmp_path: Path, model_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.json"
    pairs.write_text(
        json.dumps(
            {
                "groups": [
                    {
                        "retired": "Deploy on Fridays",
                        "kind": "constraint",
                        "applies_when": "planning a release",
                        "cases": [
                            {
                                "text": "We deploy on Fridays",
                                "label": "caught",
                                "kind": "near_exact",
                                "required": True,
                            },
                            {
                                "text": "Don't deploy on Fridays",
                                "label": "passes",
                                "kind": "negation",
                                "required": True,
                            },
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    args = ["--pairs", str(pairs), "--model-cache", str(model_cache_dir), "--json", str(out)]
    assert main(args) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    # The old rule refuses the negation too; the matcher lets it through.
    assert last == "before precision=0.500 recall=1.000; after precision=1.000 recall=1.000"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["results"]["before"]["required_wrong"] == 1
    assert data["results"]["after"]["required_wrong"] == 0
    assert data["wrong"]["before"][0]["text"] == "Don't deploy on Fridays"


def test_the_labelled_set_is_well_formed() -> None:
    pairs = load_pairs(PAIRS)
    assert 40 <= len(pairs) <= 250
    assert {p.label for p in pairs} == {"caught", "passes"}
    assert any(p.held_out for p in pairs) and any(not p.held_out for p in pairs)
    required = {p.category for p in pairs if p.required}
    assert required == {"exact", "near_exact", "negation"}
    # Every case of a required kind is required.
    assert all(p.required for p in pairs if p.category in required)
