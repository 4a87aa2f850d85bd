"""``mama`` says in one line which system library Qt needs and how to install it,
instead of Qt's "could not load the Qt platform plugin" abort.

A library is hidden the way a system without it looks to the dynamic loader: an
unloadable file of the same name first on ``LD_LIBRARY_PATH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from ui.system_libraries import CORE, XCB, Library, advice, missing_libraries, platform_plugin

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def hidden(tmp_path: Path, *sonames: str) -> dict[str, str]:
    """An environment in which ``sonames`` cannot be loaded (nothing else changes)."""
    folder = tmp_path / ("hidden-" + "-".join(sonames))
    folder.mkdir()
    for soname in sonames:
        (folder / soname).write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(
        LD_LIBRARY_PATH=str(folder),
        MAMA_HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return env


def run_mama(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ui.entry"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )


def test_a_missing_xcb_library_is_one_line_with_the_install_command(tmp_path: Path) -> None:
    env = hidden(tmp_path, "libxcb-cursor.so.0")
    env.update(QT_QPA_PLATFORM="xcb", DISPLAY=":99")
    result = run_mama(env)
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mama: missing_library: the desktop app needs libxcb-cursor.so.0")
    assert "install it with:" in lines[0] and "libxcb-cursor0" in lines[0]  # Debian's name
    assert "qt.qpa.plugin" not in result.stderr  # Qt was never loaded
    assert not (tmp_path / "home").exists()


def test_the_check_names_what_is_hidden_and_only_that(tmp_path: Path) -> None:
    """In a fresh process (the loader reads LD_LIBRARY_PATH at start): with nothing
    hidden nothing is missing; hiding an xcb library matters only for xcb; hiding
    OpenGL matters for every platform."""
    probe = (
        "from ui.system_libraries import missing_libraries as m;"
        "print([lib.soname for lib in m('xcb')], [lib.soname for lib in m('offscreen')])"
    )

    def ask(env: dict[str, str]) -> str:
        out = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO_ROOT,
            timeout=60,
            check=True,
        )
        return out.stdout.strip()

    assert ask(hidden(tmp_path)) == "[] []"  # the control: this machine has them all
    assert ask(hidden(tmp_path, "libxcb-cursor.so.0")) == "['libxcb-cursor.so.0'] []"
    both = "['libGL.so.1', 'libxcb-icccm.so.4'] ['libGL.so.1']"
    assert ask(hidden(tmp_path, "libGL.so.1", "libxcb-icccm.so.4")) == both


def test_the_platform_is_read_as_qt_reads_it() -> None:
    assert platform_plugin({"QT_QPA_PLATFORM": "offscreen"}) == "offscreen"
    assert platform_plugin({"QT_QPA_PLATFORM": "wayland;xcb"}) == "wayland"
    assert platform_plugin({"QT_QPA_PLATFORM": "xcb:dpi=96"}) == "xcb"
    assert platform_plugin({"DISPLAY": ":0"}) == "xcb"
    assert platform_plugin({"WAYLAND_DISPLAY": "wayland-0"}) == "wayland"
    assert missing_libraries("offscreen") == []  # this machine: nothing hidden


def test_the_install_command_fits_the_system(tmp_path: Path) -> None:
    cursor = next(lib for lib in XCB if lib.soname == "libxcb-cursor.so.0")
    gl = next(lib for lib in CORE if lib.soname == "libGL.so.1")
    release = tmp_path / "os-release"
    release.write_text('ID=ubuntu\nID_LIKE="debian"\n', "utf-8")
    assert advice([cursor], release).endswith("sudo apt-get install libxcb-cursor0")
    release.write_text('ID="fedora"\n', "utf-8")
    line = advice([cursor, gl], release)
    assert "needs libxcb-cursor.so.0, libGL.so.1, which are not installed" in line
    assert line.endswith("install them with: sudo dnf install xcb-util-cursor libglvnd-glx")
    unknown = advice([cursor], tmp_path / "no-such-file")
    assert "Debian/Ubuntu: sudo apt-get install libxcb-cursor0" in unknown
    assert "Fedora: sudo dnf install xcb-util-cursor" in unknown
    # Two sonames from one package name it once.
    glib = [lib for lib in CORE if lib.debian == "libglib2.0-0"]
    assert len(glib) == 2 and advice(glib, release).endswith("sudo dnf install glib2")


def test_every_library_names_a_package_for_both_families() -> None:
    for lib in (*CORE, *XCB):
        assert isinstance(lib, Library)
        assert lib.soname.startswith("lib") and ".so." in lib.soname
        assert lib.debian and lib.fedora


def test_the_readme_lists_every_package_for_both_families() -> None:
    readme = (REPO_ROOT / "README.md").read_text("utf-8")
    libraries = (*CORE, *XCB)
    apt = next(line for line in readme.splitlines() if line.startswith("sudo apt-get install"))
    dnf = next(line for line in readme.splitlines() if line.startswith("sudo dnf install"))
    assert set(apt.split()[3:]) == {lib.debian for lib in libraries}
    assert set(dnf.split()[3:]) == {lib.fedora for lib in libraries}
