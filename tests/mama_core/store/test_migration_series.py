"""A migration series of a layer above the core: each file with its version in one
transaction (triggers included), a failure leaves the series at the previous version,
and a migration another process applied is not run again."""

from __future__ import annotations

from pathlib import Path

import pytest

from mama_core.errors import MigrationError
from mama_core.memory import verify_store
from mama_core.store import DbKey, Store
from mama_core.store.expected_schema import schema_problems
from mama_core.store.migrations import MigrationSeries, apply_series, series_version

FIRST = """-- a table; a trigger whose body holds a ';'
CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;
CREATE TRIGGER notes_no_delete BEFORE DELETE ON notes
BEGIN
    SELECT RAISE(ABORT, 'notes are kept; never deleted');
END;
INSERT INTO notes (text) VALUES ('a ; inside a string');
"""
SECOND_FAILS = """CREATE TABLE tags (name TEXT PRIMARY KEY) STRICT;
INSERT INTO no_such_table VALUES (1);
"""


def _series(root: Path, name: str, files: dict[str, str]) -> MigrationSeries:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for file_name, sql in files.items():
        (package / file_name).write_text(sql)
    return MigrationSeries(name, name)


def test_a_series_applies_in_order_and_stops_whole_at_a_failure(
    tmp_path: Path, db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    series = _series(tmp_path, "series_a", {"0001_notes.sql": FIRST, "0002_tags.sql": SECOND_FAILS})
    with Store.open(db_path, db_key) as store:
        with pytest.raises(MigrationError, match="version 2"):
            apply_series(store.conn, series)
        assert series_version(store.conn, series) == 1
        assert store.conn.execute("SELECT text FROM notes").fetchall() == [("a ; inside a string",)]
        with pytest.raises(Exception, match="never deleted"):
            store.conn.execute("DELETE FROM notes")
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_schema")}
        assert "notes" in tables and "tags" not in tables  # 0002 left nothing behind
        assert not store.conn.in_transaction


def test_a_series_up_to_date_applies_nothing(
    tmp_path: Path, db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    series = _series(tmp_path, "series_b", {"0001_notes.sql": FIRST})
    with Store.open(db_path, db_key) as store:
        other = store.new_connection()  # another process's connection
        try:
            assert apply_series(other, series) == [1]
        finally:
            other.close()
        assert apply_series(store.conn, series) == []  # CREATE TABLE notes is not run again
        assert series_version(store.conn, series) == 1
        assert store.conn.execute("SELECT count(*) FROM notes").fetchone() == (1,)


def test_the_schema_check_knows_a_series_only_when_told(
    tmp_path: Path, db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    series = _series(tmp_path, "series_c", {"0001_notes.sql": FIRST})
    with Store.open(db_path, db_key) as store:
        assert schema_problems(store.conn, [series]) == []  # nothing applied yet
        apply_series(store.conn, series)
        assert schema_problems(store.conn, [series]) == []
        # Without the series, its objects are what they are: not made by the core's files.
        assert schema_problems(store.conn) == [
            "the schema has a table notes that the migrations do not make",
            "the schema has a trigger notes_no_delete that the migrations do not make",
        ]
        store.conn.execute("DROP TRIGGER notes_no_delete")
        assert schema_problems(store.conn, [series]) == [
            "the trigger notes_no_delete is missing from the schema (dropped?)"
        ]


def test_verify_expects_the_tables_of_the_series_it_is_given(
    tmp_path: Path, db_path: Path, db_key: DbKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    series = _series(tmp_path, "series_d", {"0001_notes.sql": FIRST})
    with Store.open(db_path, db_key) as store:
        apply_series(store.conn, series)
        report = verify_store(store.conn, store.secret, series=[series])
        assert report.ok, report.problems
        # Control: without the series the same store's new table is an extra object.
        unaware = verify_store(store.conn, store.secret)
        assert "the schema has a table notes that the migrations do not make" in unaware.problems
