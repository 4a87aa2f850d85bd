"""Fixtures for the backend tests: the real Claude Code and Codex CLIs from npm
(pinned, installed into the git-ignored ``.node/`` when absent), real stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.mcp.claude_code import ensure_npm_cli
from tests.app.runtime.support import clock, embedder, engine, runtime_db, store

__all__ = ["clock", "embedder", "engine", "runtime_db", "store"]

CLAUDE_PACKAGE, CLAUDE_VERSION = "@anthropic-ai/claude-code", "2.1.332"
CODEX_PACKAGE, CODEX_VERSION = "@openai/codex", "0.171.0"


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return ensure_npm_cli(CLAUDE_PACKAGE, CLAUDE_VERSION, "claude")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return ensure_npm_cli(CODEX_PACKAGE, CODEX_VERSION, "codex")
