"""The real Claude Code CLI for tests: a pinned npm version in the git-ignored
``.node/`` folder of the project, installed once and reused.

Installing needs the npm registry; away from CI a failed install skips the tests
that need it, but in CI (``CI=true``) it fails them, so a broken pin is seen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.332"
"""Pinned: an exact version ``npm view @anthropic-ai/claude-code versions`` lists."""
NODE_PREFIX = REPO_ROOT / ".node"
INSTALL_TIMEOUT_S = 900


def _installed_version() -> str | None:
    manifest = NODE_PREFIX / "node_modules" / CLAUDE_CODE_PACKAGE / "package.json"
    try:
        return str(json.loads(manifest.read_text("utf-8")).get("version"))
    except (OSError, ValueError):
        return None


def _binary() -> Path:
    return NODE_PREFIX / "node_modules" / ".bin" / "claude"


def _refuse(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"Claude Code {CLAUDE_CODE_VERSION} is needed in CI: {reason}")
    pytest.skip(f"Claude Code {CLAUDE_CODE_VERSION} is not available: {reason}")


def ensure_claude_code() -> Path:
    """The pinned ``claude`` binary, installed into ``.node/`` first if it is not there."""
    if _installed_version() != CLAUDE_CODE_VERSION or not _binary().exists():
        npm = shutil.which("npm")
        if npm is None:
            _refuse("npm is not installed")
        assert npm is not None
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(NODE_PREFIX),
                "--no-audit",
                "--no-fund",
                "--save-exact",
                f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            _refuse(f"npm install failed: {done.stderr.strip()[-2000:]}")
    binary = _binary()
    probe = subprocess.run(
        [str(binary), "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "DISABLE_AUTOUPDATER": "1"},
    )
    if probe.returncode != 0 or CLAUDE_CODE_VERSION not in probe.stdout:
        _refuse(f"`claude --version` said {probe.stdout.strip()!r} {probe.stderr.strip()!r}")
    return binary
