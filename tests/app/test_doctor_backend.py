"""``mama doctor`` does not say "all checks passed" when the chosen agent backend's CLI
is not installed: it names what is missing and how to install it, and fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.app.runtime.support import MAMA, mama_env


def doctor(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MAMA), "doctor"], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("backend", "variable", "install"),
    [
        ("claude-code", "MAMA_CLAUDE_BIN", "npm install -g @anthropic-ai/claude-code"),
        ("codex", "MAMA_CODEX_BIN", "npm install -g @openai/codex"),
    ],
)
def test_doctor_names_a_missing_agent_cli_and_how_to_install_it(
    backend: str,
    variable: str,
    install: str,
    tmp_path: Path,
    model_cache_dir: Path,
    clean_env: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"agent_backend": backend}), "utf-8")
    missing = tmp_path / "bin" / "not-installed"
    done = doctor(mama_env(home, model_cache_dir, **{variable: str(missing)}))
    assert done.returncode != 0, done.stdout
    assert "all checks passed" not in done.stdout
    assert install in done.stderr and variable in done.stderr, done.stderr
    assert "Traceback" not in done.stderr

    # Control: with the CLI there (any executable will do for this check), all pass.
    missing.parent.mkdir()
    missing.write_text("#!/bin/sh\necho 1.0.0\n", "utf-8")
    missing.chmod(0o755)
    done = doctor(mama_env(home, model_cache_dir, **{variable: str(missing)}))
    assert done.returncode == 0, done.stderr
    assert "all checks passed" in done.stdout
