"""The owner's memory commands, run as a person runs them: the real console
script in a subprocess against a real encrypted store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mama_core.errors import NotFoundError, TombstonedError
from mama_core.store import DbKey, Store
from tests.app.test_cli_store_errors import run_mama
from tests.conftest import TEST_KEY_HEX


class Mama:
    def __init__(self, home: Path, cache: Path) -> None:
        self.home = home
        self.cache = cache

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_mama(self.home, *args, cache=self.cache)

    def json(self, *args: str) -> dict[str, Any]:
        result = self.run(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def mama(tmp_path: Path, model_cache_dir: Path) -> Mama:
    return Mama(tmp_path / "home", model_cache_dir)


def test_remember_search_show_history(mama: Mama) -> None:
    saved = mama.json(
        "remember",
        "We ship releases on Thursdays",
        "--kind",
        "decision",
        "--topic",
        "releases",
        "--scope",
        "project:web",
    )
    assert saved["status"] == "active" and saved["event_id"] == 1
    first = saved["judgment_id"]
    revised = mama.json(
        "remember",
        "We ship releases every weekday",
        "--kind",
        "decision",
        "--scope",
        "project:web",
        "--replaces",
        str(first),
    )
    found = mama.json("search", "when do we ship releases", "--scope", "project:web")
    ids = [hit["id"] for hit in found["results"]]
    assert ids == [revised["judgment_id"]]  # the replaced one is not a belief any more
    shown = mama.json("show", str(first))
    assert shown["record"]["status"] == "superseded"
    assert shown["record"]["provenance"]["turn"] == "cli"
    assert shown["record"]["involvement"] == "owner_stated"
    history = mama.json("history", str(revised["judgment_id"]))
    assert [h["id"] for h in history["history"]] == [first]
    text = mama.run("search", "Thursdays weekday", "--scope", "project:other")
    assert text.returncode == 0 and "nothing found" in text.stdout


def test_guidance_needs_applies_when(mama: Mama) -> None:
    result = mama.run("remember", "Keep answers short", "--kind", "preference")
    assert result.returncode != 0
    assert result.stderr.startswith("mama: invalid_input: ")
    assert "applies_when" in result.stderr
    ok = mama.json(
        "remember",
        "Keep answers short",
        "--kind",
        "preference",
        "--applies-when",
        "replying to the owner",
    )
    assert ok["status"] == "active"  # the owner's own guidance needs no review


def test_retire_with_tombstone_then_resave_refused(mama: Mama) -> None:
    saved = mama.json("remember", "Deploy from the release branch", "--kind", "decision")
    retired = mama.json(
        "retire", str(saved["judgment_id"]), "--reason", "we deploy from main", "--forbid-resave"
    )
    assert retired["status"] == "stale"
    again = mama.run("remember", "deploy from the release branch!", "--kind", "decision")
    assert again.returncode == TombstonedError.exit_code
    assert "we deploy from main" in again.stderr
    other = mama.json("remember", "Deploy from main", "--kind", "decision")
    assert other["status"] == "active"


def test_approve_and_reject_need_a_proposal(mama: Mama, db_key: DbKey) -> None:
    missing = mama.run("approve", "41")
    assert missing.returncode == NotFoundError.exit_code
    assert missing.stderr.startswith("mama: not_found: ")
    saved = mama.json("remember", "Standups are at 9:30", "--kind", "fact")
    refused = mama.run("approve", str(saved["judgment_id"]))
    assert refused.returncode != 0 and "invalid_transition" in refused.stderr


def test_purge_needs_confirmation_and_verify_passes(mama: Mama) -> None:
    saved = mama.json("remember", "The vault code is in the blue folder", "--kind", "fact")
    jid = str(saved["judgment_id"])
    unconfirmed = mama.run("purge", jid)
    assert unconfirmed.returncode == 4
    assert "--yes" in unconfirmed.stderr
    assert mama.json("show", jid)["record"]["summary"].startswith("The vault code")
    purged = mama.json("purge", jid, "--yes")
    assert purged["status"] == "purged"
    assert "vault" not in json.dumps(mama.json("show", jid))
    assert mama.json("verify") == {"ok": True, "problems": []}


def test_verify_fails_on_tampering(mama: Mama) -> None:
    mama.json("remember", "Invoices go out on the 1st", "--kind", "fact")
    assert mama.run("verify").returncode == 0
    with Store.open(mama.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        store.conn.execute("DROP TRIGGER judgments_text_append_only")
        store.conn.execute("UPDATE judgments SET summary = 'Invoices go out on the 15th'")
    result = mama.run("verify")
    assert result.returncode == 5
    assert result.stdout.strip()


def test_export_writes_json_lines(mama: Mama, tmp_path: Path) -> None:
    mama.json("remember", "Quarterly review in March", "--kind", "schedule")
    out = tmp_path / "backup.jsonl"
    result = mama.run("export", "--out", str(out))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    tables = {r["table"] for r in records}
    assert {"judgments", "events", "scope_bindings", "receipts"} <= tables
    summaries = [r["row"]["summary"] for r in records if r["table"] == "judgments"]
    assert summaries == ["Quarterly review in March"]


def test_changing_the_model_then_reindex(mama: Mama, tmp_path: Path) -> None:
    for text in ("Payroll runs on the 25th", "The office wifi is called Meadow"):
        mama.json("remember", text, "--kind", "fact")
    # Another model: the same weights under another file, so another model id.
    built = sorted(mama.cache.glob("all-MiniLM-L6-v2-*.gguf"))[0]
    other = tmp_path / "other-model.gguf"
    other.write_bytes(built.read_bytes())
    (mama.home / "settings.json").write_text(json.dumps({"embedding_model_path": str(other)}))
    before = mama.run("doctor")
    assert before.returncode == 0, before.stderr
    assert "2 memories lack a vector" in before.stdout
    assert "embedded in the background while MAMA runs, or run 'mama reindex'" in before.stdout
    # Short commands only say so (one line on stderr); they do not start re-embedding.
    words = mama.run("search", "payroll")
    assert words.returncode == 0, words.stderr
    assert "Payroll runs on the 25th" in words.stdout  # found by its words meanwhile
    waiting = "2 memories wait for the new embedding model's vectors"
    assert [line for line in words.stderr.splitlines() if waiting in line]
    saved = mama.run("remember", "Lunch is at noon", "--kind", "fact")
    assert saved.returncode == 0, saved.stderr
    assert waiting in saved.stderr  # the new memory got its vector when it was saved
    assert "2 memories lack a vector" in mama.run("doctor").stdout
    result = mama.run("reindex")
    assert result.returncode == 0, result.stderr
    assert "embedded 2 memories with gguf:other-model.gguf:" in result.stdout
    after = mama.run("doctor")
    assert "0 memories lack a vector" in after.stdout
    assert "wait for" not in mama.run("search", "payroll").stderr
    found = mama.json("search", "when is salary paid")
    assert found["results"][0]["summary"] == "Payroll runs on the 25th"
    assert "vector" in found["results"][0]["found_by"]


def test_owner_reviews_dev_memory_proposals(mama: Mama, model_cache_dir: Path) -> None:
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, Grant, SessionFacts
    from mama_core.session import ActorKind, TurnKind

    mama.json("remember", "Mine, in the personal store", "--kind", "fact")
    dev_db = mama.home / "dev-memory.db"
    coding_agent = SessionFacts(
        actor_kind=ActorKind.MCP_CLIENT, actor_name="claude-code", turn=TurnKind.MCP
    )
    with (
        Store.open(dev_db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, load_embedder(None, model_cache_dir)) as engine,
    ):
        proposal = engine.dispatch(
            "memory.save",
            {
                "kind": "lesson",
                "summary": "Run the migrations before the tests",
                "applies_when": "changing the schema",
            },
            coding_agent,
            Grant.agent(["project:web"]),
        )
    assert proposal["status"] == "proposed"
    jid = str(proposal["judgment_id"])
    # Without --dev the owner's own store is meant: that id is another record.
    assert mama.json("show", jid)["record"]["summary"] == "Mine, in the personal store"
    approved = mama.json("--dev", "approve", jid)
    assert approved["status"] == "active"
    shown = mama.json("--dev", "show", jid)["record"]
    assert shown["involvement"] == "owner_approved"
    assert shown["provenance"]["actor_name"] == "claude-code"


def test_owner_decides_a_coding_agents_proposal_to_retire_their_rule(
    mama: Mama, model_cache_dir: Path
) -> None:
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, Grant, SessionFacts
    from mama_core.session import ActorKind, TurnKind

    rules = [
        mama.json(
            "--dev",
            "remember",
            summary,
            "--kind",
            "constraint",
            "--applies-when",
            "deploying",
            "--scope",
            "project:web",
        )["judgment_id"]
        for summary in ("Never deploy on Fridays", "Deploy only from main")
    ]
    coding_agent = SessionFacts(
        actor_kind=ActorKind.MCP_CLIENT, actor_name="claude-code", turn=TurnKind.MCP
    )
    with (
        Store.open(mama.home / "dev-memory.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, load_embedder(None, model_cache_dir)) as engine,
    ):
        for rule in rules:
            proposal = engine.dispatch(
                "memory.retire",
                {"id": rule, "reason": "we deploy every day now"},
                coding_agent,
                Grant.agent(["project:web"]),
            )
            assert proposal["proposed"] is True and proposal["status"] == "active"
    approve_id, reject_id = (str(r) for r in rules)
    shown = mama.run("--dev", "show", approve_id)
    assert shown.returncode == 0, shown.stderr
    assert "waiting for you: claude-code (mcp turn) proposes to retire" in shown.stdout
    assert "we deploy every day now" in shown.stdout
    assert f"mama approve {approve_id}" in shown.stdout
    assert mama.json("--dev", "show", approve_id)["record"]["status"] == "active"

    approved = mama.json("--dev", "approve", approve_id)
    assert approved["status"] == "stale" and approved["change_id"] >= 1
    after = mama.json("--dev", "history", approve_id)
    assert after["record"]["status"] == "stale" and after["record"]["pending_change"] is None
    assert after["events"][-1]["actor"]["kind"] == "owner"

    rejected = mama.run("--dev", "reject", reject_id, "--reason", "Fridays stay frozen")
    assert rejected.returncode == 0, rejected.stderr
    assert "(proposed change" in rejected.stdout
    kept = mama.json("--dev", "show", reject_id)["record"]
    assert kept["status"] == "active" and kept["pending_change"] is None
