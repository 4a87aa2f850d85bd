"""The unpacked bundle, used as a person would: the CLI on a new encrypted store (the
search finds a memory by meaning, so the bundled model ran), ``mama mcp`` over stdio,
the tray app in a real tray, the first start's key in a real keyring, and the desktop
entry that install.sh writes and uninstall.sh removes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from bundle_support import Bundle, Person, person_env
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.local.build_info import git_commit
from app.local.keys import KEYRING_SERVICE, keyring_account
from tests.conftest import REPO_ROOT
from tests.ui.conftest import XDisplay, poll
from ui.startup_probe import read_marks

pytestmark = pytest.mark.slow

DOG = "The owner's dog is called Biscuit and loves long walks."
DEPLOY = "Production releases go out only on Tuesday afternoons."


def project_version() -> str:
    import tomllib

    with (REPO_ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]["version"]


def remember_two(person: Person) -> dict[str, int]:
    ids = {}
    for name, text in (("dog", DOG), ("deploy", DEPLOY)):
        out = json.loads(person.run("remember", text, "--kind", "fact", "--json").stdout)
        ids[name] = out["judgment_id"]
    return ids


def first_hit(person: Person, query: str) -> int:
    found = json.loads(person.run("search", query, "--json").stdout)
    return found["results"][0]["id"]


def test_version_names_the_commit_it_was_built_from(person: Person) -> None:
    out = person.run("--version").stdout.strip()
    commit, _ = git_commit(REPO_ROOT)
    assert out.startswith(f"mama {project_version()} (commit {commit}")


def test_help_describes_each_command(person: Person) -> None:
    """The bundle strips the libraries' docstrings (optimize=2) but not ours: click takes
    each command's help from its docstring, so a stripped build lists bare names."""
    commands = person.run("--help").stdout.split("Commands:")[1].strip().splitlines()
    assert len(commands) > 10
    bare = [line.strip() for line in commands if len(line.split()) < 2]
    assert not bare, f"commands without a description: {bare}"
    assert "Remember TEXT as a judgment" in person.run("remember", "--help").stdout


def test_cli_on_a_new_encrypted_store(person: Person) -> None:
    """doctor, remember, search by meaning and verify, all from the bundle's own files."""
    doctor = json.loads(person.run("doctor", "--json").stdout)
    install = doctor["install"]
    assert install["bundle"] is True
    assert Path(install["bundle_folder"]) == person.bundle.folder.resolve()
    # The code ran from the unpacked folder, never from the checkout.
    code = Path(install["code"])
    assert code.is_relative_to(person.bundle.folder.resolve())
    assert not code.is_relative_to(REPO_ROOT.resolve())
    # The model is the bundle's converted one: nothing was converted at first start.
    assert Path(doctor["model"]["path"]).is_relative_to(person.bundle.folder.resolve())
    assert doctor["key_source"] == "MAMA_DB_KEY"
    assert "install: bundle in" in person.run("doctor").stdout

    ids = remember_two(person)
    # Different words, same meaning: each query finds its own memory first.
    assert first_hit(person, "what is the name of my pet") == ids["dog"]
    assert first_hit(person, "which weekday do we ship to customers") == ids["deploy"]
    assert json.loads(person.run("verify", "--json").stdout) == {"ok": True, "problems": []}

    assert (person.data / "mama.db").is_file()
    assert list(person.home.rglob("*.gguf")) == []


def test_mcp_answers_tools_list_over_stdio(person: Person, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(person.bundle.program),
        args=["mcp", "--project", "smoke"],
        env=person.env,
        cwd=person.cwd,
    )
    client_info = types.Implementation(name="bundle-smoke", version="1")

    async def tools() -> set[str]:
        with (tmp_path / "mcp-stderr.txt").open("w") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog),
                client_info=client_info,
                read_timeout_seconds=120,
            ) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

    names = anyio.run(tools)
    assert {"save", "search", "checkpoint_load"} <= names


def test_tray_app_shows_its_icon_and_quits_on_sigterm(person: Person, x_display: XDisplay) -> None:
    ids = remember_two(person)
    probe = person.home.parent / "probe"
    env = {
        **person.env,
        "DISPLAY": x_display.env["DISPLAY"],
        "XDG_RUNTIME_DIR": x_display.env["XDG_RUNTIME_DIR"],
        "MAMA_STARTUP_PROBE": str(probe),
    }
    app = subprocess.Popen(
        [str(person.bundle.program)],
        env=env,
        cwd=person.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def tray_icon() -> tuple[int, int, int, int] | None:
            for window in x_display.windows("mama"):
                x, y, w, h = x_display.geometry(window)
                if 0 < w <= 64 and 0 < h <= 64 and y < 40:
                    return x, y, w, h
            return None

        def started() -> bool:
            if app.poll() is not None:
                raise AssertionError(f"the tray app exited with {app.returncode}")
            return "memory_open" in read_marks(probe)

        poll("the memory to open", started, 180)
        poll("the tray icon", tray_icon, 60)
        tree = x_display.run("xwininfo", "-root", "-tree")
        assert '"mama"' in tree
        x_display.screenshot("bundle-tray.png", (1000, 0, 280, 40))
        app.send_signal(signal.SIGTERM)
        _, err = app.communicate(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, err
    assert json.loads(person.run("verify", "--json").stdout)["ok"] is True
    assert first_hit(person, "what is the name of my pet") == ids["dog"]


def test_first_start_keeps_a_new_key_in_the_keyring(
    bundle: Bundle, tmp_path: Path, secret_service: dict[str, str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    env = {
        **person_env(home),
        "DBUS_SESSION_BUS_ADDRESS": secret_service["DBUS_SESSION_BUS_ADDRESS"],
        "MAMA_HOME": str(tmp_path / "data"),
    }
    person = Person(bundle, home, cwd, env)
    db = tmp_path / "data" / "mama.db"

    def stored_key() -> str | None:
        # Read back with keyring from the test's own Python, on the same session bus.
        code = (
            "import keyring, sys; "
            f"print(keyring.get_password({KEYRING_SERVICE!r}, {keyring_account(db)!r}) or '')"
        )
        result = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, **secret_service},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return result.stdout.strip() or None

    assert stored_key() is None
    person.run("remember", DEPLOY, "--kind", "fact")
    key = stored_key()
    assert key is not None and len(key) == 64
    # The next start opens the store with the keyring's key.
    doctor = json.loads(person.run("doctor", "--json").stdout)
    assert doctor["key_source"].startswith("keyring")
    assert json.loads(person.run("verify", "--json").stdout)["ok"] is True


def test_install_and_uninstall_a_desktop_entry(person: Person) -> None:
    autostart = person.home / ".config" / "autostart" / "mama.desktop"
    autostart.parent.mkdir(parents=True)
    autostart.write_text("[Desktop Entry]\nType=Application\nExec=/old/place/mama\n", "utf-8")
    remember_two(person)  # some data, which uninstall must leave alone

    run = subprocess.run(
        [str(person.bundle.folder / "install.sh")],
        env=person.env,
        cwd=person.cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    entry = person.home / ".local" / "share" / "applications" / "mama.desktop"
    icon = person.home / ".local" / "share" / "icons" / "hicolor" / "scalable" / "apps" / "mama.svg"
    link = person.home / ".local" / "bin" / "mama"
    program = person.bundle.program.resolve()
    assert f'Exec="{program}"' in entry.read_text("utf-8").splitlines(), run.stdout
    assert "Icon=mama" in entry.read_text("utf-8").splitlines()
    assert icon.is_file()
    assert link.resolve() == program
    assert f'Exec="{program}"' in autostart.read_text("utf-8").splitlines()

    subprocess.run(
        [str(person.bundle.folder / "uninstall.sh")],
        env=person.env,
        cwd=person.cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert not entry.exists() and not icon.exists() and not link.exists()
    assert not autostart.exists()
    assert (person.data / "mama.db").is_file()
    assert json.loads(person.run("verify", "--json").stdout)["ok"] is True
