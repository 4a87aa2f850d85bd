"""``mama mcp`` as a real subprocess, driven over stdio by the SDK's client."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import DbKey, Store
from tests.app.mcp.conftest import VENV_BIN, error_code, git_project, structured

pytestmark = pytest.mark.anyio

CLIENT = types.Implementation(name="sdk-test-client", version="2.3.0-test")


def _client(env: dict[str, str], cwd: Path, errlog: TextIO, *args: str) -> Client:
    """A client session with ``mama mcp ARGS`` started in ``cwd`` (its stderr to ``errlog``)."""
    params = StdioServerParameters(
        command=str(VENV_BIN / "mama"), args=["mcp", *args], env=env, cwd=cwd
    )
    return Client(stdio_client(params, errlog=errlog), client_info=CLIENT, read_timeout_seconds=60)


async def test_a_session_over_stdio(
    tmp_path: Path,
    mama_env: dict[str, str],
    db_key: DbKey,
    embedder: GgufEmbedder,
) -> None:
    project = git_project(tmp_path / "work", "orchard")
    (project / "src").mkdir()
    # Started in a subfolder: the project is still the git root's name.
    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        async with _client(mama_env, project / "src", errlog) as client:
            # SDK 2.3.0 answers server/discover, so this client (like Claude Code) speaks
            # the per-request envelope; the in-memory tests cover the initialize handshake.
            assert client.protocol_version == "2026-07-28"
            tools = {t.name for t in (await client.list_tools()).tools}
            saved = structured(
                await client.call_tool(
                    "save",
                    {"kind": "decision", "summary": "Apples are sorted by ripeness first."},
                )
            )
            found = structured(await client.call_tool("search", {"query": "apples ripeness"}))
            refused = await client.call_tool(
                "save", {"kind": "fact", "summary": "x", "scopes": ["project:other"]}
            )
    assert "checkpoint_load" in tools
    assert [r["id"] for r in found["results"]] == [saved["judgment_id"]]
    assert found["results"][0]["scopes"] == [f"project:{project.resolve()}"]
    assert error_code(refused) == "scope_denied"

    # The server closed its store on hang-up; the owner finds the row and who wrote it.
    db = Path(mama_env["MAMA_HOME"]) / "dev-memory.db"
    assert not (Path(mama_env["MAMA_HOME"]) / "mama.db").exists()  # not the owner's store
    with Store.open(db, db_key) as store, Engine(store, embedder) as engine:
        record = engine.dispatch(
            "memory.read", {"id": saved["judgment_id"]}, SessionFacts.owner_cli(), Grant.owner()
        )["record"]
    assert record["provenance"]["actor_name"] == "sdk-test-client"
    assert record["provenance"]["actor_version"] == "2.3.0-test"
    assert record["involvement"] == "agent_inferred"


async def test_db_and_project_options(tmp_path: Path, mama_env: dict[str, str]) -> None:
    db = tmp_path / "elsewhere" / "agents.db"
    options = ("--db", str(db), "--project", "My Project", "--allow-global")
    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        async with _client(mama_env, tmp_path, errlog, *options) as client:
            in_project = structured(
                await client.call_tool(
                    "save", {"kind": "fact", "summary": "Pears ripen off the tree."}
                )
            )
            in_global = structured(
                await client.call_tool(
                    "save", {"kind": "fact", "summary": "Figs do not.", "scopes": ["global"]}
                )
            )
            found = structured(await client.call_tool("search", {"query": "ripen pears figs"}))
    assert db.is_file()
    assert not (Path(mama_env["MAMA_HOME"]) / "dev-memory.db").exists()
    scopes = {r["id"]: r["scopes"] for r in found["results"]}
    assert scopes == {
        in_project["judgment_id"]: ["project:My-Project"],
        in_global["judgment_id"]: ["global"],
    }


async def test_over_stdio_the_owners_rule_is_only_proposed_for_retirement(
    tmp_path: Path,
    mama_env: dict[str, str],
    db_key: DbKey,
    embedder: GgufEmbedder,
) -> None:
    project = git_project(tmp_path / "work", "orchard")
    db = Path(mama_env["MAMA_HOME"]) / "dev-memory.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    owner, grant = SessionFacts.owner_cli(), Grant.owner()
    rule_payload = {
        "kind": "constraint",
        "summary": "Never force-push to main",
        "applies_when": "pushing",
        "scopes": ["project:orchard"],
    }
    with Store.open(db, db_key) as store, Engine(store, embedder) as engine:
        rule = engine.dispatch("memory.save", rule_payload, owner, grant)["judgment_id"]
    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        async with _client(mama_env, project, errlog) as client:
            proposed = structured(
                await client.call_tool("retire", {"id": rule, "reason": "we rebase now"})
            )
            outcome = await client.call_tool("update_outcome", {"id": rule, "outcome": "broke"})
            own = structured(
                await client.call_tool("save", {"kind": "fact", "summary": "CI takes 8 min."})
            )
            own_retired = structured(
                await client.call_tool("retire", {"id": own["judgment_id"], "reason": "faster"})
            )
    assert proposed["proposed"] is True and proposed["status"] == "active"
    assert error_code(outcome) == "owner_turn_required"  # an MCP turn is not the owner's
    assert own_retired["status"] == "stale"  # the control: its own record, at once
    with Store.open(db, db_key) as store, Engine(store, embedder) as engine:
        record = engine.dispatch("memory.read", {"id": rule}, owner, grant)["record"]
        assert record["status"] == "active"
        assert record["pending_change"]["proposed_by"]["name"] == "sdk-test-client"
        approved = engine.dispatch("review.approve", {"id": rule}, owner, grant)
    assert approved["status"] == "stale"


async def test_tools_are_listed_while_the_store_cannot_open_and_calls_say_why(
    tmp_path: Path, mama_env: dict[str, str], db_key: DbKey
) -> None:
    """The server answers before its store is open (a coding agent snapshots the tool
    list right after spawning it); here the store never opens — the wrong key — and
    each call says so with a code, the server staying up. The session above is the
    positive control: with the right key the same calls work."""
    db = Path(mama_env["MAMA_HOME"]) / "dev-memory.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    Store.open(db, db_key).close()
    env = {**mama_env, "MAMA_DB_KEY": "ab" * 32}  # not this store's key
    project = git_project(tmp_path / "work", "orchard")
    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        async with _client(env, project, errlog) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            first = await client.call_tool("search", {"query": "apples"})
            second = await client.call_tool("save", {"kind": "fact", "summary": "Pears."})
    assert {"save", "search", "checkpoint_load"} <= tools
    assert first.is_error and second.is_error
    assert error_code(first) == error_code(second) == "wrong_key"


async def test_the_server_catches_up_on_the_new_models_vectors(
    tmp_path: Path,
    mama_env: dict[str, str],
    db_key: DbKey,
    embedder: GgufEmbedder,
) -> None:
    """A dev memory written with the old model: ``mama mcp`` embeds it with the new one in
    the background, and a search by meaning then finds an old memory by its vector."""
    import json

    import anyio

    from mama_core.recall import count_missing
    from mama_core.session import ActorKind, TurnKind

    project = git_project(tmp_path / "work", "orchard")
    home = Path(mama_env["MAMA_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    db = home / "dev-memory.db"
    agent = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="t", turn=TurnKind.OWNER_MESSAGE)
    with Store.open(db, db_key) as store, Engine(store, embedder) as engine:
        grant = Grant.owner(default_scope="project:orchard")
        old = engine.dispatch(
            "memory.save",
            {"kind": "fact", "summary": "The espresso machine in the kitchen is broken"},
            agent,
            grant,
        )["judgment_id"]
        for i in range(20):
            engine.dispatch(
                "memory.save", {"kind": "fact", "summary": f"Shelf {i} holds jam"}, agent, grant
            )
    new_model = tmp_path / "new-model.gguf"
    new_model.write_bytes(embedder.model_path.read_bytes())
    new_id = GgufEmbedder(new_model).model_id
    (home / "settings.json").write_text(json.dumps({"embedding_model_path": str(new_model)}))
    with Store.open(db, db_key) as store:
        assert count_missing(store.conn, new_id) == 21

    log_file = home / "logs" / "mcp.log"
    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        async with _client(mama_env, project, errlog) as client:
            with anyio.fail_after(300):
                while not (log_file.exists() and "caught up: 21 memories" in log_file.read_text()):
                    await anyio.sleep(0.1)  # a condition checked every 0.1 s, not a fixed wait
            found = structured(
                await client.call_tool("search", {"query": "coffee maker not working"})
            )
    assert found["results"][0]["id"] == old
    assert "vector" in found["results"][0]["found_by"]
    with Store.open(db, db_key) as store:
        assert count_missing(store.conn, new_id) == 0
