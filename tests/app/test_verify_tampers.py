"""``mama verify`` sees every tamper: a store with every kind of row (judgments,
bindings, edges, outcomes, tombstones, checkpoints, observations from the
engine and from the mailbox, a paired Telegram owner, reasons, purged records)
verifies clean; each raw-SQL tamper of it (made with sqlcipher3 and the raw key,
as an attacker holding the key would) is reported by a problem naming what was
tampered. A cut tail is caught by the anchor kept outside the file, and a
damaged page is a finding (exit 5), not a crash."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlcipher3

from app.durable.mailbox import InputKind, Mailbox, NewInput
from app.durable.transaction import RuntimeDb
from app.local.chain_anchor import FileAnchorKeeper, anchor_path
from mama_core.embeddings.base import Embedder
from mama_core.memory import Engine, EngineConfig, verify_store
from mama_core.memory.coverage import listed_tables
from mama_core.memory.verify import VerifyReport
from mama_core.store import DbKey, Store
from tests.app.test_cli_store_errors import run_mama
from tests.app.verify_tamper_cases import TAMPERS, Tamper
from tests.conftest import TEST_KEY_HEX
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save

KEY = DbKey.from_secret(TEST_KEY_HEX)


def build_busy_store(home: Path, embedder: Embedder) -> dict[str, int]:
    """A store with every kind of row the chain or a seal covers; returns their ids."""
    db = home / "mama.db"
    ids: dict[str, int] = {}
    with (
        Store.open(db, KEY) as store,
        Engine(store, embedder, EngineConfig(), FileAnchorKeeper.for_store(db)) as engine,
    ):

        def owner(action: str, payload: dict[str, Any]) -> dict[str, Any]:
            return engine.dispatch(action, payload, OWNER, OWNER_GRANT)

        ids["old"] = save(engine, "Deploys go through the pipeline", "decision")["judgment_id"]
        ids["current"] = save(
            engine, "Deploys go through the new pipeline", "decision", replaces=[ids["old"]]
        )["judgment_id"]
        ids["standup"] = save(engine, "Standups are at ten")["judgment_id"]
        ids["secret"] = save(engine, "The salary band is confidential", scopes=["project:secret"])[
            "judgment_id"
        ]
        owner(
            "memory.update_outcome",
            {"id": ids["current"], "outcome": "it worked", "reason": "the release went fine"},
        )
        ids["link_edge"] = owner(
            "memory.link",
            {"src": ids["standup"], "dst": ids["current"], "kind": "relates_to", "reason": "team"},
        )["edge_id"]
        ids["tabs"] = save(engine, "Indent with tabs", "preference")["judgment_id"]
        ids["tombstone"] = owner(
            "memory.retire",
            {
                "id": ids["tabs"],
                "reason": "we use spaces",
                "status": "stale",
                "forbid_resave": True,
            },
        )["tombstone_id"]
        ids["proposal"] = save(
            engine, "Prefer long meetings", "preference", session=AGENT, grant=agent_grant()
        )["judgment_id"]
        owner("review.reject", {"id": ids["proposal"], "reason": "we do not"})
        ids["change"] = engine.dispatch(  # an agent's retire of the owner's record waits
            "memory.retire",
            {"id": ids["standup"], "reason": "moved to eleven", "status": "stale"},
            AGENT,
            agent_grant(),
        )["change_id"]
        ids["mail"] = owner(
            "observation.record",
            {"source": "gmail", "external_id": "m1", "text": "a mail", "author": "a@example.com"},
        )["observation_id"]
        ids["purged"] = save(engine, "The door code is 4711")["judgment_id"]
        owner("memory.retire", {"id": ids["purged"], "reason": "changed", "status": "stale"})
        owner("memory.purge", {"id": ids["purged"], "reason": "owner asked"})
        db_conn = RuntimeDb(store.new_connection(), store.path)
        try:
            mailbox = Mailbox(db_conn)
            ids["message"] = mailbox.post(
                NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "hello", author="owner")
            ).observation_id
            mailbox.post(NewInput(InputKind.SOURCE_DELTA, "slack", "C1/1", "a slack message"))
            with db_conn.write() as conn:  # the paired owner, as pairing writes it
                conn.execute(
                    "INSERT INTO telegram_owner (id, chat_id, user_id, username, paired_at) "
                    "VALUES (1, 42, 42, 'owner', '2026-01-01T00:00:00Z')"
                )
        finally:
            db_conn.close()
        ids["last_event"] = owner(
            "checkpoint.save", {"summary": "halfway through", "state": {"next": "tests"}}
        )["event_id"]
    return ids


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> tuple[Path, dict]:
    home = tmp_path_factory.mktemp("busy") / "home"
    return home, build_busy_store(home, embedder)


@pytest.fixture
def busy_home(template: tuple[Path, dict], tmp_path: Path) -> Iterator[tuple[Path, dict]]:
    source, ids = template
    home = tmp_path / "home"
    shutil.copytree(source, home)
    yield home, ids


def raw_sql(db: Path, statements: list[str]) -> None:
    """Tamper as an attacker with the key would: plain sqlcipher3, no MAMA code."""
    conn = sqlcipher3.connect(str(db), isolation_level=None)
    try:
        conn.execute("PRAGMA key = " + KEY.pragma_value())
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def verify_home(home: Path) -> VerifyReport:
    db = home / "mama.db"
    with Store.open(db, KEY) as store:
        reader = store.new_connection()
        try:
            return verify_store(reader, store.secret, FileAnchorKeeper.for_store(db).load())
        finally:
            reader.close()


def test_the_untampered_busy_store_verifies(busy_home: tuple[Path, dict]) -> None:
    home, ids = busy_home
    report = verify_home(home)
    assert report.ok, report.problems
    assert report.events == ids["last_event"]
    assert anchor_path(home / "mama.db").exists()
    with Store.open(home / "mama.db", KEY) as store:
        counts = {
            table: store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in (
                "edges",
                "tombstones",
                "checkpoints",
                "observations",
                "mailbox",
                "telegram_owner",
                "event_texts",
                "embeddings",
                "change_proposals",
            )
        }
    assert all(n > 0 for n in counts.values()), counts


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.name for t in TAMPERS])
def test_verify_names_each_tamper(busy_home: tuple[Path, dict], tamper: Tamper) -> None:
    home, ids = busy_home
    raw_sql(home / "mama.db", [s.format(**ids) for s in tamper.sql])
    problems = verify_home(home).problems
    expected = tamper.expect.format(**ids)
    assert any(expected in p for p in problems), problems


def test_every_table_is_accounted_for(busy_home: tuple[Path, dict]) -> None:
    """A table added by a migration must say how verify covers it (coverage.py)."""
    home, _ = busy_home
    with Store.open(home / "mama.db", KEY) as store:
        tables = {
            str(r[0])
            for r in store.conn.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts_%' "
                "AND name NOT LIKE '%_trigram_%'"
            )
        }
    assert tables - listed_tables() == set()


def test_a_cut_tail_is_caught_only_by_the_anchor(busy_home: tuple[Path, dict]) -> None:
    """Without the anchor the shortened chain is consistent; with it, verify says so."""
    home, ids = busy_home
    cut = next(t for t in TAMPERS if t.name == "last_events_cut_with_their_rows")
    raw_sql(home / "mama.db", [s.format(**ids) for s in cut.sql])
    anchor_path(home / "mama.db").rename(home / "anchor.away")
    # The store has had an anchor: without one it does not verify, cut or not.
    assert [p for p in verify_home(home).problems if "anchor" not in p] == []
    assert any("anchor kept outside the file is gone" in p for p in verify_home(home).problems)
    (home / "anchor.away").rename(anchor_path(home / "mama.db"))
    assert not verify_home(home).ok


def test_a_stale_anchor_from_another_process_is_no_alarm(busy_home: tuple[Path, dict]) -> None:
    """A process that anchored an older head (another wrote later) leaves a true anchor."""
    home, _ = busy_home
    path = anchor_path(home / "mama.db")
    anchor = json.loads(path.read_text())
    with Store.open(home / "mama.db", KEY) as store:
        from mama_core.memory.anchor import anchor_for
        from mama_core.memory.events import ChainHead

        row = store.conn.execute("SELECT id, at, hash FROM events WHERE id = 3").fetchone()
        older = anchor_for(store.secret, store.store_id, ChainHead(row[0], row[1], row[2]))
    FileAnchorKeeper(path).save(older)  # never moves back
    assert json.loads(path.read_text()) == anchor
    path.write_text(json.dumps(older.to_json()))
    assert verify_home(home).ok
    forged = {**older.to_json(), "hash": "0" * 64}
    path.write_text(json.dumps(forged))
    assert "does not carry this store's MAC" in " ".join(verify_home(home).problems)


def test_verify_cli_reports_a_damaged_page(
    busy_home: tuple[Path, dict], model_cache_dir: Path
) -> None:
    home, _ = busy_home
    clean = run_mama(home, "verify", "--json", cache=model_cache_dir)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert json.loads(clean.stdout) == {"ok": True, "problems": []}
    db = home / "mama.db"
    data = bytearray(db.read_bytes())
    page = 4096 * 3  # a page past the schema: the file opens, a table cannot be read
    data[page + 100 : page + 400] = bytes(300)
    db.write_bytes(bytes(data))
    result = run_mama(home, "verify", "--json", cache=model_cache_dir)
    assert result.returncode == 5, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert any("damaged" in p or "integrity_check" in p for p in report["problems"])


def test_verify_cli_on_a_damaged_first_page_says_so_in_one_line(
    busy_home: tuple[Path, dict], model_cache_dir: Path
) -> None:
    """SQLCipher cannot tell a damaged first page from a wrong key (its MAC fails
    either way): the command still ends with one clear line, never a traceback."""
    home, _ = busy_home
    db = home / "mama.db"
    data = bytearray(db.read_bytes())
    data[200:500] = bytes(300)
    db.write_bytes(bytes(data))
    result = run_mama(home, "verify", "--json", cache=model_cache_dir)
    assert result.returncode not in (0, 70), result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
