"""The Claude relay, app side: a local socket through which the Claude Code CLI
calls the owner's engine, as tools of the agent's current turn.

Claude Code speaks MCP only to processes it starts, so it starts the relay
process (``mama agent-bridge``, ``claude_relay_process``) from our MCP config;
that process connects to this Unix socket, proves itself with the per-session
token as its first line, then sends JSON lines: ``tools/list`` and
``tools/call``. Calls run through the ``ToolBox`` of the turn in progress, so
they carry that turn's session facts; outside a turn they are refused. The
socket lives in a private 0700 folder and is removed on close.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from app.backends.toolbox import ToolBox
from app.local.log_redaction import register_secret
from app.present.catalog_tools import ToolSpec, error_body, result_text

log = logging.getLogger(__name__)

MAX_LINE = 8 * 1024 * 1024


class ClaudeRelay:
    """Serves the current turn's tools to authenticated relay processes."""

    def __init__(self, specs: list[ToolSpec]) -> None:
        self.specs = specs
        self.token = secrets.token_urlsafe(32)
        register_secret(self.token)
        self.folder = Path(tempfile.mkdtemp(prefix="mama-bridge-"))
        self.folder.chmod(0o700)
        self.socket_path = self.folder / "bridge.sock"
        self.toolbox: ToolBox | None = None
        self.refused = 0
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(
            self._serve, path=str(self.socket_path), limit=MAX_LINE
        )
        self.socket_path.chmod(0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._clients):
            task.cancel()
        for task in list(self._clients):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        shutil.rmtree(self.folder, ignore_errors=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._clients.add(task)
        try:
            hello = await reader.readline()
            if not self._authentic(hello):
                self.refused += 1
                log.warning("refused a relay connection without the session token")
                return
            await _write(writer, {"ok": True})
            while line := await reader.readline():
                try:
                    request = json.loads(line)
                except ValueError:
                    log.warning("the relay process sent a malformed line; ignored")
                    continue
                await _write(writer, await self._answer(request))
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            if task is not None:
                self._clients.discard(task)
            writer.close()

    def _authentic(self, hello: bytes) -> bool:
        try:
            token = json.loads(hello).get("token", "")
        except (ValueError, AttributeError):
            return False
        return isinstance(token, str) and hmac.compare_digest(token, self.token)

    async def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        rid = request.get("id")
        method = request.get("method")
        if method == "tools/list":
            tools = [
                {"name": s.name, "description": s.description, "inputSchema": s.input_schema}
                for s in self.specs
            ]
            return {"id": rid, "result": {"tools": tools}}
        if method == "tools/call":
            params = request.get("params") or {}
            toolbox = self.toolbox
            if toolbox is None:
                body = error_body("no_turn", "No turn is in progress.")
                return {"id": rid, "result": {"text": result_text(body), "isError": True}}
            outcome = await toolbox.call(str(params.get("name", "")), params.get("arguments") or {})
            return {"id": rid, "result": {"text": outcome.text, "isError": outcome.is_error}}
        return {"id": rid, "error": f"unknown method {method!r}"}


async def _write(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    writer.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
    await writer.drain()
