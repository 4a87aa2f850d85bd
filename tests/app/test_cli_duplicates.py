"""``mama remember`` answers a restatement with the memory it restates (``--anyway``
keeps it), and ``mama search`` prints records that say the same once, with "also said
as": the real console script in a subprocess against a real encrypted store."""

from __future__ import annotations

from pathlib import Path

from app.cli.memory import search_lines
from tests.app.test_cli_memory import Mama


def test_remember_twice_then_anyway_and_search_groups(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    first = mama.json("remember", "We ship on Thursdays", "--kind", "fact")
    assert first["status"] == "active"

    again = mama.run("remember", "We ship on Thursday", "--kind", "fact")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"already remembered as #{first['judgment_id']}")
    assert "--anyway" in again.stdout
    # Positive control: another day is another memory.
    tuesdays = mama.json("remember", "We ship on Tuesdays", "--kind", "fact")
    assert tuesdays["judgment_id"] != first["judgment_id"]
    assert "duplicate_of" not in tuesdays

    kept = mama.json("remember", "We ship on Thursday", "--kind", "fact", "--anyway")
    assert kept["code"] == "saved_anyway"
    assert kept["duplicate_of"] == first["judgment_id"]
    assert kept["judgment_id"] not in (first["judgment_id"], tuesdays["judgment_id"])

    found = mama.run("search", "ship Thursdays")
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    # The insisted copy is its own result (the owner said so); nothing is grouped here.
    assert any(line.startswith(f"#{kept['judgment_id']} [fact]") for line in lines)
    assert not any("also said as" in line for line in lines)


def test_search_prints_also_said_as_under_its_result() -> None:
    result = {
        "results": [
            {
                "id": 3,
                "kind": "fact",
                "summary": "We ship on Thursdays",
                "scopes": ["global"],
                "also_said_as": [{"id": 5, "summary": "We ship on Thursday"}],
            },
            {"id": 4, "kind": "fact", "summary": "We ship on Tuesdays", "scopes": ["global"]},
        ]
    }
    assert search_lines(result) == [
        "#3 [fact] We ship on Thursdays  (global)",
        "    also said as #5: We ship on Thursday",
        "#4 [fact] We ship on Tuesdays  (global)",
    ]
