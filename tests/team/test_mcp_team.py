"""A coding agent's MCP ``search`` sees the team scopes its MAMA's member holds, beside
the personal results and marked as the team's; it never sees another team's rows; a
team server that is away leaves the personal search working with one note; an agent
does not save into a team scope. Real PostgreSQL (pgserver), the real MCP SDK client
in memory, the real e5 model."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import psycopg
import pytest
from jsonschema import Draft202012Validator
from mcp.client import Client

from app.mcp.project_scope import ProjectBinding
from app.mcp.server import build_server
from app.team.members import invite_member
from app.team.reach import TeamReach
from app.team.schema import init_team_store
from app.team.store import TeamSave, TeamStore
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine
from mama_core.store import DbKey, Store
from tests.app.mcp.conftest import error_code, owner_dispatch, structured

pytestmark = pytest.mark.anyio

ENG_ROW = "Releases ship on Thursdays after the web tests pass"
OPS_ROW = "Releases of the database ship on Tuesdays"
PERSONAL_ROW = "In this project releases ship from the main branch"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def join_strings(team_db: str, unique: str, e5_embedder: GgufEmbedder) -> dict[str, str]:
    """eng (team:eng) and ops (team:ops), each with one decision saved."""
    with psycopg.connect(team_db) as admin:
        init_team_store(admin, e5_embedder.dim, e5_embedder.model_id)
        eng = invite_member(admin, team_db, f"eng_{unique}", ["team:eng"])
        ops = invite_member(admin, team_db, f"ops_{unique}", ["team:ops"])
    for joined, row, scope in ((eng, ENG_ROW, "team:eng"), (ops, OPS_ROW, "team:ops")):
        with psycopg.connect(joined.join_string) as conn:
            TeamStore(conn, e5_embedder).remember(TeamSave("decision", row, (scope,)))
    return {"eng": eng.join_string, "ops": ops.join_string}


@pytest.fixture
def engine(tmp_path: Path, db_key: DbKey, e5_embedder: GgufEmbedder) -> Iterator[Engine]:
    """A development memory for project alpha with one decision of its own."""
    with Store.open(tmp_path / "dev-memory.db", db_key) as store, Engine(store, e5_embedder) as e:
        owner_dispatch(
            e,
            "memory.save",
            {"kind": "decision", "summary": PERSONAL_ROW, "scopes": ["project:alpha"]},
        )
        yield e


def client(engine: Engine, team: TeamReach | None) -> Client:
    return Client(
        build_server(engine, ProjectBinding("alpha"), team),
        client_info=types.Implementation(name="test-agent", version="1.0"),
    )


def reach(url: str) -> TeamReach:
    return TeamReach(lambda: url)


async def search(engine: Engine, team: TeamReach | None, **arguments: Any) -> dict[str, Any]:
    async with client(engine, team) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        result = await session.call_tool("search", {"query": "when do releases ship", **arguments})
    found = structured(result)
    schema = listed["search"].output_schema
    assert schema is not None
    Draft202012Validator(schema).validate(found)  # the advertised schema holds team hits
    return found


async def test_search_gives_personal_and_the_members_team_results_never_another_team(
    engine: Engine, join_strings: dict[str, str]
) -> None:
    found = await search(engine, reach(join_strings["eng"]))
    assert [hit["summary"] for hit in found["results"]] == [PERSONAL_ROW]
    team = found["team_results"]
    assert [(hit["store"], hit["summary"], hit["scopes"]) for hit in team] == [
        ("team", ENG_ROW, ["team:eng"])
    ]
    assert found["team_reachable"] is True and "team_note" not in found
    # ops' agent finds ops' row with the same words (the control: it was findable).
    ops = await search(engine, reach(join_strings["ops"]))
    assert [hit["summary"] for hit in ops["team_results"]] == [OPS_ROW]


async def test_team_scopes_alone_search_only_the_team_and_personal_alone_only_here(
    engine: Engine, join_strings: dict[str, str]
) -> None:
    only_team = await search(engine, reach(join_strings["eng"]), scopes=["team:eng"])
    assert only_team["results"] == []
    assert [hit["summary"] for hit in only_team["team_results"]] == [ENG_ROW]
    only_here = await search(engine, reach(join_strings["eng"]), scopes=["project:alpha"])
    assert [hit["summary"] for hit in only_here["results"]] == [PERSONAL_ROW]
    assert "team_results" not in only_here
    # A team scope this member was not granted is refused by the database's own rule:
    # nothing of ops comes back (beside the eng control above).
    other = await search(engine, reach(join_strings["eng"]), scopes=["team:ops"])
    assert other["team_results"] == []


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_a_team_server_away_leaves_the_personal_search_working_with_a_note(
    engine: Engine,
) -> None:
    away = reach(f"postgresql://eng_x:pw@127.0.0.1:{closed_port()}/team")
    found = await search(engine, away)
    assert [hit["summary"] for hit in found["results"]] == [PERSONAL_ROW]
    assert found["team_results"] == [] and found["team_reachable"] is False
    assert found["team_note"].startswith("team_unreachable: ")
    assert "pw" not in found["team_note"]


async def test_without_a_team_search_is_unchanged_and_a_team_scope_says_to_join(
    engine: Engine,
) -> None:
    plain = await search(engine, None)
    assert [hit["summary"] for hit in plain["results"]] == [PERSONAL_ROW]
    assert not {"team_results", "team_reachable", "team_note"} & set(plain)
    async with client(engine, None) as session:
        refused = await session.call_tool("search", {"query": "x", "scopes": ["team:eng"]})
    assert error_code(refused) == "team_not_joined"


async def test_an_agent_does_not_save_into_a_team_scope(
    engine: Engine, join_strings: dict[str, str], e5_embedder: GgufEmbedder
) -> None:
    async with client(engine, reach(join_strings["eng"])) as session:
        refused = await session.call_tool(
            "save", {"kind": "decision", "summary": "We freeze on Fridays", "scopes": ["team:eng"]}
        )
        saved = await session.call_tool(
            "save", {"kind": "decision", "summary": "We freeze on Fridays"}
        )  # the control: the same save into the project is taken
    assert error_code(refused) == "team_save_by_owner_only"
    assert "mama remember --scope team:eng" in structured(refused)["error"]["message"]
    assert not saved.is_error, saved
    with psycopg.connect(join_strings["eng"]) as conn:
        hits = TeamStore(conn, e5_embedder).search("We freeze on Fridays", 10)
    assert [hit.summary for hit in hits] == [ENG_ROW]  # nothing new in the team store
