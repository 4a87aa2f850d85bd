"""``mama proposals``: what waits for the owner (new memories an agent proposed and
changes proposed to the owner's records), listed with who proposed it and why, and
decided id by id through review.approve / review.reject; the real console script
against a real encrypted store, the proposals made by a real engine as a coding agent."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from mama_core.embeddings import Embedder
from mama_core.errors import InvalidTransitionError, NotFoundError
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.session import ActorKind, TurnKind
from mama_core.store import DbKey, Store
from tests.app.runtime.support import MAMA, mama_env
from tests.app.test_cli_memory import Mama
from tests.conftest import TEST_KEY_HEX

CODING_AGENT = SessionFacts(
    actor_kind=ActorKind.MCP_CLIENT, actor_name="claude-code", turn=TurnKind.MCP
)


def test_proposals_are_listed_and_decided_one_by_one(
    tmp_path: Path, model_cache_dir: Path, embedder: Embedder
) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    rule = mama.json(
        "remember", "Never deploy on Fridays", "--kind", "constraint", "--applies-when", "deploying"
    )["judgment_id"]
    with (
        Store.open(mama.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder) as engine,
    ):
        agent = Grant.agent(["global"])
        memory = engine.dispatch(
            "memory.save",
            {
                "kind": "preference",
                "summary": "Prefer small pull requests",
                "applies_when": "reviewing code",
                "details": "three reviews this week stalled on large diffs",
            },
            CODING_AGENT,
            agent,
        )["judgment_id"]
        other = engine.dispatch(
            "memory.save",
            {"kind": "lesson", "summary": "Pin the CI image", "applies_when": "CI breaks"},
            CODING_AGENT,
            agent,
        )["judgment_id"]
        change = engine.dispatch(
            "memory.retire",
            {"id": rule, "reason": "we deploy every day now"},
            CODING_AGENT,
            agent,
        )
        assert change["proposed"] is True

    listed = mama.json("proposals")
    assert listed["truncated"] is False
    by_id = {p["id"]: p for p in listed["proposals"]}
    assert [p["id"] for p in listed["proposals"]] == [rule, other, memory]  # changes first
    assert by_id[rule]["proposal"] == "change"
    assert by_id[rule]["action"] == "memory.retire"
    assert by_id[rule]["change_id"] == change["change_id"]
    assert by_id[rule]["proposed_by"] == "claude-code in a coding session"
    assert by_id[rule]["why"] == "we deploy every day now"
    assert by_id[rule]["record_summary"] == "Never deploy on Fridays"
    assert by_id[memory]["proposal"] == "new_memory"
    assert by_id[memory]["kind"] == "preference"
    assert by_id[memory]["summary"] == "Prefer small pull requests"
    assert by_id[memory]["proposed_by"] == "inferred by claude-code in a coding session"
    assert by_id[memory]["why"] == "three reviews this week stalled on large diffs"
    assert by_id[other]["why"] == ""

    text = mama.run("proposals")
    assert text.returncode == 0, text.stderr
    assert f"#{rule} change to your constraint (Never deploy on Fridays): retire #{rule}" in (
        text.stdout
    )
    assert f"#{memory} new preference: Prefer small pull requests" in text.stdout
    assert "    why: three reviews this week stalled on large diffs" in text.stdout
    assert "3 waiting" in text.stderr

    # One bad id among good ones: named on its own line, the others still decided.
    decided = mama.run("proposals", "approve", str(memory), f"#{rule}", "999", "--reason", "ok")
    assert decided.returncode == NotFoundError.exit_code
    assert decided.stdout.splitlines() == [
        f"approved #{memory}: active",
        f"approved #{rule} (proposed change {change['change_id']}): stale",
    ]
    refusal = decided.stderr.strip().splitlines()
    assert len(refusal) == 1 and refusal[0].startswith("mama: not_found: 999: ")
    events = mama.json("history", str(memory))["events"]
    assert events[-1]["action"] == "review.approve"
    assert events[-1]["payload"]["reason"] == "ok"

    rejected = mama.run("proposals", "reject", str(other), str(memory), "--json")
    assert rejected.returncode == InvalidTransitionError.exit_code  # memory: already decided
    results = json.loads(rejected.stdout)["results"]
    assert [(r["id"], r["ok"]) for r in results] == [(other, True), (str(memory), False)]
    assert results[0]["receipt"]["status"] == "rejected"
    assert results[1]["error"]["code"] == "invalid_transition"
    reason = mama.json("history", str(other))["events"][-1]["payload"]["reason"]
    assert reason == "Rejected by the owner at the command line."

    empty = mama.run("proposals")
    assert empty.returncode == 0 and empty.stdout.strip() == "nothing waits for you"
    assert mama.json("proposals")["proposals"] == []
    assert mama.run("verify").returncode == 0


def test_a_malformed_id_is_refused_alone(tmp_path: Path, model_cache_dir: Path) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    fact = mama.json("remember", "Standups are at 9:30", "--kind", "fact")["judgment_id"]
    result = mama.run("proposals", "reject", "x7", str(fact), "--reason", "no")
    assert result.returncode == 32  # invalid_input: the first refusal's code
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("mama: invalid_input: x7: ")
    assert lines[1].startswith(f"mama: invalid_transition: {fact}: ")  # active, not proposed
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert mama.json("show", str(fact))["record"]["status"] == "active"


def test_deciding_beside_a_running_daemon(
    tmp_path: Path, model_cache_dir: Path, embedder: Embedder, clean_env: pytest.MonkeyPatch
) -> None:
    """The daemon holds the store and runs the agent; the terminal still lists and
    decides what waits (each CLI command is its own process on the same store)."""
    mama = Mama(tmp_path / "home", model_cache_dir)
    daemon = subprocess.Popen(
        [str(MAMA), "daemon"],
        env=mama_env(mama.home, model_cache_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert daemon.stdout is not None
        assert "ready (" in daemon.stdout.readline()
        with (
            Store.open(mama.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
            Engine(store, embedder) as engine,
        ):
            proposal = engine.dispatch(
                "memory.save",
                {"kind": "lesson", "summary": "Pin the CI image", "applies_when": "CI breaks"},
                CODING_AGENT,
                Grant.agent(["global"]),
            )["judgment_id"]
        assert [p["id"] for p in mama.json("proposals")["proposals"]] == [proposal]
        approved = mama.run("proposals", "approve", str(proposal))
        assert approved.returncode == 0, approved.stderr
        assert approved.stdout.strip() == f"approved #{proposal}: active"
        assert mama.json("proposals")["proposals"] == []
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=60)
        assert daemon.returncode == 0, err
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate()


def test_a_settings_change_is_listed_and_decided_as_s_id(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    """A change an agent proposed to the owner's settings in a tainted turn has no record:
    it is listed as s<N> beside the others and decided by that id."""
    from mama_core.embeddings import load_embedder

    mama = Mama(tmp_path / "home", model_cache_dir)
    mama.json("settings", "timezone", "Europe/Berlin")
    tainted = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="claude-code").with_taint()
    with (
        Store.open(mama.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, load_embedder(None, model_cache_dir)) as engine,
    ):
        change = engine.dispatch(
            "owner.set_timezone",
            {"timezone": "Asia/Tokyo", "reason": "the forwarded mail says so"},
            tainted,
            Grant.agent(["global"]),
        )["change_id"]
        brief = engine.dispatch("owner.set_brief", {"enabled": True}, tainted, Grant.agent([]))
    listed = mama.json("proposals")["proposals"]
    settings = {p["id"]: p for p in listed if p["proposal"] == "setting"}
    assert set(settings) == {change, brief["change_id"]}
    assert settings[change]["why"] == "the forwarded mail says so"
    assert "Asia/Tokyo" in settings[change]["summary"]
    shown = mama.run("proposals")
    assert f"s{change} change to your timezone setting" in shown.stdout

    approved = mama.run("proposals", "approve", f"s{change}")
    assert approved.returncode == 0, approved.stderr
    assert "Timezone: Asia/Tokyo" in mama.run("settings", "show").stdout
    # The record-id form of the same number is another thing: not a settings change.
    rejected = mama.run("proposals", "reject", f"s{brief['change_id']}", "--reason", "no")
    assert rejected.returncode == 0, rejected.stderr
    assert not [p for p in mama.json("proposals")["proposals"] if p["proposal"] == "setting"]
    again = mama.run("proposals", "approve", f"s{change}")
    assert again.returncode != 0 and f"s{change}" in again.stderr
