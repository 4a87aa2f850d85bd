"""The bundle and a person using it, shared by the bundle's tests and their fixtures."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Bundle:
    folder: Path
    """The unpacked ``mama`` folder (what a person unpacks)."""

    @property
    def program(self) -> Path:
        return self.folder / "mama"


@dataclass
class Person:
    """One person's machine: an empty home folder and the bundle's ``mama``."""

    bundle: Bundle
    home: Path
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.home / ".local" / "share" / "mama"

    def run(
        self,
        *args: str,
        check: bool = True,
        extra: dict[str, str] | None = None,
        timeout: float = 180,
    ) -> subprocess.CompletedProcess[str]:
        """``mama ARGS`` in this person's environment; fails with its output when it fails.

        Standard input is empty, not the test runner's: a command that asks for a secret
        when it has a terminal (``mama connectors add``) must not wait on ``make``'s."""
        result = subprocess.run(
            [str(self.bundle.program), *args],
            env={**self.env, **(extra or {})},
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"mama {' '.join(args)} exited {result.returncode}\n"
                f"stdout: {result.stdout}\nstderr: {result.stderr}"
            )
        return result


def person_env(home: Path) -> dict[str, str]:
    """What a desktop session gives a program: a home folder, a PATH of system folders
    (no virtual environment, no ``mama``) and a UTF-8 locale; no MAMA_* settings."""
    runtime = home.parent / f"{home.name}-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": SYSTEM_PATH,
        "LANG": "C.UTF-8",
        "XDG_RUNTIME_DIR": str(runtime),
    }
    assert shutil.which("mama", path=env["PATH"]) is None, "a mama on the system PATH"
    return env
