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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from mama_core.embeddings import GgufEmbedder
from mama_core.errors import ReadOnlyError
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store, connect
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import ARTIFACTS, agent_propose, events_of, owner_save, status_of
from ui.startup_probe import read_marks

TOOLS = ("Xvfb", "trayer", "xdotool", "import")
T = TypeVar("T")

pytestmark = pytest.mark.slow


def poll(what: str, probe: Callable[[], T | None], timeout: float = 20.0) -> T:
    """Wait for ``probe()`` to return something (another process's state: no signal to
    wait on), checking every 50 ms, failing after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class XDisplay:
    env: dict[str, str]

    def run(self, *args: str) -> str:
        result = subprocess.run(
            list(args), env=self.env, capture_output=True, text=True, timeout=20, check=False
        )
        return result.stdout

    def windows(self, pattern: str, by: str = "--class") -> list[int]:
        return [int(w) for w in self.run("xdotool", "search", "--onlyvisible", by, pattern).split()]

    def geometry(self, window: int) -> tuple[int, int, int, int]:
        out = self.run("xdotool", "getwindowgeometry", "--shell", str(window))
        values = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def screenshot(self, name: str, box: tuple[int, int, int, int] | None = None) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        command = ["import", "-window", "root"]
        if box is not None:
            x, y, w, h = box
            command += ["-crop", f"{w}x{h}+{x}+{y}", "+repage"]
        subprocess.run([*command, str(path)], env=self.env, check=True, timeout=30)
        return path


@pytest.fixture
def x_display(tmp_path: Path) -> Iterator[XDisplay]:
    """Xvfb on a free display number, with trayer as the system tray."""
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must install {missing} (see .ci/run)")
        pytest.skip(f"needs {missing}")
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
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "DISPLAY": f":{number}", "XDG_RUNTIME_DIR": str(runtime)}
    trayer = subprocess.Popen(
        [
            *("trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel"),
            *("--width", "120", "--height", "32", "--transparent", "false"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    display = XDisplay(env)
    try:
        poll("the trayer panel", lambda: display.windows("panel", "--name"), 60)
        yield display
    finally:
        trayer.terminate()
        trayer.wait(10)
        xvfb.terminate()
        xvfb.wait(10)


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
