"""Bad input at the command line, as a person meets it: one line with a code,
never ``internal_error``; stored text shown escaped; every command that says
``--json`` takes it. Each refusal sits beside the same command going through."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from mama_core.errors import InvalidInputError, NotADatabaseError, NotFoundError
from mama_core.ids import MAX_ID
from tests.app.runtime.support import MAMA, mama_env
from tests.app.test_cli_memory import Mama
from tests.app.test_cli_store_errors import assert_one_line_error, run_mama


@pytest.fixture
def mama(tmp_path: Path, model_cache_dir: Path) -> Mama:
    return Mama(tmp_path / "home", model_cache_dir)


@pytest.mark.parametrize("big", [str(2**53), str(2**63), "9223372036854775808", str(10**40)])
def test_huge_ids_are_invalid_input(mama: Mama, big: str) -> None:
    for args in (
        ["show", big],
        ["history", big],
        ["retire", big, "--reason", "old"],
        ["retire", "1", "--reason", "old", "--status", "superseded", "--by", big],
        ["approve", big],
        ["reject", big, "--reason", "no"],
        ["purge", big, "--yes"],
        ["remember", "x", "--kind", "fact", "--replaces", big],
    ):
        result = mama.run(*args)
        assert result.returncode == InvalidInputError.exit_code, (args, result.stderr)
        assert_one_line_error(result, "invalid_input")


def test_an_id_in_range_reaches_the_store(mama: Mama) -> None:
    """Control: the largest id is taken and is simply not found; a real one is shown."""
    saved = mama.json("remember", "Plums are picked in August", "--kind", "fact")
    result = mama.run("show", str(MAX_ID))
    assert result.returncode == NotFoundError.exit_code
    assert_one_line_error(result, "not_found")
    shown = mama.json("show", str(saved["judgment_id"]))
    assert shown["record"]["summary"] == "Plums are picked in August"


HOSTILE = (
    "Deploy \x1b[31mred\x1b[0m \x1b]0;pwned\x07 \x1b]8;;http://x.example\x1b\\link\x1b]8;;\x1b\\ "
    "\x9b2J \x90dcs\x9c \u202eevil\u202c \x08\x7f done"
)


def test_stored_escape_sequences_are_shown_escaped(mama: Mama) -> None:
    saved = mama.json(
        "remember",
        HOSTILE,
        "--kind",
        "fact",
        "--topic",
        "t\x1b[2Jopic",
        "--details",
        "\x1b]52;c;Zm9v\x07",
    )
    jid = str(saved["judgment_id"])
    outputs = [
        mama.run("show", jid).stdout,
        mama.run("history", jid).stdout,
        mama.run("search", "Deploy red done").stdout,
    ]
    for out in outputs:
        assert "Deploy" in out and "done" in out  # control: the text itself is shown
        for raw in ("\x1b", "\x07", "\x9b", "\x90", "\x9c", "\u202e", "\x08", "\x7f"):
            assert raw not in out, (raw, out)
        assert "\\x1b[31mred" in out
        assert "\\u202eevil" in out
    shown = mama.run("show", jid).stdout
    assert "t\\x1b[2Jopic" in shown and "\\x1b]52;c;Zm9v\\x07" in shown
    # --json stays exact: the same characters come back when the JSON is read.
    record = mama.json("show", jid)["record"]
    assert record["summary"] == HOSTILE
    assert record["topic"] == "t\x1b[2Jopic"
    raw_json = mama.run("show", jid, "--json").stdout
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in raw_json


def test_export_into_a_missing_folder_says_so(mama: Mama, tmp_path: Path) -> None:
    mama.json("remember", "Quinces need frost", "--kind", "fact")
    target = tmp_path / "no-such-folder" / "out.jsonl"
    result = mama.run("export", "--out", str(target))
    assert result.returncode == 6
    assert_one_line_error(result, "folder_missing")
    assert str(target.parent) in result.stderr
    assert not target.parent.exists()
    # Control: into a folder that exists, the same export writes its lines.
    target.parent.mkdir()
    done = mama.json("export", "--out", str(target))
    written = target.read_text(encoding="utf-8").splitlines()
    assert done == {"exported": len(written), "out": str(target)}
    assert any("Quinces need frost" in line for line in written)


def test_a_zero_byte_store_is_refused_not_reinitialised(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    """A store that held data and was truncated to 0 bytes (its chain anchor still beside
    it) is refused by every command; a 0-byte file with no such trace is an older
    MAMA's unfinished first open, made anew (tests/mama_core/store/test_empty_store_file.py)."""
    home = tmp_path / "home"
    made = run_mama(home, "remember", "Quinces need frost", "--kind", "fact", cache=model_cache_dir)
    assert made.returncode == 0, made.stderr
    (home / "mama.db").write_bytes(b"")
    for leftover in home.glob("mama.db-*"):  # the WAL and shared memory: truncated too
        leftover.unlink()
    for args in (["search", "anything"], ["remember", "x", "--kind", "fact"], ["doctor"]):
        result = run_mama(home, *args, cache=model_cache_dir)
        assert result.returncode == NotADatabaseError.exit_code, result.stderr
        assert_one_line_error(result, "not_a_database")
        assert "empty" in result.stderr
        assert (home / "mama.db").stat().st_size == 0
    # Control: with the empty file moved away, a new store is made.
    (home / "mama.db").unlink()
    made = run_mama(home, "remember", "Medlars ripen late", "--kind", "fact", cache=model_cache_dir)
    assert made.returncode == 0, made.stderr
    assert (home / "mama.db").stat().st_size > 0


def test_every_documented_command_takes_json(mama: Mama) -> None:
    saved = mama.json("remember", "Figs like walls", "--kind", "fact")
    assert saved["status"] == "active"
    doctor = mama.json("doctor")
    assert doctor["ok"] is True and doctor["store"]["schema"] == doctor["store"]["latest_schema"]
    assert doctor["model"]["dimension"] == 384
    assert doctor["agent"]["runtime_running"] is False
    assert doctor["telegram"]["paired"] is False
    reindexed = mama.json("reindex")
    assert reindexed["remaining"] == 0 and reindexed["model_id"] == doctor["model"]["id"]
    code = mama.json("telegram", "pair-code")
    assert code["command"] == f"/pair {code['code']}" and code["expires_in_s"] > 0
    assert mama.json("agent", "pause") == {"paused": True, "runtime_running": False}
    assert mama.json("agent", "resume") == {"paused": False, "runtime_running": False}
    lines = mama.run("export", "--json")
    assert lines.returncode == 0
    rows = [json.loads(line) for line in lines.stdout.splitlines()]
    assert any(r["table"] == "judgments" and r["row"]["summary"] == "Figs like walls" for r in rows)


def test_daemon_json_ready_line(
    tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch
) -> None:
    env = mama_env(tmp_path / "home", model_cache_dir)
    proc = subprocess.Popen(
        [str(MAMA), "daemon", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready == {
            "agent": "command-mode",
            "paused": False,
            "ready": True,
            "telegram": "off (no bot token)",
        }
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
