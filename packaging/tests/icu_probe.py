"""Call, through ctypes, the ICU functions Qt calls, on the ICU libraries in a folder.

    python icu_probe.py FOLDER    (prints one JSON object)

Run in its own process per folder: the dynamic loader keeps one library per name, so
two ICU data libraries of the same name cannot be compared in one process.
"""

from __future__ import annotations

import ctypes
import json
import re
import sys
from pathlib import Path
from typing import Any

CAPACITY = 256


def _uchars(text: str) -> ctypes.Array[ctypes.c_char]:
    return ctypes.create_string_buffer(text.encode("utf-16-le"), len(text) * 2 + 2)


def _text(buffer: ctypes.Array[ctypes.c_uint16], length: int) -> str:
    return bytes(buffer)[: length * 2].decode("utf-16-le")


def probe(folder: Path) -> dict[str, Any]:
    i18n_path = next(folder.glob("libicui18n.so.*"))
    version = re.sub(r"\D.*", "", i18n_path.name.rsplit(".so.", 1)[1])
    i18n = ctypes.CDLL(str(i18n_path))
    uc = ctypes.CDLL(str(folder / f"libicuuc.so.{version}"))

    def fn(lib: ctypes.CDLL, name: str, restype: Any, *argtypes: Any) -> Any:
        f = getattr(lib, f"{name}_{version}")
        f.restype, f.argtypes = restype, list(argtypes)
        return f

    error_name = fn(uc, "u_errorName", ctypes.c_char_p, ctypes.c_int)
    out: dict[str, Any] = {}

    def status_of(status: ctypes.c_int) -> str:
        return error_name(status.value).decode()

    # Collation (QCollator; a file dialog sorts names with it): Swedish puts ä after z.
    ucol_open = fn(
        i18n, "ucol_open", ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)
    )
    strcoll = fn(
        i18n, "ucol_strcoll", ctypes.c_int,
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
    )  # fmt: skip
    for locale in ("de", "sv"):
        status = ctypes.c_int(0)
        collator = ucol_open(locale.encode(), ctypes.byref(status))
        order = strcoll(collator, _uchars("ä"), 1, _uchars("z"), 1) if collator else None
        out[f"collate_{locale}"] = [status_of(status), order]

    # A text codec (QStringDecoder for an encoding Qt does not implement itself).
    ucnv_open = fn(uc, "ucnv_open", ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int))
    to_uchars = fn(
        uc, "ucnv_toUChars", ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint16),
        ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
    )  # fmt: skip
    status = ctypes.c_int(0)
    converter = ucnv_open(b"Shift_JIS", ctypes.byref(status))
    buffer = (ctypes.c_uint16 * CAPACITY)()
    source = "かな".encode("shift_jis")
    length = 0
    if converter:
        length = to_uchars(converter, buffer, CAPACITY, source, len(source), ctypes.byref(status))
    out["shift_jis"] = [status_of(status), _text(buffer, length)]

    # Locale case mapping (QLocale::toUpper): Turkish dotted capital I.
    to_upper = fn(
        uc, "u_strToUpper", ctypes.c_int, ctypes.POINTER(ctypes.c_uint16), ctypes.c_int,
        ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
    )  # fmt: skip
    status = ctypes.c_int(0)
    length = to_upper(buffer, CAPACITY, _uchars("i"), 1, b"tr", ctypes.byref(status))
    out["upper_tr"] = [status_of(status), _text(buffer, length)]

    # Time zones (QTimeZone): rules, canonical ids and, last, localized names.
    canonical = fn(
        i18n, "ucal_getCanonicalTimeZoneID", ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
        ctypes.POINTER(ctypes.c_uint16), ctypes.c_int, ctypes.POINTER(ctypes.c_byte),
        ctypes.POINTER(ctypes.c_int),
    )  # fmt: skip
    status, system = ctypes.c_int(0), ctypes.c_byte(0)
    zone = "US/Pacific"
    length = canonical(
        _uchars(zone), len(zone), buffer, CAPACITY, ctypes.byref(system), ctypes.byref(status)
    )
    out["canonical_zone"] = [status_of(status), _text(buffer, length)]
    ucal_open = fn(
        i18n, "ucal_open", ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
        ctypes.c_int, ctypes.POINTER(ctypes.c_int),
    )  # fmt: skip
    ucal_get = fn(
        i18n, "ucal_get", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)
    )
    status = ctypes.c_int(0)
    zone = "Europe/Berlin"
    calendar = ucal_open(_uchars(zone), len(zone), b"de", 0, ctypes.byref(status))
    if not calendar:
        out["zone_offset_ms"] = [status_of(status), None]
        return out
    zone_offset = ucal_get(calendar, 15, ctypes.byref(status))  # UCAL_ZONE_OFFSET
    out["zone_offset_ms"] = [status_of(status), zone_offset]
    display = fn(
        i18n, "ucal_getTimeZoneDisplayName", ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint16), ctypes.c_int,
        ctypes.POINTER(ctypes.c_int),
    )  # fmt: skip
    status = ctypes.c_int(0)
    length = display(calendar, 0, b"de", buffer, CAPACITY, ctypes.byref(status))  # UCAL_STANDARD
    out["zone_name_de"] = [status_of(status), _text(buffer, max(length, 0))]
    return out


if __name__ == "__main__":
    print(json.dumps(probe(Path(sys.argv[1])), ensure_ascii=False))
