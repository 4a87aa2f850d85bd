"""SIGTERM, SIGINT and SIGHUP quit the real tray app as its menu's Quit does: exit 0,
the runtime lock released, the WAL folded into the file and the store verifying —
also while the app waits on its passphrase dialog.

The app runs in its own process on Xvfb or offscreen — neither has a system tray, so
the review window is open too; it is up when its log says the agent started (or that
the dialog is open)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from app.local.paths import Paths
from app.serve.host import runtime_running
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import owner_save, status_of

T = TypeVar("T")
PASSPHRASE = "a long walk on the beach"

pytestmark = pytest.mark.slow


def poll(what: str, probe: Callable[[], T | None], timeout: float = 60.0) -> T:
    """Wait for another process's state (no signal to wait on), every 50 ms."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def display_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Qt's offscreen platform, or a real X server (Xvfb; without a tray, so the review
    window opens) as the test's ``platform`` parameter says (default: Xvfb if installed)."""
    platform = getattr(request, "param", "xcb" if shutil.which("Xvfb") else "offscreen")
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(
        XDG_RUNTIME_DIR=str(runtime),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    if platform == "offscreen":
        env["QT_QPA_PLATFORM"] = "offscreen"
        yield env
        return
    if not shutil.which("Xvfb"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must install Xvfb (see .ci/run)")
        pytest.skip("needs Xvfb")
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as chosen:
        number = chosen.readline().strip()
    assert number.isdigit(), "Xvfb did not report its display"
    env.update(DISPLAY=f":{number}", QT_QPA_PLATFORM="xcb")
    try:
        yield env
    finally:
        xvfb.terminate()
        xvfb.wait(10)


def start_app(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ui.entry"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(app: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        code = app.wait(60)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(30)
    _out, err = app.communicate()
    return code, err


def started(paths: Paths) -> bool:
    return paths.log.exists() and "agent started here" in paths.log.read_text("utf-8")


def mama(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ui.entry", *args],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("signum", "display_env"),
    [
        (signal.SIGTERM, "xcb"),
        (signal.SIGTERM, "offscreen"),
        (signal.SIGINT, "xcb"),
        (signal.SIGHUP, "offscreen"),
    ],
    indirect=["display_env"],
)
def test_a_signal_quits_like_the_menu(
    signum: signal.Signals,
    display_env: dict[str, str],
    paths: Paths,
    embedder: GgufEmbedder,
    model_cache_dir: Path,
) -> None:
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        fact = owner_save(engine, "The printer is on floor 3")
    env = {
        **display_env,
        "MAMA_HOME": str(paths.home),
        "MAMA_DB_KEY": TEST_KEY_HEX,
        "MAMA_CACHE_DIR": str(model_cache_dir),
    }
    assert not runtime_running(paths)
    app = start_app(env)
    try:
        poll("the agent to start", lambda: started(paths) or app.poll() is not None)
        assert app.poll() is None, app.communicate()
        app.send_signal(signum)
    finally:
        code, err = finish(app)
    assert code == 0, err
    assert "Traceback" not in err and "Fatal Python error" not in err, err
    assert f"{signum.name} received: quitting" in paths.log.read_text("utf-8")
    assert not runtime_running(paths)  # the lock was released: a daemon may start
    assert not Path(f"{paths.db}-wal").exists()  # checkpointed and closed
    with Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        assert status_of(store, fact) == "active"
    verified = mama(env, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_sigterm_while_the_passphrase_dialog_waits(
    display_env: dict[str, str], paths: Paths, model_cache_dir: Path
) -> None:
    Store.open(paths.db, DbKey(PASSPHRASE, raw=False)).close()
    env = {**display_env, "MAMA_HOME": str(paths.home), "MAMA_CACHE_DIR": str(model_cache_dir)}

    def asking() -> bool:
        log = paths.log
        return log.exists() and "waiting for the owner: passphrase_dialog" in log.read_text()

    app = start_app(env)
    try:
        poll("the passphrase dialog", lambda: asking() or app.poll() is not None)
        assert app.poll() is None, app.communicate()
        app.send_signal(signal.SIGTERM)
    finally:
        code, err = finish(app)
    assert code == 0, err
    assert "SIGTERM received: quitting" in paths.log.read_text("utf-8")
    # Quitting is not a start failure: no fatal dialog was shown.
    assert "waiting for the owner: fatal" not in paths.log.read_text("utf-8")
