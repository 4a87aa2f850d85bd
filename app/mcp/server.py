"""``mama mcp``: the MCP server for coding agents (Claude Code, Codex ...) over
the development memory, on stdio.

Each tool is a catalog action (``app.present.catalog_tools``), called as the connected
client: its input schema is the action's pydantic model's JSON schema, unchanged,
and its description the catalog's, so what a model sees here is what the
engine validates. Every call runs with the server's project grant and with
session facts built from the client's own ``initialize`` (or request envelope)
identity; a refusal comes back as an MCP error result carrying the catalog's
code and message, never as a protocol error.

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: the tools'
input schemas must be exactly the catalog's pydantic models' JSON schemas and
their calls must reach the one dispatcher with a payload it validates itself,
which the decorator API (schemas inferred from Python signatures, arguments
validated before our code runs) would not give us. The engine and the project
binding reach the handlers through the typed lifespan context.

Protocol eras: SDK 2.3.0 answers ``server/discover`` itself, and Claude Code
then speaks the 2026-07-28 per-request envelope; older clients use the
``initialize`` handshake. Either way the client's ``clientInfo`` arrives on
``ctx.session.client_params`` and becomes the actor of what it saves.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from app.mcp.identity import UNKNOWN_CLIENT, ClientIdentity
from app.mcp.project_scope import ProjectBinding
from app.mcp.wire_guard import claimed_stdin, screened_lines
from app.present.catalog_tools import (
    ToolCall,
    ToolSpec,
    advertised_output_schema,
    catalog_tool,
    failed,
    refused,
    result_text,
)
from app.team.errors import TeamError
from app.team.reach import TeamReach
from app.team.scopes import is_team_scope
from mama_core.errors import InvalidInputError, MamaError, UnknownActionError
from mama_core.memory import CATALOG, Engine, Grant, SessionFacts
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.inputs import SearchInput
from mama_core.memory.results import ActionResult, CheckpointEntry, SearchResult

log = logging.getLogger(__name__)

SERVER_NAME = "mama"

_NO_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
    "title": "CheckpointLoadInput",
}


class CheckpointLoadResult(ActionResult):
    """checkpoint_load: the project's latest checkpoint, or null when there is none."""

    checkpoint: CheckpointEntry | None


class TeamHitResult(ActionResult):
    """One team memory (``mama team``): its id is the team store's, not a personal one."""

    store: str
    """Always ``team``."""
    id: int
    kind: str
    summary: str
    topic: str
    scopes: list[str]
    author: str
    """The member role that saved it."""
    score: float


class McpSearchResult(SearchResult):
    """search: the personal results, and for a MAMA that joined a team its team's too."""

    team_results: list[TeamHitResult] | None = None
    """Team memories this member may read (only after ``mama team join``)."""
    team_reachable: bool | None = None
    team_note: str | None = None
    """Why team results are left out, when the team store cannot be reached."""


SEARCH_DESCRIPTION = (
    CATALOG.actions["memory.search"].description
    + " After `mama team join`, team memories this member may read come back as"
    " team_results (their ids are the team store's; get and retire take personal ids);"
    " scopes team:NAME search only the team."
)


class TeamSaveNotAnAgentsError(TeamError):
    """An agent's save into a team scope: every teammate's agent would believe it at once,
    with no review; the owner saves there (``mama remember --scope team:…``)."""

    code = "team_save_by_owner_only"


TOOLS: tuple[ToolSpec, ...] = (
    catalog_tool(CATALOG, "memory.save", name="save"),
    catalog_tool(
        CATALOG,
        "memory.search",
        name="search",
        description=SEARCH_DESCRIPTION,
        output_schema=McpSearchResult.model_json_schema(mode="serialization"),
    ),
    catalog_tool(CATALOG, "memory.read", name="get"),
    catalog_tool(CATALOG, "memory.update_outcome", name="update_outcome"),
    catalog_tool(CATALOG, "memory.retire", name="retire"),
    catalog_tool(CATALOG, "memory.link", name="link"),
    catalog_tool(CATALOG, "memory.timeline", name="timeline"),
    # Commitments are listed here; closing or moving one is the owner's word, which an
    # MCP turn never is (commitment.close/reschedule would refuse owner_turn_required).
    catalog_tool(CATALOG, "commitment.list", name="commitments"),
    catalog_tool(CATALOG, "checkpoint.save", name="checkpoint_save"),
    catalog_tool(
        CATALOG,
        "checkpoint.list",
        name="checkpoint_load",
        description="Load this project's latest checkpoint: where the work stood when it was "
        "last saved (null if none).",
        input_schema=_NO_ARGUMENTS,
        output_schema=CheckpointLoadResult.model_json_schema(mode="serialization"),
    ),
)
TOOLS_BY_NAME: Mapping[str, ToolSpec] = {t.name: t for t in TOOLS}


class StoreUnavailableError(MamaError):
    """The development memory could not be opened; every tool call says so."""

    code = "store_unavailable"


class EngineSlot:
    """The engine the tools run on, possibly still opening in a worker thread.

    ``mama mcp`` answers ``initialize`` and ``tools/list`` at once, because they
    need no store: a coding agent that snapshots its tools right after spawning
    the server (Claude Code's print mode does) must not miss them while the store
    derives its key and the embedding model loads. A tool call waits until the
    engine is open; if opening failed, every call is refused with the reason.
    """

    def __init__(self, engine: Engine | None = None) -> None:
        self._engine = engine
        self._error: BaseException | None = None
        self._ready: anyio.Event | None = None

    async def open(self, opener: Callable[[], Engine]) -> None:
        """Run ``opener`` in a worker thread; tool calls wait for it."""
        ready = self._ready = anyio.Event()
        try:
            self._engine = await anyio.to_thread.run_sync(opener)
        except Exception as exc:  # shown to every tool call, never a crash of the server
            log.exception("the development memory could not be opened")
            self._error = exc
        finally:
            ready.set()

    async def get(self) -> Engine:
        """The open engine; raises why it could not be opened."""
        if self._engine is None and self._ready is not None:
            await self._ready.wait()
        if self._engine is not None:
            return self._engine
        if isinstance(self._error, MamaError):
            raise self._error
        raise StoreUnavailableError(
            "MAMA could not open its development memory"
            + (f" ({type(self._error).__name__})" if self._error else "")
            + "; see mcp.log in MAMA's data folder, or run `mama doctor`."
        )


@dataclass(frozen=True)
class McpContext:
    """What every handler gets: the engine (maybe still opening), the scopes this
    process is bound to, and the team store when this MAMA joined one."""

    engine: EngineSlot
    binding: ProjectBinding
    team: TeamReach | None = None


def server_version() -> str:
    try:
        return metadata.version("mama")
    except metadata.PackageNotFoundError:
        return "0"


def instructions(binding: ProjectBinding) -> str:
    """The server's instructions to the model: short, and true of this binding."""
    return (
        f"MAMA development memory, bound to {binding.explain()}. Search it before deciding; "
        "save decisions, facts and lessons worth keeping; save a checkpoint before stopping. "
        "Guidance you save (preference, constraint, lesson, workflow) waits for the owner's review."
    )


def client_identity(info: types.Implementation | None) -> ClientIdentity:
    """The identity from ``clientInfo``; a client that gave none is named as unknown."""
    if info is None or not info.name.strip():
        return ClientIdentity(UNKNOWN_CLIENT)
    return ClientIdentity(info.name.strip(), (info.version or "").strip() or None)


def list_tools() -> list[types.Tool]:
    """The tool list: names, catalog descriptions and catalog input schemas."""
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema,
            output_schema=(
                None if spec.output_schema is None else advertised_output_schema(spec.output_schema)
            ),
            annotations=types.ToolAnnotations(
                read_only_hint=spec.read_only,
                # Nothing is ever deleted: a retire or a revision is a later record.
                destructive_hint=False,
                open_world_hint=False,
            ),
        )
        for spec in TOOLS
    ]


async def call_tool(
    engine: Engine,
    binding: ProjectBinding,
    client: ClientIdentity,
    name: str,
    arguments: Mapping[str, Any] | None,
    team: TeamReach | None = None,
) -> types.CallToolResult:
    """Run tool ``name`` for ``client``; every failure becomes an error result."""
    try:
        called = await _run(engine, binding, client, name, dict(arguments or {}), team)
    except MamaError as exc:
        called = refused(name, exc)
    except Exception:
        log.exception("tool %s failed inside MAMA", name)
        called = failed(name)
    return tool_result(called)


def tool_result(called: ToolCall) -> types.CallToolResult:
    """The MCP form of a tool call: an error's text starts with its code and message."""
    if called.is_error:
        error = called.error
        return types.CallToolResult(
            content=[types.TextContent(text=f"{error['code']}: {error['message']}")],
            structured_content=called.result,
            is_error=True,
        )
    return types.CallToolResult(
        content=[types.TextContent(text=result_text(called.result))],
        structured_content=called.result,
    )


async def _run(
    engine: Engine,
    binding: ProjectBinding,
    client: ClientIdentity,
    name: str,
    payload: dict[str, Any],
    team: TeamReach | None = None,
) -> ToolCall:
    spec = TOOLS_BY_NAME.get(name)
    if spec is None:
        raise UnknownActionError(
            f"There is no tool named {name!r}; the tools are {', '.join(TOOLS_BY_NAME)}.",
            details={"tool": name},
        )
    session = client.session_facts()
    grant = binding.grant()
    if spec.name == "save":
        _refuse_team_scopes(payload)
    if spec.name == "search" and (team is not None or _team_scopes(payload)):
        return ToolCall(name, await _search_with_team(engine, team, payload, session, grant), False)
    if spec.name != "checkpoint_load":
        result = await engine.dispatch_async(spec.action, payload, session, grant)
        return ToolCall(name, result, False)
    if payload:
        raise InvalidInputError(
            "checkpoint_load takes no arguments.", details={"fields": sorted(payload)}
        )
    for scope in binding.checkpoint_scopes:
        listed = await engine.dispatch_async(
            spec.action, {"scope": scope, "limit": 1}, session, grant
        )
        checkpoints = listed.get("checkpoints") or []
        if checkpoints:
            return ToolCall(name, {"checkpoint": checkpoints[0]}, False)
    return ToolCall(name, {"checkpoint": None}, False)


def _team_scopes(payload: Mapping[str, Any]) -> list[str]:
    scopes = payload.get("scopes")
    if not isinstance(scopes, list):
        return []
    return [s for s in cast(list[Any], scopes) if isinstance(s, str) and is_team_scope(s)]


def _refuse_team_scopes(payload: Mapping[str, Any]) -> None:
    asked = _team_scopes(payload)
    if asked:
        raise TeamSaveNotAnAgentsError(
            f"a coding agent does not save into {', '.join(asked)}: a team memory is "
            "believed by every teammate's agent at once, without review. Save it to this "
            "project and ask the owner to share it (`mama remember --scope "
            f"{asked[0]}`).",
            details={"scopes": asked},
        )


async def _search_with_team(
    engine: Engine,
    team: TeamReach | None,
    payload: dict[str, Any],
    session: SessionFacts,
    grant: Grant,
) -> dict[str, Any]:
    """The personal search and the team's, side by side: ``scopes`` naming only team
    scopes search only the team, only personal ones only this store. The team being away
    leaves its results out with a note; it never fails the personal search."""
    team_scopes = _team_scopes(payload)
    scopes = payload.get("scopes")
    personal_scopes = (
        None
        if scopes is None
        else [s for s in cast(list[Any], scopes) if s not in team_scopes]
        if isinstance(scopes, list)
        else scopes  # not a list: the personal search refuses it
    )
    personal_payload = {**payload, "scopes": personal_scopes or None}
    parsed = parse_input(SearchInput, **personal_payload)  # invalid_input, as search says it
    if team_scopes and team is None:
        from app.team.errors import NotJoinedError

        raise NotJoinedError(
            "this MAMA has not joined a team, so there is no team memory to search: "
            "the owner runs `mama team join STRING`."
        )
    result: dict[str, Any] = {"results": [], "count": 0}
    if personal_scopes or not team_scopes:
        result = await engine.dispatch_async("memory.search", personal_payload, session, grant)
    if team is not None and (team_scopes or not personal_scopes):
        found = await anyio.to_thread.run_sync(
            team.search,
            engine.embedder,
            parsed.query,
            parsed.limit,
            team_scopes,
            [str(k) for k in parsed.kinds or ()],
        )
        result["team_results"] = [hit.to_wire() for hit in found.hits]
        result["team_reachable"] = found.away is None
        if found.away is not None:
            result["team_note"] = f"{found.away} (team results left out; personal ones shown)"
    return result


def build_server(
    engine: Engine | EngineSlot, binding: ProjectBinding, team: TeamReach | None = None
) -> Server[McpContext]:
    """An MCP server over ``engine`` bound to ``binding`` (and ``team``, the team store
    of a MAMA that joined one); the caller owns the engine."""
    slot = engine if isinstance(engine, EngineSlot) else EngineSlot(engine)

    @asynccontextmanager
    async def lifespan(_server: Server[McpContext]) -> AsyncIterator[McpContext]:
        yield McpContext(slot, binding, team)

    async def on_list_tools(
        ctx: ServerRequestContext[McpContext], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list_tools())

    async def on_call_tool(
        ctx: ServerRequestContext[McpContext], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        state = ctx.lifespan_context
        client_params = ctx.session.client_params
        client = client_identity(client_params.client_info if client_params else None)
        try:
            engine = await state.engine.get()
        except MamaError as exc:
            return tool_result(refused(params.name, exc))
        return await call_tool(
            engine, state.binding, client, params.name, params.arguments, state.team
        )

    return Server(
        SERVER_NAME,
        version=server_version(),
        title="MAMA development memory",
        instructions=instructions(binding),
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(
    opener: Callable[[], Engine], binding: ProjectBinding, team: TeamReach | None = None
) -> None:
    """Serve one client over this process's stdin and stdout until it hangs up, the
    engine opening (``opener``, in a worker thread) while the server already answers.

    Stdin passes through ``wire_guard`` first, so a line the SDK would drop
    unanswered (invalid JSON, a malformed envelope) gets a JSON-RPC error. The SDK
    points fd 1 at stderr while it serves, so nothing said while the engine opens
    (a first model build) reaches the wire.
    """
    slot = EngineSlot()
    server = build_server(slot, binding, team)
    log.info("serving MCP on stdio, bound to %s", binding.describe())
    with claimed_stdin() as raw_stdin:
        lines = screened_lines(raw_stdin)
        # The SDK only iterates its stdin, which the screened lines do.
        async with (
            stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream),
            anyio.create_task_group() as opening,
        ):
            # Started before the server runs, so a tool call's wait is on this opening.
            opening.start_soon(slot.open, opener)
            lines.answer_with(write_stream.send)
            await server.run(read_stream, write_stream, server.create_initialization_options())
        # Leaving the task group waits for the opening thread: the caller then closes
        # what it opened, never while it is still being opened.


def run_stdio(
    opener: Callable[[], Engine], binding: ProjectBinding, team: TeamReach | None = None
) -> None:
    """``serve_stdio`` on a fresh event loop (the command line's entry)."""
    anyio.run(serve_stdio, opener, binding, team)
