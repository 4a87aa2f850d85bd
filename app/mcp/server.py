"""``mama mcp``: the development memory as a stdio MCP server.

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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from app.mcp.project_scope import ProjectBinding
from app.mcp.tools import call_tool, client_identity, list_tools
from app.mcp.wire_guard import claimed_stdin, screened_lines
from mama_core.memory import Engine

log = logging.getLogger(__name__)

SERVER_NAME = "mama"


@dataclass(frozen=True)
class McpContext:
    """What every handler gets: the engine and the scopes this process is bound to."""

    engine: Engine
    binding: ProjectBinding


def server_version() -> str:
    try:
        return metadata.version("mama")
    except metadata.PackageNotFoundError:
        return "0"


def instructions(binding: ProjectBinding) -> str:
    """The server's instructions to the model: short, and true of this binding."""
    return (
        f"MAMA development memory, bound to {binding.describe()}. Search it before deciding; "
        "save decisions, facts and lessons worth keeping; save a checkpoint before stopping. "
        "Guidance you save (preference, constraint, lesson, workflow) waits for the owner's review."
    )


def build_server(engine: Engine, binding: ProjectBinding) -> Server[McpContext]:
    """An MCP server over ``engine`` bound to ``binding``; the caller owns the engine."""

    @asynccontextmanager
    async def lifespan(_server: Server[McpContext]) -> AsyncIterator[McpContext]:
        yield McpContext(engine, binding)

    async def on_list_tools(
        ctx: ServerRequestContext[McpContext], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list_tools(ctx.lifespan_context.engine))

    async def on_call_tool(
        ctx: ServerRequestContext[McpContext], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        state = ctx.lifespan_context
        client_params = ctx.session.client_params
        client = client_identity(client_params.client_info if client_params else None)
        return await call_tool(state.engine, state.binding, client, params.name, params.arguments)

    return Server(
        SERVER_NAME,
        version=server_version(),
        title="MAMA development memory",
        instructions=instructions(binding),
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(engine: Engine, binding: ProjectBinding) -> None:
    """Serve one client over this process's stdin and stdout until it hangs up.

    Stdin passes through ``wire_guard`` first, so a line the SDK would drop
    unanswered (invalid JSON, a malformed envelope) gets a JSON-RPC error.
    """
    server = build_server(engine, binding)
    log.info("serving MCP on stdio, bound to %s", binding.describe())
    with claimed_stdin() as raw_stdin:
        lines = screened_lines(raw_stdin)
        # The SDK only iterates its stdin, which the screened lines do.
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            lines.answer_with(write_stream.send)
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(engine: Engine, binding: ProjectBinding) -> None:
    """``serve_stdio`` on a fresh event loop (the command line's entry)."""
    anyio.run(serve_stdio, engine, binding)
