"""A smaller ICU data library for the bundle's Qt: the parts Qt reads, without the rest.

PySide6's Qt links ICU (libicuuc, libicui18n) and ICU's whole data package, one
32 MB library (``libicudata.so.NN``) whose only export is the symbol ``icudtNN_dat``:
ICU's "common data" file, a table of contents over about 3,900 items. Qt calls ICU
only for collation (``ucol_*``, e.g. sorting names in a file dialog), text codecs
(``ucnv_*``), locale case mapping (``u_strToUpper``/``u_strToLower``) and time zones
(``ucal_*``). So the bundle keeps the items those read (the locale tables, ``coll/``,
the converters, the normalisation and property files, the time-zone rules) and leaves
out the item folders no ICU function Qt calls opens: word-break dictionaries
(``brkitr/``), display names of units, currencies, languages, regions and time zones
(Qt has its own CLDR tables for QLocale), number spell-out rules and transliterators.
ICU's own ``icupkg --remove`` does the same to a data package; this does it without
ICU's tools: the common data format is a header, a sorted table of (name offset,
data offset) pairs and the items, each self-contained. The filtered data is then
linked into a library of the same name and symbol (``cc -shared`` over a ``.incbin``).

Left out, ICU answers ``U_MISSING_RESOURCE_ERROR`` and Qt falls back: the one Qt
feature that loses something is ``QTimeZone::displayName`` (localized zone names),
which MAMA does not call.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

DROPPED_FOLDERS = ("brkitr", "curr", "lang", "rbnf", "region", "translit", "unit", "zone")
"""Item folders of ICU's data that no ICU function Qt calls reads."""

_MAGIC = b"\xda\x27"
_ALIGN = 16
_PAD = b"\xaa"  # what ICU's own packager pads with


@dataclass(frozen=True)
class Item:
    name: str
    """The item's full name, e.g. ``icudt73l/coll/de.res``."""
    data: bytes


@dataclass(frozen=True)
class CommonData:
    header: bytes
    """The data file's own header (its size, magic, format ``CmnD`` and copyright)."""
    items: list[Item]


def parse_common_data(blob: bytes) -> CommonData:
    """Read ICU's common data format (``CmnD``, offset table of contents)."""
    header_size = struct.unpack_from("<H", blob, 0)[0]
    if blob[2:4] != _MAGIC or blob[12:16] != b"CmnD":
        raise ValueError("not ICU common data (CmnD)")
    toc = header_size
    count = struct.unpack_from("<I", blob, toc)[0]
    entries = [struct.unpack_from("<II", blob, toc + 4 + 8 * i) for i in range(count)]
    items: list[Item] = []
    for index, (name_offset, data_offset) in enumerate(entries):
        end_name = blob.index(b"\0", toc + name_offset)
        name = blob[toc + name_offset : end_name].decode("ascii")
        end = toc + entries[index + 1][1] if index + 1 < count else len(blob)
        items.append(Item(name, blob[toc + data_offset : end]))
    return CommonData(blob[:header_size], items)


def write_common_data(data: CommonData) -> bytes:
    """The common data file holding ``data.items`` (in their given, sorted, order)."""
    count = len(data.items)
    names = b"".join(item.name.encode("ascii") + b"\0" for item in data.items)
    table_size = 4 + 8 * count
    names_end = table_size + len(names)
    offset = names_end + (-names_end % _ALIGN)
    entries: list[tuple[int, int]] = []
    name_offset = table_size
    body = bytearray()
    for item in data.items:
        entries.append((name_offset, offset + len(body)))
        name_offset += len(item.name) + 1
        body += item.data
        body += _PAD * (-len(body) % _ALIGN)
    toc = bytearray(struct.pack("<I", count))
    for entry in entries:
        toc += struct.pack("<II", *entry)
    toc += names
    toc += _PAD * (offset - len(toc))
    return data.header + bytes(toc) + bytes(body)


def without_folders(data: CommonData, folders: tuple[str, ...]) -> CommonData:
    """``data`` without the items under any of ``folders`` (``icudtNNl/<folder>/...``)."""
    kept = [item for item in data.items if item.name.split("/")[1] not in folders]
    return CommonData(data.header, kept)


def _readelf(*args: str) -> str:
    return subprocess.run(
        ["readelf", "-W", *args], capture_output=True, text=True, check=True
    ).stdout


def read_library(library: Path) -> tuple[str, bytes]:
    """(symbol name, common data bytes) of an ICU data library such as libicudata.so.73."""
    symbols = re.findall(
        r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+OBJECT\s+GLOBAL\s+\S+\s+(\d+)\s+(icudt\d+_dat)$",
        _readelf("--dyn-syms", str(library)),
        re.MULTILINE,
    )
    if len(symbols) != 1:
        raise ValueError(f"{library} does not export one icudtNN_dat symbol")
    address, size, section, symbol = symbols[0]
    sections = re.findall(
        r"^\s*\[\s*(\d+)\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s",
        _readelf("-S", str(library)),
        re.MULTILINE,
    )
    section_address, section_offset = next(
        (int(addr, 16), int(off, 16)) for number, addr, off in sections if number == section
    )
    start = int(address, 16) - section_address + section_offset
    length = int(size, 0)
    with library.open("rb") as fh:
        fh.seek(start)
        blob = fh.read(length)
    return symbol, blob


def link_library(blob: bytes, symbol: str, soname: str, out: Path) -> None:
    """Link ``blob`` into a shared library ``out`` exporting it as ``symbol``, as ICU's
    own data library does (read-only data, 16-byte aligned)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "data.bin").write_bytes(blob)
        (folder / "data.S").write_text(
            "\t.section .rodata\n"
            f"\t.balign {_ALIGN}\n"
            f"\t.globl {symbol}\n"
            f"\t.type {symbol}, @object\n"
            f"{symbol}:\n"
            '\t.incbin "data.bin"\n'
            f"\t.size {symbol}, . - {symbol}\n"
            '\t.section .note.GNU-stack,"",@progbits\n',
            "ascii",
        )
        subprocess.run(
            [
                "cc",
                "-shared",
                "-nostdlib",
                f"-Wl,-soname,{soname}",
                "-Wl,-z,noexecstack",
                "-o",
                str(folder / "out.so"),
                "data.S",
            ],
            cwd=folder,
            check=True,
        )
        shutil.copyfile(folder / "out.so", out)


def shrink_icu_data(library: Path, folders: tuple[str, ...] = DROPPED_FOLDERS) -> tuple[int, int]:
    """Replace ``library`` (libicudata.so.NN) by one without ``folders``' items.
    Returns (bytes before, bytes after)."""
    before = library.stat().st_size
    symbol, blob = read_library(library)
    smaller = write_common_data(without_folders(parse_common_data(blob), folders))
    link_library(smaller, symbol, library.name, library.with_name(library.name + ".new"))
    library.with_name(library.name + ".new").replace(library)
    return before, library.stat().st_size


def can_link() -> bool:
    """Whether this machine has the C compiler driver and readelf the step needs."""
    return shutil.which("cc") is not None and shutil.which("readelf") is not None
