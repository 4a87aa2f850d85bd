"""The idle tray loads nothing it does not use: no llama.cpp (the model loads when a
window that searches opens, or at the first search or save), no MCP SDK, no Telegram,
Slack or HTTP client (no connector or bot configured), no detect-secrets (nothing saved
yet). The app runs in its own process under Xvfb with a real tray, as a person starts
it; its start-up probe names the modules it holds once the agent has started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mama_core.embeddings import GgufEmbedder
from mama_core.embeddings.convert import MINILM
from mama_core.store import DbKey, Store
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import XDisplay, poll
from ui.startup_probe import read_marks

pytestmark = pytest.mark.slow

NOT_IN_AN_IDLE_TRAY = frozenset(
    {"llama_cpp", "mcp", "telegram", "slack_sdk", "httpx", "anyio", "detect_secrets"}
)
IN_EVERY_TRAY = frozenset({"PySide6", "qasync", "sqlcipher3", "mama_core", "numpy"})


def held_modules(probe: Path) -> list[frozenset[str]]:
    """Each ``modules`` line of the probe so far, in order."""
    if not probe.exists():
        return []
    return [
        frozenset(line.split()[2:])
        for line in probe.read_text("utf-8").splitlines()
        if line.startswith("modules ")
    ]


def test_the_idle_tray_holds_no_model_and_no_sdk_until_a_window_searches(
    x_display: XDisplay, tmp_path: Path, embedder: GgufEmbedder, model_cache_dir: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)):
        pass
    (home / "settings.json").write_text(json.dumps({"embedding_model": MINILM}))
    probe = tmp_path / "probe"
    env = {k: v for k, v in x_display.env.items() if not k.startswith("MAMA_")}
    env.update(
        QT_QPA_PLATFORM="xcb",
        MAMA_HOME=str(home),
        MAMA_DB_KEY=TEST_KEY_HEX,
        MAMA_CACHE_DIR=str(model_cache_dir),
        MAMA_CONFIG_DIR=str(tmp_path / "config"),
        MAMA_STARTUP_PROBE=str(probe),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    app = subprocess.Popen(
        [sys.executable, "-m", "ui.entry"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        idle = poll("the idle tray's modules", lambda: held_modules(probe), 120)[-1]
        assert "memory_open" in read_marks(probe)
        assert sorted(idle & NOT_IN_AN_IDLE_TRAY) == []
        assert sorted(IN_EVERY_TRAY - idle) == []  # control: the probe sees what is loaded
        # Control: once the owner opens the review window, the model loads, and the
        # same probe then names llama.cpp.
        subprocess.run(
            [sys.executable, "-m", "ui.entry", "open", "review"],
            env=env,
            cwd=REPO_ROOT,
            check=True,
            timeout=60,
            capture_output=True,
        )
        poll("the model to load", lambda: "model_loaded" in read_marks(probe), 120)
        assert "llama_cpp" in held_modules(probe)[-1]
    finally:
        app.terminate()
        _out, err = app.communicate(timeout=30)
    assert app.returncode == 0, err
