"""One session driven by the real Claude Code CLI, with the plugin loaded, against a
scripted fake model on 127.0.0.1.

The fake model reads a file (so the PreToolUse hook runs), saves a decision,
then searches for it. Claude Code starts ``mama mcp`` from the plugin's
``.mcp.json`` and runs ``mama hook …`` from its ``hooks.json``; the store then
holds the record with Claude Code's own name and version as its actor.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mama_core.embeddings import GgufEmbedder
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import DbKey, Store
from tests.app.backends.fake_anthropic import Block, FakeAnthropic, Script, text, tool_use
from tests.app.mcp.claude_code import CLAUDE_CODE_VERSION, ensure_claude_code
from tests.app.mcp.conftest import PLUGIN_DIR, git_project, owner_dispatch

pytestmark = pytest.mark.slow

SERVER_TOOL = "mcp__plugin_mama_mama__{}"
SAVE, SEARCH = SERVER_TOOL.format("save"), SERVER_TOOL.format("search")
SAVED_SUMMARY = "Error messages name the line and the column of the bad token."
CHECKPOINT = "Parser rewrite half done; error messages next."
EARLIER_DECISION = "parser.py is a hand-written recursive descent parser."


@pytest.fixture(scope="session")
def claude() -> Path:
    return ensure_claude_code()


def _tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool results in a request, by tool_use_id."""
    out: dict[str, dict[str, Any]] = {}
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out[str(block["tool_use_id"])] = block
    return out


def _model(project: Path) -> Script:
    """The scripted model: Read the parser, save a decision, search for it, stop."""

    def script(body: dict[str, Any]) -> tuple[list[Block], str]:
        tools = {t.get("name") for t in body.get("tools", [])}
        if SAVE not in tools:
            return [text("ok")], "end_turn"  # a side request: not the session's turn
        done = _tool_results(body)
        if "toolu_read" not in done:
            read = tool_use("Read", {"file_path": str(project / "parser.py")}, "toolu_read")
            return [read], "tool_use"
        if "toolu_save" not in done:
            save = {"kind": "decision", "topic": "errors", "summary": SAVED_SUMMARY}
            return [tool_use(SAVE, save, "toolu_save")], "tool_use"
        if "toolu_search" not in done:
            query = {"query": "error messages column token"}
            return [tool_use(SEARCH, query, "toolu_search")], "tool_use"
        return [text("Saved the decision and found it again.")], "end_turn"

    return script


@pytest.fixture
def orchard(tmp_path: Path, dev_db: Path, db_key: DbKey, embedder: GgufEmbedder) -> Iterator[Path]:
    """The project, and a development store with its checkpoint and an earlier decision."""
    project = git_project(tmp_path / "work", "orchard")
    # The project's identity, as an owner commits it (its folder name alone no longer is).
    (project / ".mama-project").write_text("orchard\n")
    (project / "parser.py").write_text("def parse(text):\n    ...\n")
    claude_before = SessionFacts(ActorKind.MCP_CLIENT, "claude-code", "2.1.0", TurnKind.MCP)
    with Store.open(dev_db, db_key) as store, Engine(store, embedder) as engine:
        grant = Grant.agent({"project:orchard"})
        engine.dispatch("checkpoint.save", {"summary": CHECKPOINT}, claude_before, grant)
        engine.dispatch(
            "memory.save", {"kind": "decision", "summary": EARLIER_DECISION}, claude_before, grant
        )
    yield project


def test_claude_code_saves_and_searches_through_the_plugin(
    claude: Path,
    orchard: Path,
    mama_env: dict[str, str],
    tmp_path: Path,
    dev_db: Path,
    db_key: DbKey,
    embedder: GgufEmbedder,
) -> None:
    home = tmp_path / "claude-home"
    home.mkdir()
    api = FakeAnthropic(_model(orchard)).start()
    try:
        env = {
            **mama_env,
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key-not-real",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "ENABLE_TOOL_SEARCH": "false",
            # Print mode connects MCP servers without waiting (non-blocking) and takes
            # its tool list at once: a server not answered yet stays "pending" with no
            # tools, at random. Blocking, bounded by MCP_TIMEOUT, is what a scripted
            # user sets too (the README says so).
            "MCP_CONNECTION_NONBLOCKING": "false",
            "MCP_TIMEOUT": "60000",
            # ... and what a blocking start waits for all servers (5 s by default): under
            # load `mama mcp` answered later and the server stayed "pending".
            "MCP_CONNECT_TIMEOUT_MS": "60000",
            # Loaded machines must not make the file hook flaky here; its budget is
            # tested on its own in test_hooks.
            "MAMA_HOOK_BUDGET_MS": "30000",
        }
        env.pop("CLAUDECODE", None)
        prompt = {"type": "user", "message": {"role": "user", "content": "Note the decision."}}
        done = subprocess.run(
            [
                str(claude),
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--plugin-dir",
                str(PLUGIN_DIR),
                "--allowedTools",
                "Read",
                SAVE,
                SEARCH,
            ],
            input=json.dumps(prompt) + "\n",
            capture_output=True,
            text=True,
            cwd=orchard,
            env=env,
            timeout=300,
            check=False,
        )
        requests = list(api.requests)
    finally:
        api.stop()

    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr[-3000:]
    init = next(m for m in lines if m.get("type") == "system" and m.get("subtype") == "init")
    assert {"name": "plugin:mama:mama", "status": "connected"}.items() <= {
        k: v for s in init["mcp_servers"] if s["name"] == "plugin:mama:mama" for k, v in s.items()
    }.items()
    assert {SAVE, SEARCH} <= set(init["tools"])
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success", result

    turns = [r for r in requests if SAVE in {t.get("name") for t in r.get("tools", [])}]
    # SessionStart hook: the project's checkpoint reached the model.
    assert CHECKPOINT in json.dumps(turns[0])
    # PreToolUse hook on Read: the earlier decision about parser.py came with the read.
    after_read = next(r for r in turns if "toolu_read" in _tool_results(r))
    assert "MAMA: active decisions about parser.py (project:orchard)" in json.dumps(after_read)
    assert EARLIER_DECISION in json.dumps(after_read)
    # The save succeeded and the search found it, through the real MCP session.
    final = _tool_results(turns[-1])
    assert not final["toolu_save"].get("is_error"), final["toolu_save"]
    assert not final["toolu_search"].get("is_error"), final["toolu_search"]
    assert SAVED_SUMMARY in json.dumps(final["toolu_search"])

    with Store.open(dev_db, db_key) as store, Engine(store, embedder) as engine:
        hits = owner_dispatch(engine, "memory.search", {"query": "error messages column"})
        (hit,) = [h for h in hits["results"] if h["summary"] == SAVED_SUMMARY]
        record = owner_dispatch(engine, "memory.read", {"id": hit["id"]})["record"]
    assert record["scopes"] == ["project:orchard"]
    assert record["involvement"] == "agent_inferred"
    assert record["provenance"]["actor_kind"] == "mcp_client"
    assert record["provenance"]["actor_name"] == "claude-code"
    assert record["provenance"]["actor_version"] == CLAUDE_CODE_VERSION
    assert os.environ.get("ANTHROPIC_BASE_URL") != api.url  # nothing leaked out
