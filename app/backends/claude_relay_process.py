"""The Claude relay, process side (``mama agent-bridge``): MCP on stdio for the
Claude Code CLI, each call forwarded to the running app over the relay socket
(``claude_relay``).

Claude Code starts this process from the MCP config the Claude backend writes.
It connects to the app's socket, authenticates with the per-session token
from ``MAMA_BRIDGE_TOKEN``, lists the agent's tools and forwards every call.
It holds no store, no key and no grant of its own: the app decides. A call
the app refuses comes back as an MCP error result, never a broken protocol.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from mama_core.errors import MamaError

log = logging.getLogger(__name__)

TOKEN_ENV = "MAMA_BRIDGE_TOKEN"
START_GATE_ENV = "MAMA_BRIDGE_START_GATE"
"""A file the bridge waits for before it answers Claude Code (tests: a bridge that
starts late, as under heavy load); unset, it starts at once."""
GATE_POLL_S = 0.05
SERVER_NAME = "mama"
MAX_LINE = 8 * 1024 * 1024


class RelayUnavailableError(MamaError):
    """The app's relay socket is gone, or refused this process."""

    code = "bridge_unavailable"
    exit_code = 52


class RelayLink:
    """One authenticated connection to the app's relay socket; calls in order."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = 0
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, socket_path: str, token: str) -> RelayLink:
        try:
            reader, writer = await asyncio.open_unix_connection(socket_path, limit=MAX_LINE)
        except OSError as exc:
            raise RelayUnavailableError(f"MAMA is not reachable at {socket_path}: {exc}") from exc
        writer.write(json.dumps({"token": token}).encode() + b"\n")
        await writer.drain()
        answer = await reader.readline()
        if not answer or not json.loads(answer).get("ok"):
            writer.close()
            raise RelayUnavailableError("MAMA refused this bridge (wrong session token).")
        return cls(reader, writer)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        async with self._lock:
            self._ids += 1
            message = {"id": self._ids, "method": method, "params": params or {}}
            self._writer.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
            await self._writer.drain()
            line = await self._reader.readline()
        if not line:
            raise RelayUnavailableError("MAMA closed the bridge connection.")
        reply = json.loads(line)
        if "error" in reply:
            raise RelayUnavailableError(str(reply["error"]))
        return dict(reply["result"])

    def close(self) -> None:
        self._writer.close()


def build_server(link: RelayLink) -> Server[Any]:
    """An MCP server whose tools are the app's, forwarded over ``link``."""

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = await link.request("tools/list")
        tools = [
            types.Tool(
                name=str(t["name"]),
                description=str(t.get("description") or ""),
                input_schema=dict(t["inputSchema"]),
            )
            for t in listed.get("tools", [])
        ]
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            result = await link.request(
                "tools/call", {"name": params.name, "arguments": params.arguments or {}}
            )
        except RelayUnavailableError as exc:
            return types.CallToolResult(
                content=[types.TextContent(text=exc.message)], is_error=True
            )
        return types.CallToolResult(
            content=[types.TextContent(text=str(result.get("text", "")))],
            is_error=bool(result.get("isError")),
        )

    return Server(
        SERVER_NAME,
        title="MAMA",
        instructions="MAMA's memory actions for the owner's agent.",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve(socket_path: str, token: str) -> None:
    """Connect to the app and serve MCP on this process's stdio until stdin closes."""
    gate = os.environ.get(START_GATE_ENV)
    while gate and not os.path.exists(gate):
        await anyio.sleep(GATE_POLL_S)
    link = await RelayLink.connect(socket_path, token)
    try:
        server = build_server(link)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        link.close()


def run(socket_path: str) -> None:
    """The subcommand's body: the token comes from the environment, never argv."""
    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        raise RelayUnavailableError(f"{TOKEN_ENV} is not set; this command is started by MAMA.")
    anyio.run(serve, socket_path, token)
