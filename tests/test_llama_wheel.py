"""packaging/llama_wheel.py, which ``make setup`` runs: a second checkout installs the
llama-cpp-python wheel the first one built on this machine instead of compiling
llama.cpp again, and a wheel built with other settings is never taken for it.

The lock given to the script names a source on 127.0.0.1's closed port 9, so an
implementation that wrongly decides to build fails at once instead of reaching
the internet (tests never do)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "packaging" / "llama_wheel.py"
UV = REPO_ROOT / ".tools" / "bin" / "uv"
VERSION = "0.3.36"


def fake_lock(path: Path) -> Path:
    path.write_text(
        "version = 1\n\n[[package]]\n"
        f'name = "llama-cpp-python"\nversion = "{VERSION}"\n'
        'sdist = { url = "http://127.0.0.1:9/llama_cpp_python-0.3.36.tar.gz", '
        f'hash = "sha256:{"0" * 64}" }}\n',
        "utf-8",
    )
    return path


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def tiny_wheel(folder: Path) -> Path:
    """A valid wheel named as llama-cpp-python's, holding one marker module."""
    folder.mkdir(parents=True)
    wheel = folder / f"llama_cpp_python-{VERSION}-py3-none-any.whl"
    dist = f"llama_cpp_python-{VERSION}.dist-info"
    files = {
        "llama_cpp_marker.py": "BUILT_ONCE = True\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: {VERSION}\n",
        f"{dist}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            data = text.encode()
            archive.writestr(name, data)
            digest = hashlib.sha256(data).hexdigest()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"{dist}/RECORD,,")
        archive.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return wheel


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if k not in ("CMAKE_ARGS", "FORCE_CMAKE")}
    values["MAMA_WHEEL_CACHE"] = str(tmp_path / "wheels")
    return values


def test_an_empty_cache_plans_a_build_and_a_kept_wheel_is_used(
    tmp_path: Path, env: dict[str, str]
) -> None:
    lock = fake_lock(tmp_path / "uv.lock")
    first = run("plan", "--lock", str(lock), env=env)
    assert first.returncode == 0, first.stderr
    verb, _, folder = first.stdout.strip().partition(" ")
    assert verb == "build"
    assert Path(folder).parent == tmp_path / "wheels"
    assert Path(folder).name.startswith(f"{VERSION}-")

    wheel = tiny_wheel(Path(folder))
    second = run("plan", "--lock", str(lock), env=env)
    assert second.stdout.strip() == f"cached {wheel}"

    # other build settings make another wheel: the kept one is not taken for it
    other = run("plan", "--lock", str(lock), env={**env, "CMAKE_ARGS": "-DGGML_BLAS=ON"})
    assert other.stdout.startswith("build "), other.stdout
    assert other.stdout.strip() != f"build {folder}"


@pytest.mark.slow
def test_a_second_checkout_installs_the_kept_wheel_without_building(
    tmp_path: Path, env: dict[str, str]
) -> None:
    if not UV.exists():
        pytest.skip("uv is installed by make setup")
    lock = fake_lock(tmp_path / "uv.lock")
    planned = run("plan", "--lock", str(lock), env=env).stdout.strip().partition(" ")[2]
    tiny_wheel(Path(planned))
    venv = tmp_path / "venv"
    subprocess.run([str(UV), "venv", "--quiet", str(venv)], check=True, env=env, timeout=120)

    done = run("ensure", "--uv", str(UV), "--venv", str(venv), "--lock", str(lock), env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Building llama.cpp" not in done.stdout
    marker = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import llama_cpp_marker as m; print(m.BUILT_ONCE)"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert marker.stdout.strip() == "True", marker.stderr


def test_a_lock_without_the_package_is_one_clear_line(tmp_path: Path, env: dict[str, str]) -> None:
    lock = tmp_path / "uv.lock"
    lock.write_text('version = 1\n\n[[package]]\nname = "numpy"\nversion = "2.0"\n', "utf-8")
    done = run("plan", "--lock", str(lock), env=env)
    assert done.returncode != 0
    assert "uv.lock does not pin llama-cpp-python" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
