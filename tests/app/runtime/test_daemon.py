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
        "import sys, app.serve.daemon, app.telegram.gateway, app.backends.factory, "
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


def test_daemon_catches_up_on_the_new_models_vectors_and_logs_it(
    tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch
) -> None:
    """Memories with vectors of the old model only get the new model's in the background."""
    import json

    from app.durable.schema import expected_series
    from mama_core.embeddings import GgufEmbedder, load_embedder
    from mama_core.memory import Engine, Grant, SessionFacts, verify_store
    from mama_core.recall import count_missing
    from mama_core.store import DbKey, Store
    from tests.conftest import TEST_KEY_HEX

    home = tmp_path / "home"
    home.mkdir()
    old = load_embedder(None, model_cache_dir)
    assert isinstance(old, GgufEmbedder)
    store = Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX))
    try:
        with Engine(store, old) as engine:
            payloads: list[dict[str, object]] = [
                {"kind": "fact", "summary": f"Meeting room {i} has {i + 2} chairs"}
                for i in range(40)
            ]
            engine.dispatch_batch(
                "memory.save", list(payloads), SessionFacts.owner_cli(), Grant.owner()
            )
        # An update changed the model: the same weights in another file, another id.
        new_model = tmp_path / "new-model.gguf"
        new_model.write_bytes(old.model_path.read_bytes())
        new_id = GgufEmbedder(new_model).model_id
        (home / "settings.json").write_text(json.dumps({"embedding_model_path": str(new_model)}))
        assert count_missing(store.conn, new_id) == 40

        env = mama_env(home, model_cache_dir)
        log_file = home / "logs" / "mama.log"
        proc = subprocess.Popen(
            [str(MAMA), "daemon"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            assert "ready" in proc.stdout.readline()
            caught_up = f"caught up: 40 memories now have a {new_id} vector"
            assert _wait_for_log(log_file, caught_up, timeout=300), log_file.read_text()
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        text = log_file.read_text()
        assert f"40 memories lack a {new_id} vector; embedding them" in text
        assert count_missing(store.conn, new_id) == 0
        report = verify_store(store.conn, store.secret, series=expected_series())
        assert report.ok, report.problems
    finally:
        store.close()


def _wait_for_log(path: Path, text: str, timeout: float) -> bool:
    """Whether ``text`` appears in the log file within ``timeout`` (checked every 0.1 s)."""
    import threading
    import time

    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(encoding="utf-8", errors="replace"):
            return True
        tick.wait(0.1)
    return False
