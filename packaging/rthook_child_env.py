"""PyInstaller runtime hook: give the programs MAMA starts (claude, codex, git) the
person's own library path, not the bundle's.

The bootloader points ``LD_LIBRARY_PATH`` at the bundle and keeps the original in
``LD_LIBRARY_PATH_ORIG``. This process has already read it (the dynamic loader reads
it once, at start), so restoring it changes only what child processes inherit: a
system program must not load the bundle's copies of OpenSSL, zlib or libstdc++.
"""

from __future__ import annotations

import os
import sys

_BUNDLE = getattr(sys, "_MEIPASS", "")

for _name in ("LD_LIBRARY_PATH", "LIBPATH"):
    _original = os.environ.pop(f"{_name}_ORIG", None)
    if _original is not None:
        os.environ[_name] = _original
    elif _BUNDLE and os.environ.get(_name, "").split(os.pathsep)[0] == _BUNDLE:
        del os.environ[_name]
