"""Build llama-cpp-python once per machine and install that wheel into every checkout.

llama-cpp-python is published as source only: installing it compiles llama.cpp,
about 7 minutes on 2 cores. uv keeps what it built in its cache, but several
checkouts sharing that cache each compiled it again, one after another (uv
re-validated the source and made a new cache revision every time; see
PLATFORM.md). So ``make setup`` leaves this one package to us: uv installs
everything else from the lock (``--no-install-package llama-cpp-python``) and this
script installs the wheel kept in a folder every checkout on the machine finds,
building it first only when no checkout has built that version with these flags.

    llama_wheel.py ensure --uv .tools/bin/uv --venv .venv   # what make setup runs
    llama_wheel.py plan                                    # says what ensure would do

The wheel is keyed by what decides its bytes: the version and source hash pinned in
``uv.lock``, the machine and its CPU features (llama.cpp builds with
``-march=native``: a wheel from another CPU may not run here) and the build
settings from the environment (``CMAKE_ARGS``, ``FORCE_CMAKE``). The source is
downloaded from the lock's own URL and checked against its hash. Two checkouts
setting up at once take a lock: the second waits and then installs the first one's
wheel. Only the standard library is used: this runs before the project's
environment exists.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

PACKAGE = "llama-cpp-python"
BUILD_SETTINGS = ("CMAKE_ARGS", "FORCE_CMAKE")


@dataclass(frozen=True)
class Pinned:
    version: str
    url: str
    sha256: str


def pinned(lock: Path) -> Pinned:
    """The version and source archive ``uv.lock`` pins for llama-cpp-python."""
    data = tomllib.loads(lock.read_text("utf-8"))
    for package in data.get("package", []):
        if package.get("name") == PACKAGE:
            sdist = package["sdist"]
            algorithm, _, digest = str(sdist["hash"]).partition(":")
            if algorithm != "sha256":
                raise SystemExit(f"uv.lock pins {PACKAGE} with a {algorithm} hash; expected sha256")
            return Pinned(str(package["version"]), str(sdist["url"]), digest)
    raise SystemExit(f"uv.lock does not pin {PACKAGE}")


def cpu_features() -> str:
    """The CPU's feature flags (what ``-march=native`` compiles for)."""
    try:
        for line in Path("/proc/cpuinfo").read_text("utf-8", "replace").splitlines():
            if line.startswith(("flags", "Features")):
                return " ".join(sorted(line.partition(":")[2].split()))
    except OSError:
        pass
    return platform.processor()


def build_key(pin: Pinned) -> str:
    parts = [
        pin.version,
        pin.sha256,
        platform.system(),
        platform.machine(),
        cpu_features(),
        *(f"{name}={os.environ.get(name, '')}" for name in BUILD_SETTINGS),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def wheel_home() -> Path:
    """Where built wheels are kept for every checkout of this user on this machine."""
    override = os.environ.get("MAMA_WHEEL_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mama" / "wheels"


def kept_wheel(folder: Path) -> Path | None:
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    return wheels[0] if wheels else None


def installed_version(venv: Path) -> str | None:
    found = sorted(venv.glob("lib/python*/site-packages/llama_cpp_python-*.dist-info"))
    if not found:
        return None
    return found[0].name.removeprefix("llama_cpp_python-").removesuffix(".dist-info")


def download(pin: Pinned, into: Path) -> Path:
    target = into / pin.url.rsplit("/", 1)[-1]
    digest = hashlib.sha256()
    with urllib.request.urlopen(pin.url, timeout=300) as response, target.open("wb") as out:
        while chunk := response.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != pin.sha256:
        raise SystemExit(
            f"The downloaded {PACKAGE} {pin.version} source does not match uv.lock's hash; "
            "nothing was built. Try again, or check the network."
        )
    return target


def build(uv: Path, pin: Pinned, folder: Path) -> Path:
    """Compile the wheel into ``folder`` (atomically: a half-built wheel is never kept)."""
    print(
        f"Building llama.cpp for this machine, about 7 minutes, once "
        f"(kept in {folder} for every checkout).",
        flush=True,
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".build-") as scratch:
        work = Path(scratch)
        sdist = download(pin, work)
        out = work / "wheel"
        subprocess.run(
            [str(uv), "build", "--wheel", "--quiet", "--out-dir", str(out), str(sdist)],
            check=True,
        )
        built = kept_wheel(out)
        if built is None:
            raise SystemExit(f"Building {PACKAGE} {pin.version} produced no wheel.")
        staged = work / "kept"
        staged.mkdir()
        shutil.move(built, staged / built.name)
        staged.rename(folder)
    wheel = kept_wheel(folder)
    assert wheel is not None
    return wheel


def install(uv: Path, venv: Path, wheel: Path) -> None:
    subprocess.run(
        [str(uv), "pip", "install", "--quiet", "--no-deps", "--python", str(venv), str(wheel)],
        check=True,
    )


def ensure(uv: Path, venv: Path, lock: Path) -> int:
    pin = pinned(lock)
    if installed_version(venv) == pin.version:
        return 0
    home = wheel_home()
    folder = home / f"{pin.version}-{build_key(pin)}"
    home.mkdir(parents=True, exist_ok=True)
    with (home / ".lock").open("w") as held:
        wheel = kept_wheel(folder)
        if wheel is None:
            if not _locked_at_once(held):
                print(f"Another checkout is building {PACKAGE}; waiting for it…", flush=True)
                fcntl.flock(held, fcntl.LOCK_EX)
            wheel = kept_wheel(folder) or build(uv, pin, folder)
    install(uv, venv, wheel)
    return 0


def _locked_at_once(held: TextIO) -> bool:
    """Take the build lock if no other checkout holds it (False: another one builds)."""
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def plan(lock: Path) -> int:
    pin = pinned(lock)
    folder = wheel_home() / f"{pin.version}-{build_key(pin)}"
    wheel = kept_wheel(folder)
    print(f"cached {wheel}" if wheel else f"build {folder}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("ensure", "plan"))
    parser.add_argument("--uv", type=Path, default=Path(".tools/bin/uv"))
    parser.add_argument("--venv", type=Path, default=Path(".venv"))
    parser.add_argument("--lock", type=Path, default=Path("uv.lock"))
    args = parser.parse_args(argv)
    try:
        if args.action == "plan":
            return plan(args.lock)
        return ensure(args.uv, args.venv, args.lock)
    except subprocess.CalledProcessError as exc:
        print(f"{PACKAGE} could not be built or installed (exit {exc.returncode}).")
        return 1
    except OSError as exc:
        print(f"{PACKAGE}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
