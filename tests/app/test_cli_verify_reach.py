"""``mama verify`` sees a deleted observation and a rewritten history whose anchor beside
the store was deleted (the second copy, in the config folder, still tells — and the
other way round); a store that has had an anchor fails with neither copy; it never
reports a store another process is writing as damaged; and ``mama remember`` on a
damaged page says so in one line, with its code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import sqlcipher3

from app.local.chain_anchor import anchor_path, external_anchor_path
from app.local.paths import default_config
from mama_core.embeddings.base import Embedder
from mama_core.errors import NotADatabaseError
from mama_core.memory import Engine, EngineConfig
from mama_core.memory.events import EVENT_COLUMNS, event_from_row
from mama_core.memory.verify import VerifyBusyError
from mama_core.store import Store
from tests.app.test_cli_store_errors import assert_one_line_error, run_mama
from tests.conftest import REPO_ROOT
from tests.first_open import KEY
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, save

VERIFY_FAILED = 5
NO_DELETE = (
    "CREATE TRIGGER observations_no_delete BEFORE DELETE ON observations BEGIN "
    "SELECT RAISE(ABORT, 'observations are never deleted; a purge erases their text'); END"
)


def build_home(home: Path, embedder: Embedder) -> dict[str, int]:
    """A store as the daemon leaves it: records, observations, both anchor copies."""
    from app.local.chain_anchor import StoreAnchors

    db = home / "mama.db"
    with Store.open(db, KEY) as store:
        anchors = StoreAnchors(db, default_config(), store.store_id)
        with Engine(store, embedder, EngineConfig(), anchors) as engine:
            save(engine, "Invoices go out on the first")
            ids = {
                f"mail{n}": engine.dispatch(
                    "observation.record",
                    {"source": "gmail", "external_id": f"m{n}", "text": f"mail {n}"},
                    OWNER,
                    OWNER_GRANT,
                )["observation_id"]
                for n in range(3)
            }
            save(engine, "Reviews happen on Fridays")
    return ids


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> tuple[Path, dict]:
    home = tmp_path_factory.mktemp("reach") / "home"
    return home, build_home(home, embedder)


@pytest.fixture
def home(template: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the template, with a config folder of its own holding a copy of the
    template's external anchor (the copies share the store id)."""
    source = template[0]
    built = external_anchor_path(default_config(), store_id(source), source / "mama.db")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    target = tmp_path / "home"
    shutil.copytree(source, target)
    copy = external_anchor_path(default_config(), store_id(target), target / "mama.db")
    copy.parent.mkdir(parents=True)
    shutil.copyfile(built, copy)
    return target


def raw_sql(db: Path, statements: list[str]) -> None:
    conn = sqlcipher3.connect(str(db), isolation_level=None)
    try:
        conn.execute("PRAGMA key = " + KEY.pragma_value())
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def verify(home: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_mama(home, "verify", *args, cache=cache)


def store_id(home: Path) -> str:
    with Store.open(home / "mama.db", KEY, check_writable=False) as store:
        return store.store_id


def test_a_deleted_observation_fails_verify(
    home: Path, template: tuple[Path, dict], model_cache_dir: Path
) -> None:
    ok = verify(home, model_cache_dir)
    assert ok.returncode == 0, ok.stdout + ok.stderr  # control: untouched, it verifies
    assert "all checks passed" in ok.stdout
    ids = template[1]
    raw_sql(
        home / "mama.db",
        [
            "DROP TRIGGER observations_no_delete",
            f"DELETE FROM observations WHERE id = {ids['mail1']}",
            NO_DELETE,  # the guard put back as it was: the schema check sees nothing
        ],
    )
    failed = verify(home, model_cache_dir)
    assert failed.returncode == VERIFY_FAILED, failed.stdout + failed.stderr
    assert "1 observation(s) were deleted" in failed.stdout


def test_a_deleted_last_observation_with_its_tally_rewound_is_caught_by_the_anchor(
    home: Path, embedder: Embedder, model_cache_dir: Path
) -> None:
    """The tally's row put back as it was before the last observation (its seal then
    valid) hides the deletion inside the file: the count in the anchor still tells."""
    from app.local.chain_anchor import StoreAnchors

    db = home / "mama.db"
    tally = "SELECT observations, last_observation, anchored, seal FROM store_tally"
    with Store.open(db, KEY) as store:
        before = store.conn.execute(tally).fetchone()
        anchors = StoreAnchors(db, default_config(), store.store_id)
        with Engine(store, embedder, EngineConfig(), anchors) as engine:
            last = engine.dispatch(
                "observation.record",
                {"source": "gmail", "external_id": "m9", "text": "the last mail"},
                OWNER,
                OWNER_GRANT,
            )["observation_id"]
    assert verify(home, model_cache_dir).returncode == 0  # control
    guards = ("observations_no_delete", "store_tally_only_grows", "store_tally_seal")
    put_back = trigger_sql(db, guards)
    raw_sql(
        db,
        [
            *(f"DROP TRIGGER {name}" for name in guards),
            f"DELETE FROM observations WHERE id = {last}",
            "UPDATE store_tally SET observations = {}, last_observation = {}, anchored = {}, "
            "seal = '{}'".format(*before),
            *put_back,  # the guards as they were: the schema check sees nothing
        ],
    )
    failed = verify(home, model_cache_dir)
    assert failed.returncode == VERIFY_FAILED, failed.stdout + failed.stderr
    assert "observations were deleted: the store once counted" in failed.stdout
    assert "store_tally row 1 was altered" not in failed.stdout  # the file alone agrees


def trigger_sql(db: Path, names: tuple[str, ...]) -> list[str]:
    """The statements that made the triggers ``names`` (to put them back as they were)."""
    conn = sqlcipher3.connect(str(db), isolation_level=None)
    try:
        conn.execute("PRAGMA key = " + KEY.pragma_value())
        marks = ", ".join("?" for _ in names)
        rows = conn.execute(
            f"SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name IN ({marks})", names
        ).fetchall()
    finally:
        conn.close()
    assert len(rows) == len(names)
    return [str(r[0]) for r in rows]


def rewrite_history(db: Path) -> None:
    """Edit the first event's payload and re-hash the whole chain, as someone with the
    key and the hashing rule would; the append-only guards are put back as they were."""
    conn = sqlcipher3.connect(str(db), isolation_level=None)
    try:
        conn.execute("PRAGMA key = " + KEY.pragma_value())
        guards = conn.execute(
            "SELECT sql FROM sqlite_schema WHERE name LIKE 'events_append_only_%'"
        ).fetchall()
        conn.execute("DROP TRIGGER events_append_only_update")
        prev = "0" * 64
        for row in conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY id").fetchall():
            event, _ = event_from_row(row)
            payload = {**event.payload, "forged": "yes"} if event.id == 1 else event.payload
            event = replace(event, payload=payload, prev_hash=prev)
            prev = event.compute_hash()
            conn.execute(
                "UPDATE events SET payload = ?, prev_hash = ?, hash = ? WHERE id = ?",
                (json.dumps(event.payload, sort_keys=True), event.prev_hash, prev, event.id),
            )
        conn.execute("DROP TRIGGER events_append_only_delete")
        for (sql,) in guards:
            conn.execute(sql)
    finally:
        conn.close()


def test_a_rewritten_history_without_its_local_anchor_fails(
    home: Path, model_cache_dir: Path
) -> None:
    db = home / "mama.db"
    external = external_anchor_path(default_config(), store_id(home), db)
    assert external.exists() and anchor_path(db).exists()
    kept = external.read_text()
    # Control: the copy beside the store removed, the untouched store still verifies.
    anchor_path(db).unlink()
    assert verify(home, model_cache_dir).returncode == 0
    rewrite_history(db)
    failed = verify(home, model_cache_dir)
    assert failed.returncode == VERIFY_FAILED, failed.stdout + failed.stderr
    assert "history rewritten" in failed.stdout
    assert "was altered" not in failed.stdout  # the chain itself is consistent
    # Both copies removed: a store that has had an anchor does not verify without one.
    external.unlink()
    bare = verify(home, model_cache_dir)
    assert bare.returncode == VERIFY_FAILED
    assert "anchor kept outside the file is gone" in bare.stdout
    # The owner accepting the store as it is (a backup restored) anchors it again.
    accepted = verify(home, model_cache_dir, "--reanchor")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert external.exists() and anchor_path(db).exists()
    assert external.read_text() != kept


def test_a_rewritten_history_without_its_config_folder_anchor_fails(
    home: Path, model_cache_dir: Path
) -> None:
    """The other copy alone: the config folder's anchor deleted (with the data folder
    copied elsewhere, say), the one beside the store still catches a rewritten history."""
    db = home / "mama.db"
    external = external_anchor_path(default_config(), store_id(home), db)
    assert external.exists() and anchor_path(db).exists()
    external.unlink()
    # Control: the untouched store verifies on the copy beside it.
    assert verify(home, model_cache_dir).returncode == 0
    rewrite_history(db)
    failed = verify(home, model_cache_dir)
    assert failed.returncode == VERIFY_FAILED, failed.stdout + failed.stderr
    assert "history rewritten" in failed.stdout
    assert "anchor kept outside the file is gone" not in failed.stdout  # one copy is enough


def test_an_untouched_store_that_had_an_anchor_does_not_verify_without_either_copy(
    home: Path, model_cache_dir: Path
) -> None:
    """Deleting both copies is how a rewritten history would hide: so a store that has
    had an anchor fails without one, even untouched, until the owner re-anchors it."""
    db = home / "mama.db"
    external = external_anchor_path(default_config(), store_id(home), db)
    assert verify(home, model_cache_dir).returncode == 0  # control: both copies there
    external.unlink()
    anchor_path(db).unlink()
    bare = verify(home, model_cache_dir)
    assert bare.returncode == VERIFY_FAILED, bare.stdout + bare.stderr
    assert "anchor kept outside the file is gone" in bare.stdout
    assert "history rewritten" not in bare.stdout and "was altered" not in bare.stdout


WRITER = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from mama_core.store import Store
    from tests.first_open import KEY

    store = Store.open(Path(sys.argv[1]), KEY)
    conn = store.conn
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    n = 0
    while True:
        n += 1
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO observations (source, external_id, author, text, received_at) "
            "VALUES ('slack', ?, '', 'busy', '2026-01-01T00:00:00Z')", (f"{sys.argv[2]}{n}",)
        )
        if sys.argv[2] == "hold":
            print("locked", flush=True)
            stop.wait(600)
            conn.execute("COMMIT")
            break
        conn.execute("COMMIT")
        if n == 1:
            print("writing", flush=True)
        if stop.is_set():
            break
    print(n, flush=True)
    """
)


def start_writer(db: Path, mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), mode],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() in ("locked", "writing")
    return proc


def stop_writer(proc: subprocess.Popen[str]) -> int:
    out, _ = proc.communicate("", timeout=120)
    assert proc.returncode == 0
    return int(out.split()[-1])


def test_verify_beside_a_writer_never_reports_a_false_failure(
    home: Path, model_cache_dir: Path
) -> None:
    db = home / "mama.db"
    busy = start_writer(db, "loop")  # another process commits over and over
    try:
        during = verify(home, model_cache_dir)
    finally:
        written = stop_writer(busy)
    assert during.returncode == 0, during.stdout + during.stderr
    assert written > 1
    held = start_writer(db, "hold")  # another process holds the write lock throughout
    try:
        blocked = verify(home, model_cache_dir)
    finally:
        stop_writer(held)
    assert blocked.returncode == VerifyBusyError.exit_code, blocked.stdout + blocked.stderr
    assert_one_line_error(blocked, "verify_busy")
    assert "could not be checked" in blocked.stderr
    assert "damaged" not in blocked.stdout + blocked.stderr
    # Control: with the writer gone, the same store verifies.
    assert verify(home, model_cache_dir).returncode == 0


def damage_pages_remember_reads(db: Path) -> None:
    """Damage the pages of the events (every write appends to them) and of the runtime
    state (read again as the command closes): pages the open itself does not read."""
    with Store.open(db, KEY, check_writable=False) as store:
        store.checkpoint_wal()
        pages = [
            int(r[0])
            for r in store.conn.execute(
                "SELECT rootpage FROM sqlite_schema WHERE name IN ('events', 'runtime_state')"
            )
        ]
    assert len(pages) == 2
    with db.open("r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * 4096 + 200)
            fh.write(os.urandom(300))
    with (
        Store.open(db, KEY, check_writable=False) as store,  # the open itself still works
        pytest.raises(sqlcipher3.DatabaseError),
    ):
        store.conn.execute(f"SELECT {EVENT_COLUMNS} FROM events").fetchall()


def test_remember_on_a_damaged_page_says_so_in_one_line(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    home = tmp_path / "home"
    for n in range(3):
        made = run_mama(
            home, "remember", f"Pears ripen in week {n}", "--kind", "fact", cache=model_cache_dir
        )
        assert made.returncode == 0, made.stderr  # control: the store takes writes
    damage_pages_remember_reads(home / "mama.db")
    result = run_mama(
        home, "remember", "Another pear note", "--kind", "fact", cache=model_cache_dir
    )
    assert result.returncode == NotADatabaseError.exit_code, result.stderr
    assert_one_line_error(result, "not_a_database")
    assert "damaged" in result.stderr
