"""install.sh and uninstall.sh as a person runs them, on an unpacked folder laid out as
the bundle is (its program a stand-in script: these scripts never run it), in a
private home: what they print for a first install and a reinstall, the PATH warning,
and that uninstall leaves no icon cache behind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

PACKAGING = REPO_ROOT / "packaging"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture
def unpacked(tmp_path: Path) -> Path:
    folder = tmp_path / "Applications" / "mama"
    (folder / "_internal" / "resources" / "icons").mkdir(parents=True)
    (folder / "_internal" / "desktop").mkdir(parents=True)
    program = folder / "mama"
    program.write_text("#!/bin/sh\nexit 0\n", "utf-8")
    program.chmod(0o755)
    icons = folder / "_internal" / "resources" / "icons"
    shutil.copy(REPO_ROOT / "resources" / "icons" / "mama.svg", icons)
    shutil.copy(PACKAGING / "mama.desktop", folder / "_internal" / "desktop")
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy(PACKAGING / script, folder / script)
        (folder / script).chmod(0o755)
    return folder


def run(folder: Path, script: str, home: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}
    return subprocess.run(
        [str(folder / script)], env=env, capture_output=True, text=True, timeout=60, check=True
    )


def test_a_first_install_promises_no_data_and_a_reinstall_keeps_it(
    unpacked: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = f"{home}/.local/bin:{SYSTEM_PATH}"
    first = run(unpacked, "install.sh", home, path)
    assert "first start creates your encrypted memory" in first.stdout
    assert "stays" not in first.stdout
    data = home / ".local" / "share" / "mama"
    data.mkdir(parents=True)
    (data / "mama.db").write_bytes(b"\0" * 16)
    again = run(unpacked, "install.sh", home, path)
    assert f"your memory in {data} stays as it was" in again.stdout
    assert "first start" not in again.stdout


def test_install_warns_when_the_command_folder_is_not_on_path(
    unpacked: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    outside = run(unpacked, "install.sh", home, SYSTEM_PATH)
    assert f"{home}/.local/bin is not on your PATH" in outside.stderr
    assert (home / ".local" / "bin" / "mama").is_symlink()
    inside = run(unpacked, "install.sh", home, f"{home}/.local/bin:{SYSTEM_PATH}")
    assert "PATH" not in inside.stderr  # the control: on PATH, nothing to say


@pytest.mark.skipif(shutil.which("gtk-update-icon-cache") is None, reason="no icon cache tool")
def test_uninstall_leaves_no_icon_cache_behind(unpacked: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = f"{home}/.local/bin:{os.environ.get('PATH', SYSTEM_PATH)}"
    hicolor = home / ".local" / "share" / "icons" / "hicolor"
    run(unpacked, "install.sh", home, path)
    assert (hicolor / "icon-theme.cache").is_file()  # the control: install made one
    run(unpacked, "uninstall.sh", home, path)
    assert not (hicolor / "icon-theme.cache").exists()
    assert not (hicolor / "scalable" / "apps" / "mama.svg").exists()


@pytest.mark.skipif(shutil.which("gtk-update-icon-cache") is None, reason="no icon cache tool")
def test_uninstall_keeps_another_apps_icons_and_their_cache(unpacked: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = f"{home}/.local/bin:{os.environ.get('PATH', SYSTEM_PATH)}"
    hicolor = home / ".local" / "share" / "icons" / "hicolor"
    other = hicolor / "scalable" / "apps" / "other.svg"
    other.parent.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "resources" / "icons" / "mama.svg", other)
    run(unpacked, "install.sh", home, path)
    run(unpacked, "uninstall.sh", home, path)
    assert other.is_file() and (hicolor / "icon-theme.cache").is_file()
