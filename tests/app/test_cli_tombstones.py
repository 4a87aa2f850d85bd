"""``mama tombstones list`` and ``mama tombstones lift``: the real console script in a
subprocess against a real encrypted store."""

from __future__ import annotations

from pathlib import Path

from mama_core.errors import InvalidTransitionError, NotFoundError, TombstonedError
from tests.app.test_cli_memory import Mama

RULE = ["--kind", "constraint", "--applies-when", "planning a release"]


def test_list_shows_the_tombstone_and_lift_lets_the_text_back(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    assert mama.run("tombstones", "list").stdout.strip() == "no tombstones"
    saved = mama.json("remember", "Deploy on Fridays", *RULE, "--scope", "project:web")
    retired = mama.json(
        "retire", str(saved["judgment_id"]), "--reason", "two incidents", "--forbid-resave"
    )
    tombstone = retired["tombstone_id"]

    refused = mama.run("remember", "We deploy on Fridays", *RULE, "--scope", "project:web")
    assert refused.returncode == TombstonedError.exit_code
    assert "the owner retired" in refused.stderr
    assert f"mama tombstones lift {tombstone}" in refused.stderr
    # Its negation is another rule, and is saved.
    assert mama.json("remember", "Never deploy on Fridays", *RULE, "--scope", "project:web")

    listed = mama.run("tombstones", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"tombstone {tombstone} [active] from #{saved['judgment_id']}" in listed.stdout
    assert '"Deploy on Fridays"' in listed.stdout and "scopes: project:web" in listed.stdout
    assert "made by the owner (cli)" in listed.stdout and "reason: two incidents" in listed.stdout

    lifted = mama.json("tombstones", "lift", str(tombstone), "--reason", "incidents fixed")
    assert lifted["tombstone_id"] == tombstone and lifted["event_id"] >= 1
    again = mama.json("remember", "We deploy on Fridays", *RULE, "--scope", "project:web")
    assert again["status"] == "active"

    entries = mama.json("tombstones", "list")["tombstones"]
    assert [(e["id"], e["lifted"], e["lift_reason"]) for e in entries] == [
        (tombstone, True, "incidents fixed")
    ]
    assert mama.json("tombstones", "list", "--active")["tombstones"] == []

    twice = mama.run("tombstones", "lift", str(tombstone))
    assert twice.returncode == InvalidTransitionError.exit_code
    assert twice.stderr.startswith("mama: invalid_transition: ")
    missing = mama.run("tombstones", "lift", "999")
    assert missing.returncode == NotFoundError.exit_code
    assert missing.stderr.startswith("mama: not_found: ")
