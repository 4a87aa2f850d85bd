"""The system libraries Qt needs on Linux, checked before Qt is loaded.

PySide6's wheels bring Qt itself but not the X11, OpenGL, font and D-Bus
libraries it links to. When one is missing Qt aborts with a screen of
"could not load the Qt platform plugin xcb" (or Python with an ImportError),
which names neither the library nor the package. ``missing_libraries`` tries
to load each one the way Qt will (``dlopen`` by its soname, so
``LD_LIBRARY_PATH`` counts too) and ``advice`` turns what is missing into one
line with the install command for this system. No Qt here.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Library:
    """A shared library by soname, and the package that has it on each family."""

    soname: str
    debian: str
    fedora: str


CORE: tuple[Library, ...] = (
    Library("libGL.so.1", "libgl1", "libglvnd-glx"),
    Library("libEGL.so.1", "libegl1", "libglvnd-egl"),
    Library("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    Library("libfontconfig.so.1", "libfontconfig1", "fontconfig"),
    Library("libfreetype.so.6", "libfreetype6", "freetype"),
    Library("libglib-2.0.so.0", "libglib2.0-0", "glib2"),
    Library("libgthread-2.0.so.0", "libglib2.0-0", "glib2"),
    Library("libdbus-1.so.3", "libdbus-1-3", "dbus-libs"),
    Library("libX11.so.6", "libx11-6", "libX11"),
    Library("libxcb.so.1", "libxcb1", "libxcb"),
)
"""What QtGui and QtWidgets link to, whatever the platform plugin."""

XCB: tuple[Library, ...] = (
    Library("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    Library("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    Library("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    Library("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    Library("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    Library("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    Library("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    Library("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    Library("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    Library("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    Library("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    Library("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    Library("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    Library("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    Library("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
)
"""What Qt's X11 platform plugin (xcb) links to besides those."""

MISSING_LIBRARY_EXIT = 3


def platform_plugin(environ: dict[str, str] | None = None) -> str:
    """The platform plugin Qt will load first: QT_QPA_PLATFORM's first choice, else xcb
    on an X11 session (a Wayland session may use Qt's wayland plugin)."""
    env = os.environ if environ is None else environ
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(";")[0].split(":")[0].strip()
    if env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"):
        return "wayland"
    return "xcb"


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libraries(plugin: str | None = None) -> list[Library]:
    """The libraries Qt needs for ``plugin`` that cannot be loaded here (Linux only)."""
    if not sys.platform.startswith("linux"):
        return []
    wanted = CORE + (XCB if (plugin or platform_plugin()) == "xcb" else ())
    return [lib for lib in wanted if not _loads(lib.soname)]


def startup_problem() -> str | None:
    """The one line to print instead of starting Qt, or None when Qt can start.

    With no display at all, ``ui.application`` says that instead (a server over SSH
    needs a display before it needs libraries)."""
    if not sys.platform.startswith("linux"):
        return None
    if not any(os.environ.get(n) for n in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        return None
    missing = missing_libraries()
    return advice(missing) if missing else None


def _family(os_release: Path) -> str:
    """ "debian", "fedora" or "" (unknown), from /etc/os-release's ID and ID_LIKE."""
    try:
        text = os_release.read_text("utf-8")
    except OSError:
        return ""
    ids: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key in ("ID", "ID_LIKE"):
            ids.update(value.strip().strip('"').split())
    if ids & {"debian", "ubuntu"}:
        return "debian"
    if ids & {"fedora", "rhel", "centos"}:
        return "fedora"
    return ""


def advice(missing: list[Library], os_release: Path = Path("/etc/os-release")) -> str:
    """One line: what is missing and the command that installs it on this system."""
    names = ", ".join(lib.soname for lib in missing)
    debian = " ".join(dict.fromkeys(lib.debian for lib in missing))
    fedora = " ".join(dict.fromkeys(lib.fedora for lib in missing))
    family = _family(os_release)
    if family == "debian":
        how = f"sudo apt-get install {debian}"
    elif family == "fedora":
        how = f"sudo dnf install {fedora}"
    else:
        how = (
            f"on Debian/Ubuntu: sudo apt-get install {debian}; on Fedora: sudo dnf install {fedora}"
        )
    one = len(missing) == 1
    return (
        f"mama: missing_library: the desktop app needs {names}, which "
        f"{'is' if one else 'are'} not installed; install {'it' if one else 'them'} with: {how}"
    )
