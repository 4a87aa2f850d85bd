"""What ``make bundle`` built: sizes, the Qt modules left out, and any library the
bundle would take from the system that it should have carried.

    python packaging/bundle_report.py dist/mama dist/mama-<version>-linux-x86_64.tar.gz

Exits 1 when a bundled binary needs a library that is neither in the bundle nor one
the system always provides (glibc, the GPU driver's libGL, X11, libstdc++, fontconfig:
``SYSTEM_LIBS``), since the
bundle would then start on this machine and fail on a person's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bundle_inputs

SYSTEM_LIBS = (
    "linux-vdso",
    "ld-linux",
    "libc.so",
    "libm.so",
    "libdl.so",
    "libpthread.so",
    "librt.so",
    "libutil.so",
    "libresolv.so",
    "libGL",
    "libEGL",
    "libGLX",
    "libGLdispatch",
    "libOpenGL",
    "libdrm",
    "libgbm",
    "libxcb.so",
    "libwayland-",
    *bundle_inputs.HOST_LIBS,
)
"""Libraries left to the system: what PyInstaller leaves there (they must match its
drivers) and the base libraries of ``bundle_inputs.HOST_LIBS``."""


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def outside_libraries(bundle: Path) -> dict[str, set[str]]:
    """{library resolved outside the bundle: the bundled binaries that need it}."""
    internal = bundle / "_internal"
    env = {**os.environ, "LD_LIBRARY_PATH": str(internal)}
    found: dict[str, set[str]] = {}
    for path in sorted(bundle.rglob("*.so*")):
        if not path.is_file() or path.is_symlink():
            continue
        result = subprocess.run(
            ["ldd", str(path)], env=env, capture_output=True, text=True, check=False
        )
        # Only the file's own dependencies: what a system library needs in turn (the
        # host's libdbus its libsystemd) is the system's, as the library itself is.
        direct = bundle_inputs.needed_libraries(str(path))
        for line in result.stdout.splitlines():
            name, _, where = line.strip().partition(" => ")
            where = where.split(" (", 1)[0].strip()
            if not where or name not in direct or name.startswith(SYSTEM_LIBS):
                continue
            if where == "not found" or not where.startswith(str(bundle)):
                rpath_ok = (path.parent / name).exists() or (internal / name).exists()
                if not rpath_ok:
                    found.setdefault(f"{name} ({where})", set()).add(path.name)
    return found


def host_versions(bundle: Path) -> dict[str, str]:
    """The newest glibc and libstdc++ symbol versions the bundle's files ask for: the
    oldest host it runs on (both come from the host; see ``bundle_inputs.HOST_LIBS``)."""
    newest: dict[str, tuple[int, ...]] = {}
    for path in sorted(bundle.rglob("*")):
        if (
            not path.is_file()
            or path.is_symlink()
            or not (".so" in path.name or path.name == "mama")
        ):
            continue
        symbols = subprocess.run(
            ["objdump", "-T", str(path)], capture_output=True, text=True, check=False
        ).stdout
        for family, version in re.findall(r"\b(GLIBC|GLIBCXX)_(\d+(?:\.\d+)+)\b", symbols):
            parts = tuple(int(p) for p in version.split("."))
            newest[family] = max(newest.get(family, parts), parts)
    return {family: ".".join(map(str, v)) for family, v in newest.items()}


def main(argv: list[str]) -> int:
    bundle, archive = Path(argv[0]), Path(argv[1])
    print(f"bundle: {bundle} {folder_size(bundle) / 1e6:.1f} MB unpacked")
    print(f"archive: {archive} {archive.stat().st_size / 1e6:.1f} MB")
    left_out = bundle_inputs.unused_qt_modules()
    bundled = {p.name.split(".", 1)[0] for p in (bundle / "_internal" / "PySide6").glob("Qt*")}
    names = [m.removeprefix("PySide6.") for m in left_out]
    assert not bundled & set(names), f"left-out Qt modules were bundled: {bundled & set(names)}"
    present = {p.name for p in bundle.rglob("*")}
    saved = [p for p in bundle_inputs.unused_qt_files(left_out) if p.name not in present]
    print(
        f"Qt modules bundled: {', '.join(sorted(bundled))}; left out ({len(names)}): "
        f"{', '.join(names)}; their bindings and Qt libraries not in the bundle: "
        f"{sum(p.stat().st_size for p in saved) / 1e6:.0f} MB"
    )
    versions = host_versions(bundle)
    print(
        f"needs from the host: glibc >= {versions.get('GLIBC', '?')}, "
        f"libstdc++ with GLIBCXX_{versions.get('GLIBCXX', '?')}"
    )
    outside = outside_libraries(bundle)
    for lib, users in sorted(outside.items()):
        print(f"NEEDS FROM THE SYSTEM: {lib}, for {', '.join(sorted(users))}")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
