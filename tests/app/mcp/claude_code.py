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
from filelock import FileLock

from tests.conftest import REPO_ROOT

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.332"
"""Pinned: an exact version ``npm view @anthropic-ai/claude-code versions`` lists."""
NODE_PREFIX = REPO_ROOT / ".node"
INSTALL_TIMEOUT_S = 900


def _refuse(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"needed in CI: {reason}")
    pytest.skip(f"not available: {reason}")


def ensure_npm_cli(package: str, version: str, binary: str) -> Path:
    """The pinned CLI's executable in ``.node/``, installed with npm first if absent; in
    CI (``CI=true``) a failed install fails the test, elsewhere it skips it.

    One install at a time (both CLIs go into the same prefix): two test workers
    installing at once broke each other's postinstall ('Failed to place binary:
    ENOENT'), failing CI."""
    NODE_PREFIX.mkdir(exist_ok=True)
    manifest = NODE_PREFIX / "node_modules" / package / "package.json"
    exe = NODE_PREFIX / "node_modules" / ".bin" / binary
    with FileLock(NODE_PREFIX / ".install.lock", timeout=INSTALL_TIMEOUT_S):
        try:
            installed = str(json.loads(manifest.read_text("utf-8")).get("version"))
        except (OSError, ValueError):
            installed = None
        if installed != version or not exe.exists():
            _install(package, version)
    return exe


def ensure_claude_code() -> Path:
    """The pinned ``claude`` binary, installed into ``.node/`` first if it is not there."""
    binary = ensure_npm_cli(CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION, "claude")
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


def _install(package: str, version: str) -> None:
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
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        _refuse(f"npm install {package}@{version} failed: {done.stderr.strip()[-2000:]}")
