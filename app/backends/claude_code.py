"""The Claude Code backend: one persistent ``claude`` process in print mode.

``claude -p --input-format stream-json --output-format stream-json --verbose``
reads one ``{"type":"user",…}`` line per turn and answers with ``system``
(init), ``assistant``, ``user`` (tool results) and finally ``result`` lines.
Our actions reach it as an MCP server (``--mcp-config`` with
``--strict-mcp-config``): ``mama agent-bridge``, which forwards each call to
this process over a private socket authenticated by a per-session token
(``ClaudeRelay``). Built-in tools are switched off (``--tools ""``) and only
our tools are allowed, so the agent acts only through the catalog.

The conversation has a session id kept in ``runtime_state``; after a crash
(of the CLI or of the app) the process is started again with ``--resume`` and
the same id, so the conversation continues where it was.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.backends.base import BackendError, ToolsUnreachableError, TurnReply, TurnRequest
from app.backends.claude_relay import ClaudeRelay
from app.backends.claude_relay_process import START_GATE_ENV, TOKEN_ENV
from app.backends.process import JsonLineProcess, ProcessEnded, find_executable, read_version
from app.backends.toolbox import ToolBox, ToolSpec
from app.backends.transcripts import CLAUDE_SESSION_KEY, forget_claude_transcripts
from app.durable.state import delete_state, get_state, set_state
from app.durable.transaction import RuntimeDb

log = logging.getLogger(__name__)

SESSION_KEY = CLAUDE_SESSION_KEY
MCP_SERVER = "mama"
INSTALL_HINT = (
    "Install Claude Code (npm install -g @anthropic-ai/claude-code), or set MAMA_CLAUDE_BIN "
    "to its path, or choose another agent backend in the settings. Until then I answer "
    "commands only."
)

QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    # Offer our few tools directly, not behind Claude Code's ToolSearch.
    "ENABLE_TOOL_SEARCH": "false",
}
MCP_WAIT_MS = "120000"
"""How long Claude Code waits for MAMA's MCP server before a turn: its ``MCP_TIMEOUT``
(one connection attempt) and ``MCP_CONNECT_TIMEOUT_MS`` (how long a blocking start
waits for all servers; 5 s by default in the CLI). A loaded machine can start the bridge
later than that: the turn then runs with the tools "pending". Unless the owner set them;
a turn that still lacks the tools is retried (``ToolsUnreachableError``)."""


@dataclass(frozen=True)
class ClaudeSettings:
    executable: str
    workdir: Path
    system_prompt: str
    model: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the CLI (e.g. ANTHROPIC_BASE_URL)."""
    turn_timeout: float = 600.0


class _NoConversation(Exception):
    """``--resume`` named a session the CLI does not have."""


def bridge_command() -> list[str]:
    """How Claude Code starts ``mama agent-bridge`` with this installation."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "agent-bridge"]
    script = Path(sys.executable).with_name("mama")
    if script.is_file():
        return [str(script), "agent-bridge"]
    return [sys.executable, "-c", "from app.cli import main; main()", "agent-bridge"]


class ClaudeCodeBackend:
    """A persistent Claude Code session whose only tools are our actions."""

    name = "claude-code"
    speaks_for_owner = False
    writes_briefs = True

    def __init__(self, settings: ClaudeSettings, state: RuntimeDb | None) -> None:
        self.settings = settings
        self.state = state
        self.process: JsonLineProcess | None = None
        self.bridge: ClaudeRelay | None = None
        self.session_id: str | None = None
        self.starts: list[list[str]] = []
        """The argument lists the CLI was started with (for the log and tests)."""
        self.init_event: dict[str, Any] | None = None
        self._executable: str | None = None
        self._version: str | None = None
        self._fresh = True
        self._specs: list[ToolSpec] = []
        self._tools_status: str | None = None
        """MAMA's MCP server as the last ``system/init`` line reported it."""
        self._restart_before_turn = False
        self._on_text: Callable[[str], None] | None = None
        """The running turn's listener for the reply as it is written."""

    @property
    def version(self) -> str | None:
        return self._version

    @property
    def wants_session_context(self) -> bool:
        return self._fresh

    def _env(self) -> dict[str, str]:
        env = {**os.environ, **QUIET_ENV}
        env.setdefault("MCP_TIMEOUT", MCP_WAIT_MS)
        env.setdefault("MCP_CONNECT_TIMEOUT_MS", MCP_WAIT_MS)
        return {**env, **self.settings.env}

    async def start(self, tools: list[ToolSpec]) -> None:
        self._executable = find_executable(self.settings.executable, "Claude Code", INSTALL_HINT)
        self._specs = tools
        self._version = await read_version(self._executable, self._env())
        self.bridge = ClaudeRelay(tools)
        await self.bridge.start()
        self._write_mcp_config()
        stored = None
        if self.state is not None:
            stored = await asyncio.to_thread(get_state, self.state, SESSION_KEY)
        if stored:
            self.session_id, self._fresh = stored, False
        else:
            await self._new_session()
        await self._spawn(resume=not self._fresh)

    async def close(self) -> None:
        if self.process is not None:
            await self.process.stop()
            self.process = None
        if self.bridge is not None:
            await self.bridge.close()
            self.bridge = None

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        assert self.bridge is not None
        self.bridge.toolbox = tools
        self._on_text = request.on_text
        try:
            if self._restart_before_turn:
                # The tools failed to start last time: a new process starts them again.
                log.info("restarting Claude Code so that it starts MAMA's tools again")
                self._restart_before_turn = False
                await self._respawn(resume=True)
            try:
                reply = await self._turn(request.prompt)
            except ProcessEnded as exc:
                log.warning("Claude Code stopped during a turn (%s); restarting it", exc.detail)
                await self._respawn(resume=True)  # the same conversation, continued
                reply = await self._turn(request.prompt)
        except ProcessEnded as exc:
            raise BackendError(f"Claude Code stopped again: {exc.detail}") from exc
        finally:
            self.bridge.toolbox = None
            self._on_text = None
        self._fresh = False
        return reply

    async def forget_session(self) -> list[Path]:
        """After a purge: end the conversation, never resume it, and delete the
        transcripts of MAMA's Claude Code conversations. Returns the paths deleted."""
        await self.close()
        ids = [self.session_id] if self.session_id else []
        if self.state is not None:
            stored = await asyncio.to_thread(get_state, self.state, SESSION_KEY)
            ids += [stored] if stored else []
            await asyncio.to_thread(delete_state, self.state, SESSION_KEY)
        self.session_id, self._fresh = None, True
        return await asyncio.to_thread(
            forget_claude_transcripts, self._env(), self.settings.workdir, ids
        )

    # --- the process ----------------------------------------------------

    async def _new_session(self) -> None:
        self.session_id = str(uuid.uuid4())
        self._fresh = True
        await self._remember_session()

    async def _remember_session(self) -> None:
        if self.state is not None and self.session_id is not None:
            await asyncio.to_thread(set_state, self.state, SESSION_KEY, self.session_id)

    def _mcp_config_path(self) -> Path:
        assert self.bridge is not None
        return self.bridge.folder / "mcp.json"

    def _write_mcp_config(self) -> None:
        assert self.bridge is not None
        command = bridge_command()
        config = {
            "mcpServers": {
                MCP_SERVER: {
                    "type": "stdio",
                    "command": command[0],
                    "args": [*command[1:], "--socket", str(self.bridge.socket_path)],
                    "env": {TOKEN_ENV: self.bridge.token, **self._bridge_env()},
                }
            }
        }
        path = self._mcp_config_path()
        path.write_text(json.dumps(config), "utf-8")
        path.chmod(0o600)

    def _bridge_env(self) -> dict[str, str]:
        """The start gate (tests), handed on to the bridge if set for the backend."""
        gate = self._env().get(START_GATE_ENV)
        return {START_GATE_ENV: gate} if gate else {}

    def _args(self, resume: bool) -> list[str]:
        """The command line: print mode, stream-json both ways, only our MCP tools."""
        assert self._executable is not None and self.session_id is not None
        allowed = ",".join(f"mcp__{MCP_SERVER}__{s.name}" for s in self._specs)
        args = [
            self._executable,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--mcp-config",
            str(self._mcp_config_path()),
            "--strict-mcp-config",
            "--tools",
            "",
            "--allowedTools",
            allowed,
            "--system-prompt",
            self.settings.system_prompt,
        ]
        args += ["--resume", self.session_id] if resume else ["--session-id", self.session_id]
        if self.settings.model:
            args += ["--model", self.settings.model]
        return args

    async def _spawn(self, resume: bool) -> None:
        args = self._args(resume)
        self.starts.append(args)
        self.process = await JsonLineProcess.spawn(
            "claude", args, cwd=self.settings.workdir, env=self._env()
        )

    async def _respawn(self, resume: bool) -> None:
        if self.process is not None:
            await self.process.stop(grace=1.0)
        await self._spawn(resume)

    async def _turn(self, prompt: str) -> TurnReply:
        message = {"type": "user", "message": {"role": "user", "content": prompt}}
        try:
            return await self._exchange(message)
        except _NoConversation:
            # The session to resume was never written (or was deleted): start afresh.
            log.warning("session %s cannot be resumed; starting a new one", self.session_id)
            await self._new_session()
            await self._respawn(resume=False)
            return await self._exchange(message)

    async def _exchange(self, message: dict[str, Any]) -> TurnReply:
        process = self.process
        assert process is not None
        try:
            async with asyncio.timeout(self.settings.turn_timeout):
                await process.send(message)
                return await self._read_until_result(process, self._on_text)
        except TimeoutError as exc:
            process.kill()
            raise BackendError(
                "Claude Code took too long to answer; the turn was stopped."
            ) from exc

    async def _read_until_result(
        self, process: JsonLineProcess, on_text: Callable[[str], None] | None = None
    ) -> TurnReply:
        texts: list[str] = []
        while True:
            event = await process.receive()
            kind = event.get("type")
            log.debug("claude event %s/%s", kind, event.get("subtype"))
            if kind == "system" and event.get("subtype") == "init":
                await self._on_init(event)
            elif kind == "assistant":
                content = (event.get("message") or {}).get("content") or []
                written = [b.get("text", "") for b in content if b.get("type") == "text"]
                texts += written
                if written and on_text is not None:
                    on_text("\n".join(texts))  # each message as it arrives
            elif kind == "result":
                errors = [str(e) for e in event.get("errors") or []]
                if any("No conversation found" in e for e in errors):
                    raise _NoConversation(errors[0])
                if event.get("is_error") or event.get("subtype") not in (None, "success"):
                    detail = event.get("result") or event.get("subtype") or "an error"
                    raise BackendError(f"Claude Code could not finish the turn: {detail}")
                self._check_tools()
                result = event.get("result")
                return TurnReply(result if isinstance(result, str) and result else "\n".join(texts))

    async def _on_init(self, event: dict[str, Any]) -> None:
        self.init_event = event
        reported = event.get("session_id")
        if isinstance(reported, str) and reported and reported != self.session_id:
            self.session_id = reported
            await self._remember_session()
        servers = {s.get("name"): s.get("status") for s in event.get("mcp_servers") or []}
        status = servers.get(MCP_SERVER)
        self._tools_status = str(status) if status is not None else "missing"
        if status != "connected":
            log.warning("Claude Code reports the MAMA tools as %s", self._tools_status)

    def _check_tools(self) -> None:
        """After a turn: if the model had no tools in it, the turn does not count."""
        status, self._tools_status = self._tools_status, None
        if status is None or status == "connected":
            return  # no init line this turn: the session's tools were up before
        # A new process (same conversation) starts the tools anew: the real CLI was seen
        # to turn a server that was still ``pending`` into ``failed`` on its next turn
        # even when the server had come up meanwhile, so waiting in the same process
        # costs an attempt.
        self._restart_before_turn = True
        raise ToolsUnreachableError(
            f"Claude Code could not reach MAMA's tools yet (they were {status}); "
            "the turn will be tried again"
        )
