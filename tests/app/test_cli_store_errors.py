"""`mama doctor` on a fresh home, and each store refusal as a person sees it:
one line naming the problem, a distinct exit code, the file unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mama_core.errors import (
    DiskFullError,
    NewerSchemaError,
    NotADatabaseError,
    ReadOnlyError,
    StoreLockedError,
    WrongKeyError,
)
from mama_core.store import DbKey, Store, latest_version
from tests.conftest import TEST_KEY_HEX, file_digest

MAMA = Path(sys.executable).parent / "mama"


def run_mama(
    home: Path,
    *args: str,
    key: str = TEST_KEY_HEX,
    cache: Path,
    wrapper: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(MAMA_HOME=str(home), MAMA_DB_KEY=key, MAMA_CACHE_DIR=str(cache))
    command = [*(wrapper or []), str(MAMA), *args]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=300
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"mama: {code}: "), lines[0]
    assert "Traceback" not in result.stderr
    assert TEST_KEY_HEX not in result.stderr + result.stdout


@pytest.fixture
def home(tmp_path: Path, model_cache_dir: Path) -> Path:
    path = tmp_path / "home"
    result = run_mama(path, "doctor", cache=model_cache_dir)
    assert result.returncode == 0, result.stderr
    return path


def test_doctor_on_a_new_home(home: Path, model_cache_dir: Path) -> None:
    db = home / "mama.db"
    assert db.read_bytes()[:16] != b"SQLite format 3\x00"
    result = run_mama(home, "doctor", cache=model_cache_dir)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "key: from MAMA_DB_KEY" in out
    assert f"schema {latest_version()} of {latest_version()}" in out
    assert "dimension 384" in out
    assert "embed probe:" in out
    assert "agent: command; runtime not running" in out
    assert TEST_KEY_HEX not in out


def test_other_key_is_refused(home: Path, model_cache_dir: Path) -> None:
    db = home / "mama.db"
    before = file_digest(db)
    result = run_mama(home, "doctor", key="some other key", cache=model_cache_dir)
    assert result.returncode == WrongKeyError.exit_code
    assert_one_line_error(result, "wrong_key")
    assert "key" in result.stderr.split(":", 2)[2]
    assert "some other key" not in result.stderr
    assert file_digest(db) == before


def test_not_a_database(tmp_path: Path, model_cache_dir: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mama.db").write_text("my shopping list\n")
    result = run_mama(home, "doctor", cache=model_cache_dir)
    assert result.returncode == NotADatabaseError.exit_code
    assert_one_line_error(result, "not_a_database")
    assert (home / "mama.db").read_text() == "my shopping list\n"


def test_newer_schema(home: Path, model_cache_dir: Path) -> None:
    db = home / "mama.db"
    with Store.open(db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        store.conn.execute(f"PRAGMA user_version = {latest_version() + 1}")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = file_digest(db)
    result = run_mama(home, "doctor", cache=model_cache_dir)
    assert result.returncode == NewerSchemaError.exit_code
    assert_one_line_error(result, "newer_schema")
    assert "update MAMA" in result.stderr
    assert file_digest(db) == before


def test_a_writer_holding_the_lock_does_not_stop_reads(home: Path, model_cache_dir: Path) -> None:
    """Another process in BEGIN IMMEDIATE: search and show still answer (WAL
    readers); a write waits out the busy timeout and says the store is in use."""
    saved = run_mama(
        home,
        "remember",
        "Walnuts fall in October",
        "--kind",
        "fact",
        "--json",
        cache=model_cache_dir,
    )
    assert saved.returncode == 0, saved.stderr
    db = home / "mama.db"
    pragma = "PRAGMA key = " + DbKey.from_secret(TEST_KEY_HEX).pragma_value()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, sqlcipher3
                conn = sqlcipher3.connect({str(db)!r}, isolation_level=None)
                conn.execute({pragma!r})
                conn.execute("BEGIN IMMEDIATE")
                print("locked", flush=True)
                sys.stdin.readline()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        found = run_mama(home, "search", "walnuts october", cache=model_cache_dir)
        shown = run_mama(home, "show", "1", cache=model_cache_dir)
        before = file_digest(db)
        write = run_mama(home, "remember", "Hazelnuts too", "--kind", "fact", cache=model_cache_dir)
        after = file_digest(db)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert found.returncode == 0, found.stderr
    assert "Walnuts fall in October" in found.stdout
    assert shown.returncode == 0, shown.stderr
    assert "Walnuts fall in October" in shown.stdout
    assert write.returncode == StoreLockedError.exit_code, write.stderr
    assert_one_line_error(write, "store_locked")
    assert after == before


def test_read_only_data_folder(home: Path, model_cache_dir: Path) -> None:
    db = home / "mama.db"
    with Store.open(db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for extra in home.glob("mama.db-*"):
        extra.unlink()
    before = file_digest(db)
    if os.geteuid() == 0:
        # Root ignores permission bits: make the folder a read-only mount in a
        # private mount namespace, a truly read-only file system.
        assert shutil.which("unshare"), "util-linux unshare is needed"
        script = f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && exec "$@"'
        result = run_mama(
            home,
            "doctor",
            cache=model_cache_dir,
            wrapper=["unshare", "-m", "sh", "-c", script, "sh"],
        )
    else:
        home.chmod(0o555)
        try:
            result = run_mama(home, "doctor", cache=model_cache_dir)
        finally:
            home.chmod(0o755)
    assert result.returncode == ReadOnlyError.exit_code, result.stderr
    assert_one_line_error(result, "read_only")
    assert str(home) in result.stderr
    assert file_digest(db) == before


def test_a_full_disk_is_disk_full(tmp_path: Path, model_cache_dir: Path) -> None:
    """A real full file system: a 3 MB tmpfs (in a private mount namespace) filled
    up after the store was made. SQLite then reports "disk I/O error" (it cannot
    grow the -shm file) or SQLITE_FULL; either way the person reads disk_full."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("mounting a small tmpfs needs root and util-linux unshare (CI has both)")
    home = tmp_path / "home"
    home.mkdir()
    mama = str(MAMA)
    script = textwrap.dedent(
        f"""
        set -u
        mount -t tmpfs -o size=3M tmpfs "{home}" || exit 99
        "{mama}" remember "Sloes after the first frost" --kind fact >/dev/null || exit 98
        dd if=/dev/zero of="{home}/filler" bs=4k 2>/dev/null
        "{mama}" search "sloes frost" 2>&1; echo "rc=$?"
        echo ---
        "{mama}" remember "Damsons in September" --kind fact 2>&1; echo "rc=$?"
        echo ---
        rm "{home}/filler"
        "{mama}" search "sloes frost" 2>&1; echo "rc=$?"
        """
    )
    result = run_mama(
        home,
        "--version",
        cache=model_cache_dir,
        wrapper=["unshare", "-m", "sh", "-c", script, "sh"],
    )
    assert result.returncode == 0, result.stdout + result.stderr
    full_read, full_write, with_room = result.stdout.split("---\n")
    for out in (full_read, full_write):
        lines = out.strip().splitlines()
        assert lines[-1] == f"rc={DiskFullError.exit_code}", out
        assert len(lines) == 2 and lines[0].startswith("mama: disk_full: "), out
        assert "free some space" in lines[0]
    # Control: with room again the same store answers.
    assert "Sloes after the first frost" in with_room and with_room.strip().endswith("rc=0")
