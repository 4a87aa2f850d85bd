"""The bundle's smaller ICU data library (packaging/icu_data.py), made from the ICU that
PySide6 installed here: ICU's data format read and written back byte for byte, and the
ICU functions Qt calls answering the same from the smaller library as from the full one,
but for the localized time-zone names it leaves out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import PySide6
import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "packaging"))

import icu_data

QT_LIB = Path(PySide6.__file__).parent / "Qt" / "lib"
PROBE = Path(__file__).with_name("icu_probe.py")


def icu_data_library() -> Path:
    found = sorted(QT_LIB.glob("libicudata.so.*"))
    if not found:
        pytest.skip("this PySide6 has no ICU of its own (not Linux)")
    return found[0]


def probe(folder: Path) -> dict[str, list[object]]:
    """The ICU answers, from a process that loaded only ``folder``'s ICU libraries."""
    result = subprocess.run(
        [sys.executable, str(PROBE), str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)


def test_common_data_is_read_and_written_back_byte_for_byte() -> None:
    symbol, blob = icu_data.read_library(icu_data_library())
    assert symbol.startswith("icudt") and symbol.endswith("_dat")
    parsed = icu_data.parse_common_data(blob)
    assert len(parsed.items) > 1000
    assert icu_data.write_common_data(parsed) == blob
    names = [item.name for item in parsed.items]
    assert names == sorted(names)  # ICU looks items up by binary search


def test_smaller_library_answers_what_qt_asks(tmp_path: Path) -> None:
    library = icu_data_library()
    if not icu_data.can_link():
        pytest.skip("no C compiler driver (cc) to link the smaller library")
    smaller = tmp_path / "lib"
    smaller.mkdir()
    for path in QT_LIB.glob("libicu*.so.*"):
        shutil.copyfile(path, smaller / path.name)
    before, after = icu_data.shrink_icu_data(smaller / library.name)
    assert after < before / 2

    _, blob = icu_data.read_library(smaller / library.name)
    kept = {item.name.split("/")[1] for item in icu_data.parse_common_data(blob).items}
    assert not kept & set(icu_data.DROPPED_FOLDERS)
    assert {"coll"} <= kept

    full, small = probe(QT_LIB), probe(smaller)
    # Collation with a locale's own rules, a CJK codec, Turkish upper case, time-zone
    # rules: the same answers, and real ones (Swedish sorts ä after z, German before).
    for key in ("collate_de", "collate_sv", "shift_jis", "upper_tr", "canonical_zone"):
        assert small[key] == full[key], key
    assert full["collate_sv"][1] == 1 and full["collate_de"][1] == -1
    assert full["shift_jis"][1] == "かな"
    assert full["upper_tr"] == ["U_ZERO_ERROR", "İ"]
    assert full["canonical_zone"] == ["U_ZERO_ERROR", "America/Los_Angeles"]
    assert small["zone_offset_ms"] == full["zone_offset_ms"] == ["U_ZERO_ERROR", 3_600_000]
    # What was left out: the localized zone names, which the full data has.
    assert full["zone_name_de"] == ["U_ZERO_ERROR", "Mitteleuropäische Normalzeit"]
    assert small["zone_name_de"][1] == ""
