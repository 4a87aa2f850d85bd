"""``mama daemon`` runs headless: no Qt imported, ready on stdout, clean stop on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.app.runtime.support import MAMA, mama_env


def test_the_daemon_imports_no_qt() -> None:
    probe = (
        "import sys, app.daemon, app.telegram.gateway, app.backends.factory, "
        "app.backends.claude_code, app.backends.codex, app.cli.main\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'qasync', 'ui'))\n"
        "print(bad)\n"
        "import PySide6.QtCore\n"  # positive control: the probe can see a Qt import
        "print('PySide6' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert out == ["[]", "True"]


def test_daemon_without_a_bot_token_serves_and_stops_cleanly(
    tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch
) -> None:
    env = mama_env(tmp_path / "home", model_cache_dir)
    proc = subprocess.Popen(
        [str(MAMA), "daemon"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "ready (agent command-mode, telegram off (no bot token))" in line
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (tmp_path / "home" / "mama.db").exists()
