"""The Claude Code hooks: each one's output for sample stdin, and silence on bad input.

The ``mama hook`` command runs as a real subprocess, the way Claude Code runs it;
the budget and state logic is also driven in-process through ``run_hook``.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.local.paths import Paths
from app.mcp.hook_state import SeenFiles, forget_old_sessions
from app.mcp.hooks import PRE_COMPACT_TEXT, HookSettings, run_hook
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import DbKey, Store
from tests.app.mcp.conftest import VENV_BIN, git_project, owner_dispatch

CLAUDE = SessionFacts(
    actor_kind=ActorKind.MCP_CLIENT,
    actor_name="claude-code",
    actor_version="2.1.332",
    turn=TurnKind.MCP,
)
GENEROUS_BUDGET_MS = "30000"  # the budget logic is tested on its own, below


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = git_project(tmp_path / "work", "orchard")
    (folder / "parser.py").write_text("def parse(text): ...\n")
    (folder / "notes.md").write_text("nothing decided here\n")
    return folder


@pytest.fixture
def seeded(dev_db: Path, db_key: DbKey, embedder: GgufEmbedder, project: Path) -> dict[str, int]:
    """A development store holding orchard's and beta's checkpoints, guidance and
    decisions (closed again, as when no MCP server is running)."""
    ids: dict[str, int] = {}
    with Store.open(dev_db, db_key) as store, Engine(store, embedder) as engine:
        orchard = Grant.agent({"project:orchard"})
        beta = Grant.agent({"project:beta"})
        engine.dispatch("checkpoint.save", {"summary": "Beta checkpoint."}, CLAUDE, beta)
        engine.dispatch(
            "checkpoint.save",
            {"summary": "Parser rewrite half done.", "state": {"next": ["error messages"]}},
            CLAUDE,
            orchard,
        )
        ids["constraint"] = owner_dispatch(
            engine,
            "memory.save",
            {
                "kind": "constraint",
                "summary": "Never commit generated parser tables.",
                "applies_when": "committing",
                "scopes": ["project:orchard"],
            },
        )["judgment_id"]
        owner_dispatch(
            engine,
            "memory.save",
            {
                "kind": "preference",
                "summary": "Indent beta code with tabs.",
                "applies_when": "writing beta code",
                "scopes": ["project:beta"],
            },
        )

        def decide(summary: str, grant: Grant, topic: str = "parser") -> int:
            return engine.dispatch(
                "memory.save",
                {"kind": "decision", "topic": topic, "summary": summary},
                CLAUDE,
                grant,
            )["judgment_id"]

        ids["decision"] = decide("parser.py is a hand-written recursive descent parser.", orchard)
        ids["other_file"] = decide("lexer.py keeps the parser's tokens as tuples.", orchard)
        ids["beta"] = decide("parser.py in beta uses a generated LALR parser.", beta)
        ids["retired"] = decide("parser.py used regular expressions.", orchard)
        engine.dispatch(
            "memory.retire", {"id": ids["retired"], "reason": "Rewritten."}, CLAUDE, orchard
        )
    return ids


def mama_hook(
    name: str, stdin: str, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "mama"), "hook", name, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**env, "MAMA_HOOK_BUDGET_MS": GENEROUS_BUDGET_MS},
        timeout=120,
        check=False,
    )


def context_of(done: subprocess.CompletedProcess[str], event: str) -> str:
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return str(out["hookSpecificOutput"]["additionalContext"])


def read_event(project: Path, file: str, session: str = "session-1") -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(project / file)},
        }
    )


def test_session_start_gives_checkpoint_and_guidance(
    project: Path, seeded: dict[str, int], mama_env: dict[str, str]
) -> None:
    event = {
        "session_id": "session-1",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    text = context_of(mama_hook("session-start", json.dumps(event), mama_env), "SessionStart")
    assert "project:orchard" in text
    assert "Parser rewrite half done." in text
    assert "error messages" in text
    assert "claude-code 2.1.332" in text
    assert f"[#{seeded['constraint']}] constraint, when committing" in text
    assert "Beta checkpoint." not in text
    assert "tabs" not in text
    assert len(text) < 12_000


def test_pre_tool_use_gives_decisions_about_the_file_once(
    project: Path, seeded: dict[str, int], mama_env: dict[str, str]
) -> None:
    first = mama_hook("pre-tool-use", read_event(project, "parser.py"), mama_env)
    text = context_of(first, "PreToolUse")
    # A repository without a remote is its full path; its folder-name scope from
    # before is adopted, so the decisions saved there are still found.
    scope = f"project:{project.resolve()}"
    assert text.startswith(
        f"MAMA: active decisions about parser.py ({scope} and project:orchard (its records"
    )
    assert f"[#{seeded['decision']}]" in text
    assert f"[#{seeded['beta']}]" not in text  # another project's
    assert f"[#{seeded['retired']}]" not in text  # no longer believed
    assert f"[#{seeded['other_file']}]" not in text  # about another file

    again = mama_hook("pre-tool-use", read_event(project, "parser.py"), mama_env)
    assert (again.returncode, again.stdout) == (0, "")
    other_session = mama_hook("pre-tool-use", read_event(project, "parser.py", "s2"), mama_env)
    assert f"[#{seeded['decision']}]" in context_of(other_session, "PreToolUse")


def test_pre_tool_use_says_nothing_without_a_related_decision(
    project: Path, seeded: dict[str, int], mama_env: dict[str, str]
) -> None:
    unrelated = mama_hook("pre-tool-use", read_event(project, "notes.md"), mama_env)
    assert (unrelated.returncode, unrelated.stdout, unrelated.stderr) == (0, "", "")
    grep = json.loads(read_event(project, "parser.py")) | {"tool_name": "Grep"}
    not_read = mama_hook("pre-tool-use", json.dumps(grep), mama_env)
    assert (not_read.returncode, not_read.stdout) == (0, "")


def test_pre_compact_reminds_to_checkpoint(mama_env: dict[str, str], project: Path) -> None:
    event = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "custom_instructions": None,
    }
    # An option this version does not know must not make it exit 2 (that blocks Claude Code).
    done = mama_hook("pre-compact", json.dumps(event), mama_env, "--from-a-newer-plugin", "x")
    assert done.returncode == 0
    assert done.stdout.strip() == PRE_COMPACT_TEXT
    assert "checkpoint_save" in done.stdout


BAD_INPUTS = ["{not json", "", "[1, 2]", '"text"', "null", '{"tool_input": 5}']


def test_malformed_input_prints_nothing_and_exits_0(
    mama_env: dict[str, str], project: Path
) -> None:
    runs = {
        "session-start": "{not json",
        "pre-tool-use": "",
        "pre-compact": '{"hook_event_name": "PreCompact"',
    }
    for name, stdin in runs.items():
        done = mama_hook(name, stdin, mama_env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), name


@pytest.mark.parametrize("stdin", BAD_INPUTS)
def test_any_malformed_input_is_silent_in_process(stdin: str, hook_settings: HookSettings) -> None:
    for name in ("session-start", "pre-tool-use", "pre-compact", "no-such-hook"):
        assert run_hook(name, stdin, hook_settings) == ""


def test_internal_failures_are_silent(
    project: Path, seeded: dict[str, int], mama_env: dict[str, str], tmp_path: Path
) -> None:
    unknown = mama_hook("no-such-hook", "{}", mama_env)
    no_name = mama_hook("", "{}", mama_env)
    keyless = {k: v for k, v in mama_env.items() if k != "MAMA_DB_KEY"}
    keyless["HOME"] = str(tmp_path / "nohome")  # no keyring reachable
    start = {"cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    no_key = mama_hook("session-start", json.dumps(start), keyless)
    wrong_key = mama_hook("session-start", json.dumps(start), mama_env | {"MAMA_DB_KEY": "ab" * 32})
    no_store = mama_hook(
        "pre-tool-use", read_event(project, "parser.py"), mama_env, "--db", str(tmp_path / "x.db")
    )
    for done in (unknown, no_name, no_key, wrong_key, no_store):
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (tmp_path / "x.db").exists()  # a hook never creates a store
    # Positive control: the same store and key do answer.
    assert "Parser rewrite" in context_of(
        mama_hook("session-start", json.dumps(start), mama_env), "SessionStart"
    )


@pytest.fixture
def hook_settings(tmp_path: Path, dev_db: Path) -> Iterator[HookSettings]:
    yield HookSettings(paths=Paths(home=dev_db.parent, cache=tmp_path / "cache"))


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import TEST_KEY_HEX

    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)


@pytest.mark.usefixtures("key_env")
def test_over_budget_lookup_is_skipped_and_retried(
    project: Path, seeded: dict[str, int], hook_settings: HookSettings
) -> None:
    event = read_event(project, "parser.py")
    spent = HookSettings(hook_settings.paths, pre_tool_use_budget_s=0.0)
    assert run_hook("pre-tool-use", event, spent) == ""
    # Skipped is not "told": the next Read of the file looks again.
    assert str(project / "parser.py") not in SeenFiles(hook_settings.paths.cache, "session-1")
    roomy = HookSettings(hook_settings.paths, pre_tool_use_budget_s=30.0)
    out: dict[str, Any] = json.loads(run_hook("pre-tool-use", event, roomy))
    assert f"[#{seeded['decision']}]" in out["hookSpecificOutput"]["additionalContext"]
    assert str(project / "parser.py") in SeenFiles(hook_settings.paths.cache, "session-1")


@pytest.mark.usefixtures("key_env")
def test_lookup_fits_the_real_budget(
    project: Path, seeded: dict[str, int], hook_settings: HookSettings
) -> None:
    """The real 150 ms budget, from the hook's entry (interpreter start-up excluded):
    most lookups, each for a new session, answer within it."""
    assert hook_settings.pre_tool_use_budget_s == 0.150
    timings, answered = [], 0
    for n in range(5):
        started = time.monotonic()
        out = run_hook("pre-tool-use", read_event(project, "parser.py", f"warm-{n}"), hook_settings)
        timings.append(time.monotonic() - started)
        answered += bool(out)
    assert answered >= 3, [f"{t * 1000:.0f} ms" for t in timings]
    assert sorted(timings)[2] < hook_settings.pre_tool_use_budget_s


def test_old_session_state_is_forgotten(tmp_path: Path) -> None:
    fresh, stale = SeenFiles(tmp_path, "fresh"), SeenFiles(tmp_path, "stale")
    fresh.add("/a.py")
    stale.add("/b.py")
    week_ago = time.time() - 8 * 24 * 3600
    import os

    os.utime(stale.path, (week_ago, week_ago))
    assert forget_old_sessions(tmp_path) == 1
    assert "/a.py" in fresh
    assert "/b.py" not in stale
