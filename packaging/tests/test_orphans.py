"""``bundle_inputs.orphaned_by``: what PyInstaller collected only for a library the spec
then leaves out goes with it, and nothing another bundled file needs. Real ELF files of
this machine (D-Bus's library, which pulls in libsystemd and libgcrypt)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bundle_inputs

SYSTEM = Path("/lib/x86_64-linux-gnu")
NAMES = ("libdbus-1.so.3", "libsystemd.so.0", "libgcrypt.so.20", "libzstd.so.1")

pytestmark = pytest.mark.skipif(
    not all((SYSTEM / name).exists() for name in NAMES), reason="needs Debian's libdbus"
)


def entry(name: str) -> tuple[str, str, str]:
    return (name, str(SYSTEM / name), "BINARY")


def qt_core() -> tuple[str, str, str]:
    """Qt's core library as the bundle holds it (in a subfolder); it needs libzstd."""
    import PySide6

    path = Path(PySide6.__file__).parent / "Qt" / "lib" / "libQt6Core.so.6"
    assert "libzstd.so.1" in bundle_inputs.needed_libraries(str(path))
    return ("PySide6/Qt/lib/libQt6Core.so.6", str(path), "BINARY")


def test_what_only_a_left_out_library_needed_goes_with_it() -> None:
    kept = [entry("libsystemd.so.0"), entry("libgcrypt.so.20"), entry("libzstd.so.1")]
    kept.append(qt_core())
    orphans = bundle_inputs.orphaned_by(kept, [entry("libdbus-1.so.3")])
    # libsystemd only for libdbus, libgcrypt only for libsystemd (followed to the end);
    # libzstd stays: Qt needs it.
    assert orphans == {"libsystemd.so.0", "libgcrypt.so.20"}


def test_nothing_goes_while_the_library_stays() -> None:
    kept = [entry("libdbus-1.so.3"), entry("libsystemd.so.0"), entry("libgcrypt.so.20")]
    assert bundle_inputs.orphaned_by(kept, []) == set()
