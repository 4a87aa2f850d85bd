"""``mama timeline``: a memory's versions and events, and what held (or changed) at a
time or over a span; the real console script against a real encrypted store."""

from __future__ import annotations

from pathlib import Path

from mama_core import clock
from mama_core.errors import InvalidInputError
from tests.app.test_cli_memory import Mama


def test_a_records_versions_and_events(tmp_path: Path, model_cache_dir: Path) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    first = mama.json("remember", "Team meets on Mondays", "--kind", "decision")
    second = mama.json(
        "remember",
        "Team meets on Tuesdays",
        "--kind",
        "decision",
        "--replaces",
        str(first["judgment_id"]),
    )
    a, b = first["judgment_id"], second["judgment_id"]
    retired = mama.json("retire", str(b), "--reason", "team disbanded")

    # Asked by the old version or the new one, the same chain, oldest first.
    by_old = mama.json("timeline", str(a))
    assert [v["id"] for v in by_old["versions"]] == [a, b]
    assert [v["status"] for v in by_old["versions"]] == ["superseded", "stale"]
    assert [e["action"] for e in by_old["events"]] == [
        "memory.save",
        "memory.save",
        "memory.retire",
    ]
    assert by_old["events"][-1]["payload"]["reason"] == "team disbanded"
    by_new = mama.json("timeline", str(b))
    assert by_new["versions"] == by_old["versions"]

    text = mama.run("timeline", str(b), "--tz", "UTC")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"#{b} [decision] stale: Team meets on Tuesdays"
    assert lines[1] == "versions, oldest first (times in UTC):"
    assert lines[2].startswith(f"  #{a} superseded by #{b}  valid ")
    assert lines[2].endswith(": Team meets on Mondays")
    assert lines[-1].endswith(
        f"event {retired['event_id']} memory.retire #{b} by you: team disbanded"
    )

    # What held between the two saves: only the first; over the whole span: both.
    between = mama.json("timeline", "--valid-at", clock.after(first["at"]))
    assert [r["id"] for r in between["records"]] == [a]
    span = mama.json("timeline", "--from", first["at"], "--to", clock.after(retired["at"]))
    assert sorted(r["id"] for r in span["records"]) == [a, b]
    assert len(span["events"]) == 3
    first_only = mama.json("timeline", "--from", first["at"], "--to", second["at"])
    assert [e["id"] for e in first_only["events"]] == [first["event_id"]]
    since = mama.run("timeline", "--from", "1 hour ago", "--tz", "UTC")
    assert since.returncode == 0, since.stderr
    assert since.stdout.startswith("held or changed from ")
    assert "Team meets on Mondays" in since.stdout and "Team meets on Tuesdays" in since.stdout
    # Long before anything was saved, nothing held (beside the positive controls above).
    before = mama.run("timeline", "--valid-at", "2000-01-01", "--tz", "Europe/Berlin")
    assert before.returncode == 0, before.stderr
    assert before.stdout.strip() == "held at 2000-01-01 00:00 (Europe/Berlin): nothing"
    # What MAMA believed right after the first save: the first, active then.
    then = mama.json("timeline", "--as-recorded-at", first["at"])
    assert [(r["id"], r["status_then"]) for r in then["records"]] == [(a, "active")]


def test_scopes_and_bad_when(tmp_path: Path, model_cache_dir: Path) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    web = mama.json("remember", "Deploy from main", "--kind", "decision", "--scope", "project:web")[
        "judgment_id"
    ]
    mama.json("remember", "Invoices on the 1st", "--kind", "fact")
    scoped = mama.json("timeline", "--valid-at", "now", "--scope", "project:web")
    assert [r["id"] for r in scoped["records"]] == [web]
    for args in (
        ("timeline", "--valid-at", "next friday"),
        ("timeline", "--from", "yesterday", "--to", "2000-01-01T00:00Z"),  # ends before it starts
        ("timeline", "--to", "now"),
        ("timeline",),
        ("timeline", str(web), "--valid-at", "now"),
        ("timeline", "--valid-at", "now", "--tz", "Mars/Olympus"),
    ):
        result = mama.run(*args)
        assert result.returncode == InvalidInputError.exit_code, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mama: invalid_input: "), args
