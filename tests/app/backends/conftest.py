"""Fixtures for the backend tests: the real Claude Code and Codex CLIs from npm
(pinned, installed into the git-ignored ``.node/`` when absent), real stores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.app.runtime.support import clock, embedder, engine, runtime_db, store
from tests.conftest import REPO_ROOT

__all__ = ["clock", "embedder", "engine", "runtime_db", "store"]

NODE_DIR = REPO_ROOT / ".node"
CLAUDE_PACKAGE, CLAUDE_VERSION = "@anthropic-ai/claude-code", "2.1.332"
CODEX_PACKAGE, CODEX_VERSION = "@openai/codex", "0.171.0"


def ensure_cli(package: str, version: str, binary: str) -> Path:
    """The pinned CLI's executable in ``.node/``, installing it with npm if absent.

    In CI (``CI=true``) a failed install fails the test; elsewhere it skips it.
    """
    manifest = NODE_DIR / "node_modules" / package / "package.json"
    exe = NODE_DIR / "node_modules" / ".bin" / binary
    installed = json.loads(manifest.read_text())["version"] if manifest.exists() else None
    if installed != version or not exe.exists():
        npm = shutil.which("npm")
        problem = "npm is not installed" if npm is None else ""
        if npm is not None:
            done = subprocess.run(
                [npm, "install", "--prefix", str(NODE_DIR), "--save-exact", f"{package}@{version}"],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if done.returncode != 0:
                problem = f"npm install {package}@{version} failed: {done.stderr[-2000:]}"
        if problem:
            if os.environ.get("CI", "").lower() in ("1", "true"):
                pytest.fail(problem)
            pytest.skip(problem)
    return exe


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return ensure_cli(CLAUDE_PACKAGE, CLAUDE_VERSION, "claude")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return ensure_cli(CODEX_PACKAGE, CODEX_VERSION, "codex")
