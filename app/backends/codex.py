"""The Codex backend: ``codex app-server`` over stdio, JSON-RPC lines.

``initialize`` (with ``experimentalApi``, which dynamic tools need), then
``thread/start`` with our actions as ``dynamicTools``, then one ``turn/start``
per turn. A tool call arrives as the server request ``item/tool/call``; our
dispatcher answers it through the turn's toolbox. The agent's words come as
``item/completed`` notifications with ``agentMessage`` items; the turn ends
with ``turn/completed``. The thread id is kept in ``runtime_state``; after a
crash the server is started again and the thread resumed.

``dynamicTools`` and ``item/tool/call`` are experimental in Codex: the CLI
version is pinned in the tests, which fail loudly when the protocol moves.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from app.backends.base import BackendError, BackendUnavailableError, TurnReply, TurnRequest
from app.backends.process import JsonLineProcess, ProcessEnded, find_executable, read_version
from app.backends.toolbox import ToolBox, ToolSpec
from app.backends.transcripts import CODEX_THREAD_KEY, forget_codex_transcripts
from app.durable.state import delete_state, get_state, set_state
from app.durable.transaction import RuntimeDb
from mama_core.errors import MamaError
from mama_core.json_types import JsonObject

log = logging.getLogger(__name__)

THREAD_KEY = CODEX_THREAD_KEY
DISABLED_FEATURES = (
    "plugins",  # its only outside calls (a plugin sync)
    # Built-in tools the owner's agent must not have: it acts only through our actions.
    "shell_tool",
    "unified_exec",
    "multi_agent",
    "goals",
    "view_image",
    "apps",
    "browser_use",
    "computer_use",
    "image_generation",
    "sleep_tool",
    "tool_suggest",
    "skill_search",
)
INSTALL_HINT = (
    "Install Codex (npm install -g @openai/codex), or set MAMA_CODEX_BIN to its path, or "
    "choose another agent backend in the settings. Until then I answer commands only."
)


@dataclass(frozen=True)
class CodexSettings:
    executable: str
    workdir: Path
    instructions: str
    model: str | None = None
    config: tuple[str, ...] = ()
    """Extra ``-c key=value`` overrides (e.g. a model provider)."""
    env: dict[str, str] = field(default_factory=dict)
    turn_timeout: float = 600.0


class RpcError(Exception):
    """The app-server answered a request with an error."""


class CodexBackend:
    """A Codex app-server thread whose tools include our actions."""

    name = "codex"
    speaks_for_owner = False
    writes_briefs = True

    def __init__(self, settings: CodexSettings, state: RuntimeDb | None) -> None:
        self.settings = settings
        self.state = state
        self.process: JsonLineProcess | None = None
        self.thread_id: str | None = None
        self.tool_calls: list[JsonObject] = []
        self._executable: str | None = None
        self._version: str | None = None
        self._specs: list[ToolSpec] = []
        self._fresh = True
        self._ids = itertools.count(1)
        self._toolbox: ToolBox | None = None
        self._on_text: Callable[[str], None] | None = None
        """The running turn's listener for the reply as it is written."""

    @property
    def version(self) -> str | None:
        return self._version

    @property
    def wants_session_context(self) -> bool:
        return self._fresh

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.settings.env}

    async def start(self, tools: list[ToolSpec]) -> None:
        self._executable = find_executable(self.settings.executable, "Codex", INSTALL_HINT)
        self._specs = tools
        self._version = await read_version(self._executable, self._env())
        await self._launch()

    async def close(self) -> None:
        if self.process is not None:
            await self.process.stop()
            self.process = None

    async def forget_session(self) -> list[Path]:
        """After a purge: end the thread, never resume it, and delete it — through the
        app-server's ``thread/delete`` (its history database and rollout) and by
        removing its rollout files. Returns the paths deleted."""
        ids = [self.thread_id] if self.thread_id else []
        if self.state is not None:
            stored = await asyncio.to_thread(get_state, self.state, THREAD_KEY)
            ids += [stored] if stored and stored not in ids else []
        await self._delete_threads(ids)
        await self.close()
        if self.state is not None:
            await asyncio.to_thread(delete_state, self.state, THREAD_KEY)
        self.thread_id, self._fresh = None, True
        return await asyncio.to_thread(forget_codex_transcripts, self._env(), ids)

    async def _delete_threads(self, ids: list[str]) -> None:
        """Ask the app-server (started for it if need be) to delete ``ids``."""
        if not ids:
            return
        try:
            if self.process is None:
                self._executable = self._executable or find_executable(
                    self.settings.executable, "Codex", INSTALL_HINT
                )
                self.process = await JsonLineProcess.spawn(
                    "codex", self._args(), cwd=self.settings.workdir, env=self._env()
                )
                await self._request(
                    "initialize",
                    {
                        "clientInfo": {"name": "mama", "title": "MAMA", "version": _our_version()},
                        "capabilities": {"experimentalApi": True},
                    },
                )
                await self.process.send({"method": "initialized"})
            async with asyncio.timeout(self.settings.turn_timeout):
                for thread_id in ids:
                    await self._request("thread/delete", {"threadId": thread_id})
        except (RpcError, ProcessEnded, BackendError, MamaError, OSError, TimeoutError) as exc:
            log.warning("Codex could not delete thread(s) %s: %s", ", ".join(ids), exc)

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        self._toolbox = tools
        self._on_text = request.on_text
        try:
            try:
                reply = await self._turn(request.prompt)
            except ProcessEnded as exc:
                log.warning("Codex stopped during a turn (%s); restarting it", exc.detail)
                await self._relaunch()
                reply = await self._turn(request.prompt)
        except ProcessEnded as exc:
            raise BackendError(f"Codex stopped again: {exc.detail}") from exc
        finally:
            self._toolbox = None
            self._on_text = None
        self._fresh = False
        return reply

    # --- the server and the thread --------------------------------------

    def _args(self) -> list[str]:
        assert self._executable is not None
        args = [self._executable, "app-server"]
        for feature in DISABLED_FEATURES:
            args += ["--disable", feature]
        overrides = [
            'approval_policy="never"',
            'sandbox_mode="read-only"',
            'web_search="disabled"',  # the agent reads the web only through what MAMA gives it
            *self.settings.config,
        ]
        if self.settings.model:
            overrides.append(f"model={json.dumps(self.settings.model)}")
        for override in overrides:
            args += ["-c", override]
        return args

    async def _launch(self) -> None:
        self.process = await JsonLineProcess.spawn(
            "codex", self._args(), cwd=self.settings.workdir, env=self._env()
        )
        try:
            await self._request(
                "initialize",
                {
                    "clientInfo": {"name": "mama", "title": "MAMA", "version": _our_version()},
                    "capabilities": {"experimentalApi": True},
                },
            )
            await self.process.send({"method": "initialized"})
            await self._open_thread()
        except RpcError as exc:
            raise BackendUnavailableError(f"Codex refused to start a session: {exc}") from exc

    async def _relaunch(self) -> None:
        if self.process is not None:
            await self.process.stop(grace=1.0)
        await self._launch()

    async def _open_thread(self) -> None:
        """Resume our thread (this process's, or the one kept in the store), else start one."""
        stored = self.thread_id
        if stored is None and self.state is not None:
            stored = await asyncio.to_thread(get_state, self.state, THREAD_KEY)
        if stored:
            try:
                await self._request("thread/resume", {"threadId": stored, **self._thread_params()})
                self.thread_id, self._fresh = stored, False
                return
            except RpcError as exc:
                log.warning(
                    "Codex thread %s cannot be resumed (%s); starting a new one", stored, exc
                )
        result = await self._request(
            "thread/start", {**self._thread_params(), "dynamicTools": self._dynamic_tools()}
        )
        self.thread_id = str(result["thread"]["id"])
        self._fresh = True
        if self.state is not None:
            await asyncio.to_thread(set_state, self.state, THREAD_KEY, self.thread_id)

    def _thread_params(self) -> JsonObject:
        return {
            "cwd": str(self.settings.workdir),
            "developerInstructions": self.settings.instructions,
            "approvalPolicy": "never",
            "sandbox": "read-only",
        }

    def _dynamic_tools(self) -> list[JsonObject]:
        return [
            {
                "type": "function",
                "name": s.name,
                "description": s.description,
                "inputSchema": s.input_schema,
            }
            for s in self._specs
        ]

    # --- JSON-RPC -------------------------------------------------------

    async def _request(self, method: str, params: JsonObject) -> JsonObject:
        """Send a request and read until its response, serving what arrives meanwhile."""
        process = self.process
        assert process is not None
        rid = next(self._ids)
        await process.send({"method": method, "id": rid, "params": params})
        while True:
            message = await process.receive()
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise RpcError(json.dumps(message["error"])[:500])
                return dict(message.get("result") or {})
            await self._serve(message, [])

    async def _turn(self, prompt: str) -> TurnReply:
        process = self.process
        assert process is not None and self.thread_id is not None
        texts: list[str] = []
        try:
            async with asyncio.timeout(self.settings.turn_timeout):
                await self._request(
                    "turn/start",
                    {"threadId": self.thread_id, "input": [{"type": "text", "text": prompt}]},
                )
                while True:
                    message = await process.receive()
                    written = len(texts)
                    done = await self._serve(message, texts)
                    if done is not None:
                        return done
                    if len(texts) > written and self._on_text is not None:
                        self._on_text("\n\n".join(texts))  # each message as it arrives
        except TimeoutError as exc:
            process.kill()
            raise BackendError("Codex took too long to answer; the turn was stopped.") from exc
        except RpcError as exc:
            raise BackendError(f"Codex refused the turn: {exc}") from exc

    async def _serve(self, message: JsonObject, texts: list[str]) -> TurnReply | None:
        """Handle one server message; a ``TurnReply`` when the turn completed."""
        method = message.get("method")
        params = message.get("params") or {}
        if method is not None and "id" in message:
            await self._answer(message["id"], str(method), params)
            return None
        if method == "item/completed":
            item = params.get("item") or {}
            if item.get("type") == "agentMessage" and item.get("text"):
                texts.append(str(item["text"]))
        elif method == "turn/completed":
            turn = params.get("turn") or {}
            if turn.get("status") == "failed":
                error = (turn.get("error") or {}).get("message") or "the turn failed"
                raise BackendError(f"Codex could not finish the turn: {error}")
            return TurnReply("\n\n".join(texts))
        elif method == "error":
            log.warning("Codex reported: %s", json.dumps(params)[:500])
        return None

    async def _answer(self, rid: Any, method: str, params: JsonObject) -> None:
        """Answer a server request: tool calls through the toolbox; anything else declined."""
        process = self.process
        assert process is not None
        if method == "item/tool/call":
            self.tool_calls.append(params)
            toolbox = self._toolbox
            if toolbox is None:
                text, ok = (
                    '{"error": {"code": "no_turn", "message": "No turn is in progress."}}',
                    False,
                )
            else:
                outcome = await toolbox.call(str(params.get("tool", "")), params.get("arguments"))
                text, ok = outcome.text, not outcome.is_error
            result = {"contentItems": [{"type": "inputText", "text": text}], "success": ok}
            await process.send({"id": rid, "result": result})
            return
        log.warning("Codex asked for %s; declined (MAMA acts only through its tools)", method)
        await process.send(
            {"id": rid, "error": {"code": -32601, "message": f"{method} is not supported by MAMA"}}
        )


def _our_version() -> str:
    try:
        return metadata.version("mama")
    except metadata.PackageNotFoundError:
        return "0"
