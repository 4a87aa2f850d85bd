"""Which MAMA this is: its version, the commit it was built from, and where it runs from.

A PyInstaller bundle carries ``mama_build.json`` (written at build time: version,
commit, whether the tree had changes); a checkout asks ``git`` for its commit when
someone asks for it (``mama --version``, ``mama doctor``), never on every start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

BUILD_INFO_NAME = "mama_build.json"
UNKNOWN = "unknown"
CODE_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class BuildInfo:
    """The version, the commit, and the folder the code was loaded from."""

    version: str
    commit: str
    modified: bool
    bundle: Path | None
    """The unpacked bundle's folder (the one holding the ``mama`` program), or None."""
    code: Path
    """Where the ``app`` package was loaded from (inside the bundle, or the checkout)."""

    def version_line(self) -> str:
        """``mama 0.1.0 (commit 1a2b3c4d5e6f)``, the answer to ``mama --version``."""
        changed = ", with local changes" if self.modified else ""
        return f"mama {self.version} (commit {self.commit}{changed})"

    def describe(self) -> str:
        """One line for ``mama doctor``: a bundle or a checkout, and where."""
        changed = ", with local changes" if self.modified else ""
        where = (
            f"bundle in {self.bundle}"
            if self.bundle is not None
            else f"not a bundle (code in {self.code})"
        )
        return f"install: {where}; version {self.version}, commit {self.commit}{changed}"

    def as_fact(self) -> dict[str, object]:
        return {
            "bundle": self.bundle is not None,
            "bundle_folder": str(self.bundle) if self.bundle is not None else None,
            "code": str(self.code),
            "version": self.version,
            "commit": self.commit,
            "modified": self.modified,
        }


def bundle_data_dir() -> Path | None:
    """PyInstaller's folder of bundled files (``sys._MEIPASS``) when frozen, else None."""
    root = getattr(sys, "_MEIPASS", None)
    return Path(root) if root else None


def this_build() -> BuildInfo:
    """Which MAMA this process is: from the bundle's build file, or from git and metadata."""
    data = bundle_data_dir()
    if data is not None:
        info = _read_build_info(data / BUILD_INFO_NAME)
        return BuildInfo(
            version=str(info.get("version") or UNKNOWN),
            commit=str(info.get("commit") or UNKNOWN),
            modified=bool(info.get("modified")),
            bundle=Path(sys.executable).resolve().parent,
            code=CODE_ROOT,
        )
    commit, modified = git_commit(CODE_ROOT)
    try:
        version = metadata.version("mama")
    except metadata.PackageNotFoundError:
        version = UNKNOWN
    return BuildInfo(version, commit, modified, None, CODE_ROOT)


def git_commit(folder: Path) -> tuple[str, bool]:
    """(short commit, whether tracked files changed) of the git checkout at ``folder``;
    ``("unknown", False)`` when it is not one or git is missing."""
    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN, False
    return head or UNKNOWN, bool(status)


def _read_build_info(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
