"""``mama about NAME`` and ``mama people [join | split]``: the real console script in a
subprocess against a real encrypted store; an unknown name is one line with its code
and the nearest names."""

from __future__ import annotations

from pathlib import Path

from mama_core.errors import InvalidTransitionError, UnknownPersonError
from tests.app.test_cli_memory import Mama
from tests.app.test_cli_store_errors import assert_one_line_error


def test_about_people_join_and_split(tmp_path: Path, model_cache_dir: Path) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    assert mama.run("people").stdout.strip() == "no people known yet"
    mama.json("remember", "Anna prefers written updates over calls", "--kind", "fact")
    mama.json("remember", "Annabel runs the Lisbon office", "--kind", "fact")
    deck = mama.json(
        "work", "add", "Send the deck", "--owed-to", "Anna K.", "--due", "2036-12-05T17:00+01:00"
    )["judgment_id"]
    review = mama.json(
        "work",
        "add",
        "Review the contract",
        "--owed-by",
        "anna@corp.example",
        "--owed-to",
        "owner",
        "--due",
        "none",
    )["judgment_id"]

    listed = mama.run("people")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "Anna K.: 0 memories, 1 commitments, 0 messages, 0 meetings",
        "anna@corp.example: 0 memories, 1 commitments, 0 messages, 0 meetings",
    ]
    joined = mama.run("people", "join", "Anna K.", "Anna", "anna@corp.example")
    assert joined.returncode == 0, joined.stderr
    assert joined.stdout.strip() == "joined as Anna K.: Anna, anna@corp.example"

    page = mama.run("about", "anna")
    assert page.returncode == 0, page.stderr
    lines = page.stdout.splitlines()
    assert lines[0] == "Anna K. (also: Anna, anna@corp.example)"
    assert lines[1:5] == [
        "",
        "Memories naming them (1):",
        "  #1 fact: Anna prefers written updates over calls",
        "",
    ]
    assert "Annabel" not in page.stdout
    assert f"  #{review} no due  anna@corp.example -> owner: Review the contract" in lines
    assert f"  #{deck} due 2036-12-05 16:00 UTC  owner -> Anna K.: Send the deck" in lines
    assert lines[-5:] == ["Upcoming meetings (0):", "  none", "", "Recent meetings (0):", "  none"]
    data = mama.json("about", "ANNA@corp.example")
    assert data["person"]["name"] == "Anna K."
    assert [c["id"] for c in data["commitments"]["owed_by"]] == [review]
    assert [c["id"] for c in data["commitments"]["owed_to"]] == [deck]

    unknown = mama.run("about", "Ana")
    assert unknown.returncode == UnknownPersonError.exit_code
    assert_one_line_error(unknown, "unknown_person")
    assert "Did you mean 'Anna K.'" in unknown.stderr

    split = mama.run("people", "split", "anna@corp.example")
    assert split.returncode == 0, split.stderr
    after = mama.json("about", "Anna")
    assert after["person"]["aliases"] == ["Anna", "Anna K."]
    assert after["commitments"]["owed_by"] == []  # the address's commitment left with it
    again = mama.run("people", "split", "Annabel")
    assert again.returncode == InvalidTransitionError.exit_code
    assert_one_line_error(again, "invalid_transition")
    assert mama.run("verify").returncode == 0
