"""What the PyInstaller spec (``packaging/mama.spec``) computes before it analyses the app.

Kept out of the spec so it can be read, linted and typed like the rest: the
version and commit baked into the bundle, the default embedding model converted
once at build time (whichever model the app's default settings name), and the
PySide6 modules the app does not use (left out of the bundle).
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.local.build_info import BUILD_INFO_NAME, git_commit  # noqa: E402
from mama_core.embeddings.convert import (  # noqa: E402
    BUNDLED_MODELS_DIR,
    write_bundled_manifest,
)

QT_MODULES_USED = ("QtCore", "QtGui", "QtWidgets", "QtNetwork", "QtDBus")
"""What ui/qt.py imports, plus QtDBus, which Qt's own tray and desktop-theme code
(StatusNotifierItem, the portal) load on Linux."""

GTK_STACK = (
    "libgtk-3.",
    "libgdk-3.",
    "libgdk_pixbuf-2.0.",
    "libatk-1.0.",
    "libatk-bridge-2.0.",
    "libatspi.",
    "libcairo.",
    "libcairo-gobject.",
    "libpango-1.0.",
    "libpangocairo-1.0.",
    "libpangoft2-1.0.",
    "libharfbuzz.",
    "libfribidi.",
    "libthai.",
    "libdatrie.",
    "libgraphite2.",
    "libpixman-1.",
    "libepoxy.",
    "libXcomposite.",
    "libXdamage.",
    "libXi.",
    "libXinerama.",
    "libXrandr.",
    "libXcursor.",
)
"""Libraries only Qt's GTK 3 theme plugin needs (it is left out of the bundle)."""

UNUSED_QT_PLUGIN_FOLDERS = (
    "egldeviceintegrations",  # the eglfs platform (no window system), not bundled
    "generic",  # evdev/tuio input, read only by eglfs and linuxfb
    "networkinformation",  # QNetworkInformation: we use QtNetwork for a local socket only
    "tls",  # QSslSocket: never used, Python makes our HTTPS connections
    "xcbglintegrations",  # OpenGL on X11: the tray and dialogs draw with the raster engine
    "wayland-graphics-integration-client",  # OpenGL/Vulkan buffers on Wayland (shm is built in)
)
"""Folders of Qt plugins the tray app never loads."""

UNUSED_QT_PLUGINS = (
    # Wayland shells other than xdg-shell (desktops all speak xdg-shell).
    "wayland-shell-integration/libfullscreen-shell-v1.so",
    "wayland-shell-integration/libivi-shell.so",
    "wayland-shell-integration/libqt-shell.so",
    "wayland-shell-integration/libwl-shell-plugin.so",
    # Image formats we never read (our icons are SVG and PNG; PNG is built into QtGui).
    "imageformats/libqtiff.so",
    "imageformats/libqwebp.so",
    "imageformats/libqtga.so",
    "imageformats/libqwbmp.so",
)
"""Single Qt plugins the tray app never loads."""

UNUSED_QT_LIBS = (
    "libQt6EglFSDeviceIntegration.",
    "libQt6EglFsKmsSupport.",
    "libQt6OpenGL.",
    "libQt6WlShellIntegration.",
)
"""Qt libraries needed only by the plugins above."""

HOST_LIBS = (
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libX11.so.6",
    "libX11-xcb.so.1",
    "libxcb.so.1",
    "libfontconfig.so.1",
    "libfreetype.so.6",
    "libexpat.so.1",
    "libz.so.1",
    "libuuid.so.1",
    "libcom_err.so.2",
    "libgpg-error.so.0",
    # Not in the excludelist, but the tray cannot work without the desktop's session bus
    # (its icon is a StatusNotifierItem on D-Bus), and a desktop with a bus has its
    # library; bundled, it drags in libsystemd and libgcrypt (1.1 MB compressed).
    "libdbus-1.so.3",
    # GnuTLS, which only libpq's LDAP library (libldap, for ldap:// service lookups) needs:
    # it reads the host's crypto policy and loads the host's PKCS#11 modules through
    # p11-kit, so it must be the host's own; every desktop with glibc >= 2.35 has
    # libgnutls.so.30. Bundled, it and its stack (nettle, gmp, p11-kit, libunistring,
    # libidn2, libtasn1) cost 2.8 MB compressed.
    "libgnutls.so.30",
)
"""Libraries every Linux desktop has and that must match the host's own copies, so they
are taken from the system, not the bundle: the entries of AppImage's excludelist
(pkg2appimage/excludelist, "assumed to be present on the host system") that PyInstaller
would otherwise collect. A bundled older libstdc++ or fontconfig breaks the host's GPU
driver or font configuration; a bundled libX11 can lack symbols the host's libxcb needs.
glibc, which PyInstaller never bundles, sets the oldest system the bundle runs on anyway."""

UNUSED_STDNUM_DATA = (
    "stdnum/oui.dat",
    "stdnum/imsi.dat",
    "stdnum/cn/loc.dat",
    "stdnum/at/postleitzahl.dat",
    "stdnum/eu/nace20.dat",
    "stdnum/eu/nace21.dat",
    "stdnum/nz/banks.dat",
)
"""python-stdnum's largest number databases (MAC vendors, mobile networks, Chinese
regions, Austrian post codes, EU activity codes, New Zealand banks): the secret scan
uses only ``stdnum.luhn`` and ``stdnum.iban`` without its country checks, which read
nothing but ``iban.dat``."""

UNUSED_LLAMA_LIBS = ("libmtmd.so",)
"""llama.cpp's multimodal (image input) library: llama-cpp-python opens it only from its
LLaVA-style chat handlers, which MAMA never uses (embeddings and a text chat model)."""

OTHER_QT_BINDINGS = ("PyQt5", "PyQt6", "PySide2", "shiboken2")
"""Bindings qasync probes for; none may be bundled beside PySide6."""


@dataclass(frozen=True)
class BundleInputs:
    version: str
    commit: str
    staging: Path
    """Holds ``mama_build.json`` and ``models/`` to add to the bundle's data folder."""
    model_id: str
    model_file: Path


def project_version(root: Path = ROOT) -> str:
    """The version in pyproject.toml (the one truth, also for the archive's name)."""
    with (root / "pyproject.toml").open("rb") as fh:
        return str(tomllib.load(fh)["project"]["version"])


def prepare(staging: Path, model_cache: Path) -> BundleInputs:
    """Write the build info and the converted default model into ``staging``."""
    if staging.exists():
        shutil.rmtree(staging)
    models = staging / BUNDLED_MODELS_DIR
    models.mkdir(parents=True)
    version = project_version()
    commit, modified = git_commit(ROOT)
    info = {
        "version": version,
        "commit": commit,
        "modified": modified,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
    }
    (staging / BUILD_INFO_NAME).write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    model_file, model_id = default_model(model_cache)
    shipped = models / model_file.name
    shutil.copyfile(model_file, shipped)
    write_bundled_manifest(models, shipped, model_id)
    return BundleInputs(version, commit, staging, model_id, shipped)


def default_model(model_cache: Path) -> tuple[Path, str]:
    """(GGUF file, model id) of the embedding model a new owner's settings use,
    converted into ``model_cache`` if it is not there yet."""
    from app.local.settings import Settings
    from mama_core.embeddings import load_embedder

    settings = Settings()
    embedder = load_embedder(
        settings.embedding_model_path, model_cache, builtin=settings.embedding_model
    )
    return Path(embedder.model_path), str(embedder.model_id)


def unused_qt_modules() -> list[str]:
    """The PySide6 modules installed here that the app does not use, as import names."""
    import PySide6

    folder = Path(PySide6.__file__).parent
    names = {path.name.split(".", 1)[0] for path in folder.glob("Qt*.*so")}
    names |= {path.name.split(".", 1)[0] for path in folder.glob("Qt*.pyd")}
    return sorted(f"PySide6.{name}" for name in names if name not in QT_MODULES_USED)


def unused_pygments_lexers() -> list[str]:
    """Every Pygments lexer module except the Python one and the name table.

    rich's tracebacks ask for the Python lexer by name; Pygments imports a lexer
    module only when its language is asked for."""
    import pkgutil

    import pygments.lexers

    keep = {"_mapping", "python"}
    return [
        f"pygments.lexers.{module.name}"
        for module in pkgutil.iter_modules(pygments.lexers.__path__)
        if module.name not in keep
    ]


def unused_qt_files(modules: list[str]) -> list[Path]:
    """The venv's files of the left-out modules: their binding and their Qt library."""
    import PySide6

    folder = Path(PySide6.__file__).parent
    files: list[Path] = []
    for module in modules:
        name = module.removeprefix("PySide6.")
        qt_lib = f"lib{name[:2]}6{name[2:]}.so"
        for path in [*folder.glob(f"{name}.*"), *(folder / "Qt" / "lib").glob(f"{qt_lib}*")]:
            if path.is_file() and not path.is_symlink():
                files.append(path)
    return files


def host_library(soname: str, package: str) -> str:
    """The build host's copy of the shared library ``soname`` (from the dynamic loader's
    cache), or a one-line stop naming the Debian ``package`` that provides it."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    cache = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=False).stdout
    # ldconfig's own word for this machine's libraries, e.g. "libpq.so.5 (libc6,x86-64)".
    arch = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine(), "")
    for line in cache.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ", 1)[0] == soname and arch in name and Path(path).is_file():
            return path
    raise SystemExit(f"make bundle needs {soname} on this machine: apt-get install {package}")


def needed_libraries(path: str) -> set[str]:
    """The DT_NEEDED names of one ELF file (empty for anything readelf cannot read)."""
    dynamic = subprocess.run(
        ["readelf", "-d", "-W", path], capture_output=True, text=True, check=False
    ).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))


def orphaned_by(
    binaries: list[tuple[str, str, str]], removed: list[tuple[str, str, str]]
) -> set[str]:
    """Top-level libraries PyInstaller collected only for the ``removed`` entries (e.g.
    libsystemd and libgcrypt for libdbus): needed by something removed, by nothing kept.
    Entries are PyInstaller's ``(dest, source, typecode)``. Repeats until nothing more
    falls away, so a dependency of an orphan goes too."""
    needs = {dest: needed_libraries(source) for dest, source, _ in [*binaries, *removed]}
    kept = {dest for dest, _, _ in binaries}
    gone = {dest for dest, _, _ in removed}
    while True:
        wanted = set().union(*(needs[d] for d in kept))
        freed = {d for d in kept if "/" not in d and d not in wanted} & set().union(
            *(needs[d] for d in gone)
        )
        if not freed:
            return gone - {dest for dest, _, _ in removed}
        kept -= freed
        gone |= freed


def strip_symbols(bundle: Path) -> list[Path]:
    """``strip --strip-unneeded`` every shared library in ``bundle`` that carries a symbol
    table or debug sections, except the libraries auditwheel vendored into a ``*.libs``
    folder: patchelf renamed those, and they come out of ``strip`` unloadable ("ELF load
    command address/offset not page-aligned"; seen with numpy's OpenBLAS), which is why
    the spec does not use PyInstaller's own strip. The extension modules that merely
    point at such a folder by RUNPATH (numpy's) strip cleanly. Returns the stripped files."""
    stripped: list[Path] = []
    for path in sorted(bundle.rglob("*.so*")):
        if path.is_symlink() or not path.is_file():
            continue
        if any(part.endswith(".libs") for part in path.relative_to(bundle).parts):
            continue
        sections = subprocess.run(
            ["readelf", "-S", "-W", str(path)], capture_output=True, text=True, check=False
        ).stdout
        if ".symtab" in sections or ".debug_" in sections:
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)
            stripped.append(path)
    return stripped


def link_duplicates(folder: Path) -> list[Path]:
    """Replace each ``libX.so`` in ``folder`` that is a byte copy of its ``libX.so.N``
    by a relative link to it (llama-cpp-python's wheel ships copies, not links)."""
    linked: list[Path] = []
    for path in sorted(folder.glob("*.so")):
        for versioned in sorted(folder.glob(f"{path.name}.[0-9]*")):
            if not versioned.is_symlink() and versioned.read_bytes() == path.read_bytes():
                path.unlink()
                path.symlink_to(versioned.name)
                linked.append(path)
                break
    return linked
