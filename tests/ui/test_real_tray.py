"""The real thing under X: the app in its own process on Xvfb, its icon in a real tray
(trayer), driven by xdotool as a person would — right-click the icon, choose Review,
approve the proposal with the A key — and the store checked behind it. Screenshots of
the tray menu and the review window are saved under test-artifacts/.

Without Xvfb, trayer, xdotool or imagemagick the test is skipped on a workstation
and fails in CI (``CI=true``), which must install them (see .ci/run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mama_core.embeddings import GgufEmbedder
from mama_core.errors import ReadOnlyError
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store, connect
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import (
    ARTIFACTS,
    XDisplay,
    agent_propose,
    events_of,
    owner_save,
    poll,
    status_of,
)
from ui.startup_probe import read_marks

pytestmark = pytest.mark.slow


@pytest.fixture
def seeded_home(tmp_path: Path, embedder: GgufEmbedder) -> tuple[Path, int]:
    home = tmp_path / "home"
    with (
        Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        owner_save(
            engine, "Never deploy on Fridays", kind="constraint", applies_when="planning a release"
        )
        proposal = agent_propose(engine, "Answer in short paragraphs unless asked for detail")
    return home, proposal


def test_review_from_the_real_tray(
    x_display: XDisplay,
    seeded_home: tuple[Path, int],
    tmp_path: Path,
    model_cache_dir: Path,
) -> None:
    home, proposal = seeded_home
    probe = tmp_path / "probe"
    env = {k: v for k, v in x_display.env.items() if not k.startswith("MAMA_")}
    env.update(
        QT_QPA_PLATFORM="xcb",
        MAMA_HOME=str(home),
        MAMA_DB_KEY=TEST_KEY_HEX,
        MAMA_CACHE_DIR=str(model_cache_dir),
        MAMA_STARTUP_PROBE=str(probe),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    app = subprocess.Popen(
        [sys.executable, "-m", "ui.entry"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        poll("the memory to open", lambda: "memory_open" in read_marks(probe), 60)

        def tray_icon() -> tuple[int, int, int, int] | None:
            for window in x_display.windows("mama"):
                x, y, w, h = x_display.geometry(window)
                if 0 < w <= 64 and 0 < h <= 64 and y < 40:
                    return x, y, w, h
            return None

        first = poll("the tray icon", tray_icon)
        # The icon is usable once it has stopped moving (PLATFORM.md: ~300 ms).
        settled_since, icon = time.monotonic(), first
        while time.monotonic() - settled_since < 0.3:
            now = poll("the tray icon", tray_icon)
            if now != icon:
                settled_since, icon = time.monotonic(), now
            time.sleep(0.05)
        x, y, w, h = icon
        center = (x + w // 2, y + h // 2)

        def open_menu() -> tuple[int, int, int, int]:
            before = set(x_display.windows("mama"))
            x_display.run("xdotool", "mousemove", str(center[0]), str(center[1]), "click", "3")

            def menu() -> tuple[int, int, int, int] | None:
                for window in set(x_display.windows("mama")) - before:
                    box = x_display.geometry(window)
                    if box[3] > 100:  # the popup, not a tooltip
                        return box
                return None

            return poll("the tray menu", menu)

        menu_box = open_menu()
        mx, my, mw, mh = menu_box
        x_display.screenshot("tray-menu.png", (max(mx - 40, 0), 0, mw + 200, my + mh + 20))
        # Review (1 waiting), under the agent's status line and a separator: clicked,
        # as keys may go to another window.
        x_display.run("xdotool", "mousemove", str(mx + mw // 2), str(my + 37), "click", "1")

        window = poll("the review window", lambda: x_display.windows("Review$", "--name") or None)[
            0
        ]
        poll("the review window's lists", lambda: "review_loaded" in read_marks(probe))
        x_display.run("xdotool", "windowfocus", "--sync", str(window))
        x_display.screenshot("review-window-xvfb.png", x_display.geometry(window))

        def approved() -> bool:
            # The detail pane may still be loading: press A until the store says active.
            x_display.run("xdotool", "windowfocus", "--sync", str(window))
            x_display.run("xdotool", "key", "a")
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                if status_of_home(home, proposal) == "active":
                    return True
                time.sleep(0.05)
            return False

        poll("the approval", approved, 20)

        mx, my, mw, mh = open_menu()
        # The last entry: Quit.
        x_display.run("xdotool", "mousemove", str(mx + mw // 2), str(my + mh - 14), "click", "1")
        code = app.wait(30)
    finally:
        if app.poll() is None:
            app.terminate()
            app.wait(30)
        _out, err = app.communicate()
    assert code == 0, err
    assert "Traceback" not in err, err
    qt_warnings = [line for line in err.splitlines() if re.search(r"QObject|QWidget|qt\.", line)]
    assert qt_warnings == [], err

    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        assert status_of(store, proposal) == "active"
        event = events_of(store, proposal)[-1]
    assert event["action"] == "review.approve"
    assert event["actor"]["kind"] == "owner" and event["actor"]["turn"] == "ui"
    assert (ARTIFACTS / "tray-menu.png").stat().st_size > 1000


def status_of_home(home: Path, judgment_id: int) -> str:
    """Read the status beside the running app (a reader connection; WAL allows it)."""
    conn = connect(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX))
    try:
        row = conn.execute("SELECT status FROM judgments WHERE id = ?", (judgment_id,)).fetchone()
    finally:
        conn.close()
    return str(row[0])


def test_read_only_data_folder_is_a_dialog_and_exit_code(x_display: XDisplay) -> None:
    """On a read-only data folder the store is readable, not writable: the app says
    so in a dialog and exits with the CLI's code. Root ignores permission bits, so
    as root the folder is made a read-only bind mount in a private mount namespace
    (an unprivileged user could not reach a clone in a private temp folder)."""
    work = Path(tempfile.mkdtemp(prefix="mama-ro-"))
    try:
        work.chmod(0o755)
        home = work / "home"
        with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for extra in home.glob("mama.db-*"):
            extra.unlink()
        home.chmod(0o755)
        (home / "mama.db").chmod(0o644)
        runtime = work / "run"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in x_display.env.items() if not k.startswith("MAMA_")}
        env.update(
            QT_QPA_PLATFORM="xcb",
            HOME=str(work),
            MAMA_HOME=str(home),
            MAMA_DB_KEY=TEST_KEY_HEX,
            XDG_RUNTIME_DIR=str(runtime),
            XDG_CONFIG_HOME=str(work / "config"),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            PYTHONDONTWRITEBYTECODE="1",
        )
        command = [sys.executable, "-m", "ui.entry"]
        if os.geteuid() == 0:
            assert shutil.which("unshare"), "util-linux unshare is needed"
            mount = (
                f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && exec "$@"'
            )
            command = ["unshare", "-m", "sh", "-c", mount, "sh", *command]
        else:
            home.chmod(0o555)
        app = subprocess.Popen(
            command,
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            dialog = poll("the dialog", lambda: x_display.windows("cannot start", "--name"), 60)
            box = x_display.geometry(dialog[0])
            x_display.screenshot("fatal-read-only.png", box)
            x_display.run("xdotool", "windowfocus", "--sync", str(dialog[0]), "key", "Return")
            code = app.wait(30)
        finally:
            if app.poll() is None:
                app.terminate()
                app.wait(30)
            _out, err = app.communicate()
        assert code == ReadOnlyError.exit_code, err
        assert "Traceback" not in err
    finally:
        shutil.rmtree(work, ignore_errors=True)
