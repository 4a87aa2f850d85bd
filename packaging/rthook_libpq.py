"""PyInstaller runtime hook: psycopg loads the bundle's own libpq.

The bundle carries psycopg's pure-Python layer and the build host's ``libpq.so.5`` (not
psycopg_binary's private build: see the spec). psycopg finds libpq with
``ctypes.util.find_library("pq")``, which on Linux asks the system, not the bundle; a
system libpq may want a newer OpenSSL than the one this process has already loaded. So
for ``pq`` only, the answer is the bundle's copy.
"""

from __future__ import annotations

import ctypes.util
import os
import sys

_LIBPQ = os.path.join(getattr(sys, "_MEIPASS", ""), "libpq.so.5")

if sys.platform.startswith("linux") and os.path.isfile(_LIBPQ):
    _system_find_library = ctypes.util.find_library

    def _find_library(name: str) -> str | None:
        return _LIBPQ if name == "pq" else _system_find_library(name)

    ctypes.util.find_library = _find_library
