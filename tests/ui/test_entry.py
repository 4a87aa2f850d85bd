"""``mama``: the desktop app with no arguments, the CLI otherwise — and the CLI never
loads Qt, so headless commands keep working where Qt cannot run."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from ui import autostart, entry

QT_ROOTS = ("PySide6", "shiboken6", "qasync")

PROBE = """
import sys
{setup}
try:
    from ui import entry
    entry.main({argv!r})
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & {{"PySide6", "shiboken6", "qasync"}})
print("QT_LOADED=" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


def run_probe(
    tmp_path: Path, model_cache_dir: Path, argv: list[str], setup: str = ""
) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(
        MAMA_HOME=str(tmp_path / "home"),
        MAMA_DB_KEY=TEST_KEY_HEX,
        MAMA_CACHE_DIR=str(model_cache_dir),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(setup=setup, argv=argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=300,
        check=False,
    )
    loaded = [line for line in result.stderr.splitlines() if line.startswith("QT_LOADED=")]
    assert loaded, result.stderr
    return result.returncode, result.stdout, loaded[-1].removeprefix("QT_LOADED=")


def test_headless_commands_never_import_qt(tmp_path: Path, model_cache_dir: Path) -> None:
    code, out, loaded = run_probe(tmp_path, model_cache_dir, ["doctor"])
    assert code == 0 and "all checks passed" in out
    assert loaded == ""
    code, out, loaded = run_probe(
        tmp_path, model_cache_dir, ["remember", "We ship on Thursdays", "--kind", "decision"]
    )
    assert code == 0 and "remembered #1" in out
    assert loaded == ""
    # Positive control: the probe does see Qt when something loads it.
    code, _out, loaded = run_probe(tmp_path, model_cache_dir, ["doctor"], "import ui.qt")
    assert code == 0
    assert loaded == "PySide6,qasync,shiboken6"


def test_no_arguments_start_the_desktop(monkeypatch: pytest.MonkeyPatch) -> None:
    import ui.application

    started: list[str | None] = []
    monkeypatch.setattr(ui.application, "run", lambda show=None: started.append(show) or 7)
    with pytest.raises(SystemExit) as stopped:
        entry.main([])
    assert started == [None]
    assert stopped.value.code == 7
    # ``mama open chat``: the app, asked to show its chat window.
    with pytest.raises(SystemExit):
        entry.main(["open", "chat"])
    assert started == [None, "chat"]


def test_open_names_a_window_or_says_which_it_takes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ui.application

    started: list[str | None] = []
    monkeypatch.setattr(ui.application, "run", lambda show=None: started.append(show) or 0)
    with pytest.raises(SystemExit) as stopped:
        entry.main(["open", "inbox"])
    assert stopped.value.code == 2 and started == []
    assert capsys.readouterr().err == (
        "mama: invalid_input: mama open takes one of chat, review (e.g. mama open chat).\n"
    )
    with pytest.raises(SystemExit) as stopped:  # positive control
        entry.main(["open", "review"])
    assert stopped.value.code == 0 and started == ["review"]


def test_arguments_go_to_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.cli

    seen: list[list[str]] = []
    monkeypatch.setattr(app.cli, "main", seen.append)
    entry.main(["search", "release"])
    assert seen == [["search", "release"]]


def test_console_script_is_the_entry() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))
    assert project["project"]["scripts"]["mama"] == "ui.entry:main"


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_qt_is_imported_only_through_the_shim() -> None:
    sources = sorted((REPO_ROOT / "ui").rglob("*.py"))
    assert REPO_ROOT / "ui" / "qt.py" in sources
    direct = {
        str(path.relative_to(REPO_ROOT)): sorted(imported_roots(path) & set(QT_ROOTS))
        for path in sources
        if imported_roots(path) & set(QT_ROOTS)
    }
    assert direct == {"ui/qt.py": ["PySide6", "qasync"]}
    # The modules the CLI path loads import nothing that loads Qt at module level.
    for name in ("entry.py", "settings/data_location.py"):
        tree = ast.parse((REPO_ROOT / "ui" / name).read_text("utf-8"))
        top = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module]
        assert all(n.module not in ("ui.qt", "ui.application") for n in top), name


def test_autostart_entry_respects_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = autostart.set_enabled(True, ["/opt/My Apps/mama"])
    assert path == tmp_path / "cfg" / "autostart" / "mama.desktop"
    assert 'Exec="/opt/My Apps/mama"' in path.read_text("utf-8")
    assert autostart.is_enabled()
    autostart.set_enabled(False)
    assert not path.exists() and not autostart.is_enabled()
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert autostart.autostart_dir() == Path.home() / ".config" / "autostart"


def test_no_display_is_a_line_not_a_crash(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM") and not k.startswith("MAMA_")
    }
    env.update(MAMA_HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    result = subprocess.run(
        [sys.executable, "-m", "ui.entry"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("mama: no_display: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "home").exists()
