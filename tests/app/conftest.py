"""A private Secret Service (D-Bus session bus + gnome-keyring) for key tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def secret_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Start dbus-daemon and an unlocked gnome-keyring; yield the env to use."""
    missing = [t for t in ("dbus-daemon", "gnome-keyring-daemon") if not shutil.which(t)]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install {missing} (see .ci/run)")
        pytest.skip(f"no {missing} here (CI installs them)")
    home = tmp_path_factory.mktemp("keyring-home")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_RUNTIME_DIR": str(home / "run"),
    }
    (home / "run").mkdir(mode=0o700)
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().strip()
    env["DBUS_SESSION_BUS_ADDRESS"] = address
    started = subprocess.run(
        ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
        input="test-login-password",
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    for line in started.stdout.splitlines():
        name, _, value = line.partition("=")
        if value:
            env[name] = value
    try:
        yield {
            k: env[k]
            for k in ("DBUS_SESSION_BUS_ADDRESS", "HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR")
        }
    finally:
        subprocess.run(["pkill", "-f", f"gnome-keyring-daemon.*{Path(home).name}"], check=False)
        bus.terminate()
        bus.wait(timeout=10)
        bus.stdout.close()
