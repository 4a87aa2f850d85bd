"""Fixtures for the desktop app's tests: a qasync loop, a real store and engine, and
helpers that act as the agent or read the store behind the UI's back.

Every test here fails on a Qt warning (pytest-qt's ``qt_log_level_fail``),
except the few the offscreen platform prints about itself.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import keyring
import keyring.backends.fail
import pytest

from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.embeddings import GgufEmbedder, load_embedder
from mama_core.memory import ActorKind, Engine, EngineConfig, Grant, SessionFacts, TurnKind
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from ui.main_thread_gc import MainThreadCollector
from ui.qt import QEventLoop, QtCore, QtWidgets

UI_TESTS = Path(__file__).resolve().parent
ARTIFACTS = UI_TESTS.parent.parent / "test-artifacts"

# Messages the offscreen platform plugin prints about itself: not our bugs.
OFFSCREEN_NOISE = (
    r"This plugin does not support propagateSizeHints\(\)",
    r"This plugin does not support raise\(\)",
    r"This plugin does not support grabbing the keyboard",
    r"QObject::connect: No such signal QPlatformNativeInterface::systemTrayWindowChanged",
)

AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT,
    actor_name="claude-code",
    actor_version="2.1.332",
    turn=TurnKind.OWNER_MESSAGE,
    backend="claude-code",
    message_ref="telegram:812",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(UI_TESTS):
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def private_desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test touches the real autostart folder, data-folder pointer or keyring."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    # For child processes; this process may have chosen its backend already
    # (earlier tests), so it is set explicitly too.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for name in list(os.environ):
        if name.startswith("MAMA_"):
            monkeypatch.delenv(name)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def system_tray(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """The offscreen platform has no system tray; in-process tests run as on a desktop
    with one unless they set ``system_tray["available"] = False`` (before the tray
    is made, or followed by ``tray.check_available()``)."""
    from ui.tray import Tray

    state = {"available": True}
    monkeypatch.setattr(Tray, "system_tray_available", staticmethod(lambda: state["available"]))
    return state


@pytest.fixture
def loop(qapp: QtWidgets.QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop over the test QApplication (PLATFORM.md's pattern)."""
    qapp.setQuitOnLastWindowClosed(False)
    event_loop = QEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    collector = MainThreadCollector.install()  # as ui.application.run does
    try:
        yield event_loop
    finally:
        event_loop.run_until_complete(event_loop.shutdown_asyncgens())
        event_loop.close()
        asyncio.set_event_loop(None)
        collector.uninstall()
        collector.deleteLater()
        release_qt_objects()


def release_qt_objects() -> None:
    """Delete closed widgets now, on this thread: a Qt object left to the garbage
    collector may be freed on a worker thread, which Qt warns about (timers)."""
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    gc.collect()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)


@pytest.fixture(scope="session")
def embedder(model_cache_dir: Path) -> GgufEmbedder:
    """The real GGUF model, loaded once."""
    model = load_embedder(None, model_cache_dir)
    model.embed_one("warm-up")
    return model


@pytest.fixture
def paths(tmp_path: Path, model_cache_dir: Path) -> Paths:
    return Paths(home=tmp_path / "home", cache=model_cache_dir)


@pytest.fixture
def store(paths: Paths) -> Iterator[Store]:
    opened = Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX))
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def engine(store: Store, embedder: GgufEmbedder) -> Iterator[Engine]:
    opened = Engine(store, embedder, EngineConfig())
    try:
        yield opened
    finally:
        opened.close()


def agent_propose(engine: Engine, summary: str, **fields: Any) -> int:
    """The agent saves guidance; it lands proposed. Returns the judgment id."""
    payload: dict[str, Any] = {
        "kind": "preference",
        "summary": summary,
        "applies_when": "writing to the owner",
        **fields,
    }
    receipt = engine.dispatch("memory.save", payload, AGENT, Grant.agent(["global"]))
    assert receipt["status"] == "proposed", receipt
    return int(receipt["judgment_id"])


def owner_save(engine: Engine, summary: str, **fields: Any) -> int:
    payload: dict[str, Any] = {"kind": "fact", "summary": summary, **fields}
    receipt = engine.dispatch("memory.save", payload, SessionFacts.owner_cli(), Grant.owner())
    return int(receipt["judgment_id"])


def status_of(store: Store, judgment_id: int) -> str:
    reader = store.new_connection()
    try:
        row = reader.execute("SELECT status FROM judgments WHERE id = ?", (judgment_id,)).fetchone()
    finally:
        reader.close()
    return str(row[0])


def events_of(store: Store, judgment_id: int) -> list[dict[str, Any]]:
    """The events naming ``judgment_id`` as their main record, oldest first, as callers
    see them (reasons read from beside the chain)."""
    from mama_core.memory.events import EVENT_COLUMNS, event_from_row, public_events

    reader = store.new_connection()
    try:
        rows = reader.execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE judgment_id = ? ORDER BY id",
            (judgment_id,),
        ).fetchall()
        return public_events(reader, [event_from_row(r)[0] for r in rows])
    finally:
        reader.close()


def settings_for(paths: Paths) -> Settings:
    return Settings.load(paths.settings)


async def wait_signal(signal: Any, timeout: float = 10.0) -> tuple[Any, ...]:
    """Await the next emission of a Qt ``signal`` (its arguments), with a timeout."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple[Any, ...]] = loop.create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(fire)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(fire)


async def wait_until(condition: Any, signal: Any, timeout: float = 10.0) -> None:
    """Await ``condition()`` becoming true, re-checking each time ``signal`` fires."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise TimeoutError("condition not met in time")
        try:
            await wait_signal(signal, left)
        except TimeoutError:
            if not condition():
                raise


def save_artifact(widget: QtWidgets.QWidget, name: str) -> Path:
    """A PNG of ``widget`` under test-artifacts/ (gitignored), for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    assert widget.grab().save(str(path), "PNG"), path
    return path


def process_events() -> None:
    QtCore.QCoreApplication.processEvents()


# --- a real X display with a system tray ------------------------------------------------

X_TOOLS = ("Xvfb", "trayer", "xdotool", "import")
T = TypeVar("T")


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
    missing = [tool for tool in X_TOOLS if not shutil.which(tool)]
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
