"""``mama work list | done | drop | due``: the real console script in a subprocess
against a real encrypted store, each with ``--json``; bad input is one line with its
machine code."""

from __future__ import annotations

from pathlib import Path

from mama_core.errors import InvalidInputError, InvalidTransitionError, NotFoundError
from tests.app.test_cli_memory import Mama


def test_a_commitment_is_listed_moved_done_and_dropped(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    assert mama.run("work", "list").stdout.strip() == "no open commitments"
    deck = mama.json("remember", "Send Dana the deck", "--kind", "commitment")["judgment_id"]
    memo = mama.json("remember", "Write the memo", "--kind", "commitment")["judgment_id"]

    moved = mama.json("work", "due", str(deck), "2026-12-05T17:00", "--tz", "Europe/Berlin")
    assert moved["replaces"] == deck and moved["state"] == "open"
    deck = moved["judgment_id"]
    listed = mama.json("work", "list")["commitments"]
    assert [(c["id"], c["due_at"], c["due_tz"]) for c in listed] == [
        (deck, "2026-12-05T16:00:00.000000Z", "Europe/Berlin"),
        (memo, None, None),
    ]
    text = mama.run("work", "list")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == [
        f"#{deck} [OVERDUE] due 2026-12-05 17:00 Europe/Berlin  owner -> -: Send Dana the deck"
        if listed[0]["overdue"]
        else f"#{deck} due 2026-12-05 17:00 Europe/Berlin  owner -> -: Send Dana the deck",
        f"#{memo} no due  owner -> -: Write the memo",
    ]

    done = mama.run("work", "done", str(deck), "--reason", "sent it")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"done #{deck} (now #")
    shown = mama.run("show", done.stdout.split("(now #")[1].split(")")[0])
    assert "  commitment: done, owner -> -, 2026-12-05T16:00:00.000000Z (Europe/Berlin)" in (
        shown.stdout
    )
    dropped = mama.json("work", "drop", str(memo), "--reason", "not needed")
    assert dropped["state"] == "dropped" and dropped["replaces"] == memo
    assert mama.json("work", "list")["commitments"] == []
    everything = mama.json("work", "list", "--all")["commitments"]
    assert sorted(c["state"] for c in everything) == ["done", "dropped"]
    assert mama.run("verify").returncode == 0

    again = mama.run("work", "done", str(deck))
    assert again.returncode == InvalidTransitionError.exit_code
    assert again.stderr.startswith("mama: invalid_transition: ")
    missing = mama.run("work", "drop", "999", "--reason", "x")
    assert missing.returncode == NotFoundError.exit_code
    assert missing.stderr.startswith("mama: not_found: ")


def test_bad_input_is_one_line_with_its_code(tmp_path: Path, model_cache_dir: Path) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    target = mama.json("remember", "Call the bank", "--kind", "commitment")["judgment_id"]
    for args in (
        ("work", "due", str(target), "2026-12-05T17:00"),  # whose 17:00?
        ("work", "due", str(target), "next friday"),
        ("work", "due", str(target), "2026-12-05T17:00", "--tz", "Mars/Olympus"),
        ("work", "done", "0"),
    ):
        result = mama.run(*args)
        assert result.returncode == InvalidInputError.exit_code, (args, result.stderr)
        assert result.stderr.startswith("mama: invalid_input: ")
        assert len(result.stderr.strip().splitlines()) == 1
    no_reason = mama.run("work", "drop", str(target))
    assert no_reason.returncode != 0 and "--reason" in no_reason.stderr
    # Positive controls: an offset, or 'none', is accepted.
    moved = mama.json("work", "due", str(target), "2026-12-05T17:00+01:00")
    assert moved["state"] == "open"
    cleared = mama.json("work", "due", str(moved["judgment_id"]), "none")
    assert mama.json("work", "list")["commitments"][0]["id"] == cleared["judgment_id"]
    assert mama.json("work", "list")["commitments"][0]["due_at"] is None


def test_work_add_records_a_commitment_with_its_terms(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    added = mama.run(
        "work", "add", "Send Dana the deck", "--owed-to", "Dana",
        "--due", "2026-12-05T17:00", "--tz", "Europe/Berlin",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("added #")
    assert added.stdout.rstrip().endswith(
        " due 2026-12-05 17:00 Europe/Berlin  owner -> Dana: Send Dana the deck"
    )
    owed_to_me = mama.json(
        "work", "add", "Review my draft", "--owed-by", "Sam", "--owed-to", "owner",
        "--due", "2026-12-04T09:00+01:00",
    )  # fmt: skip
    assert owed_to_me["status"] == "active"
    listed = mama.json("work", "list")["commitments"]
    assert [
        (c["summary"], c["owed_by"], c["owed_to"], c["due_at"], c["due_tz"]) for c in listed
    ] == [
        ("Review my draft", "Sam", "owner", "2026-12-04T08:00:00.000000Z", None),
        ("Send Dana the deck", "owner", "Dana", "2026-12-05T16:00:00.000000Z", "Europe/Berlin"),
    ]

    for args, field in (
        (("--due", "2026-12-05T17:00"), "--due"),  # whose 17:00?
        (("--due", "tomorrow"), "--due"),
        (("--due", "2026-12-05T17:00", "--tz", "Mars/Olympus"), "--tz"),
    ):
        result = mama.run("work", "add", "Call the bank", "--owed-to", "Bank", *args)
        assert result.returncode == InvalidInputError.exit_code, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"mama: invalid_input: {field} "), lines
    no_owed_to = mama.run("work", "add", "Call the bank", "--due", "none")
    assert no_owed_to.returncode != 0 and "--owed-to" in no_owed_to.stderr
    assert len(mama.json("work", "list")["commitments"]) == 2  # nothing half-made
