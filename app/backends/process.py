"""A CLI agent as a child process speaking JSON lines on stdin/stdout.

Shared by the Claude Code and Codex backends: find the executable (a clear
``BackendUnavailableError`` if it is missing), start it in its own process
group, write JSON lines, read JSON lines (a malformed line is logged and
skipped, so the session goes on), keep the tail of stderr for error messages,
and stop it politely, then firmly.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import shutil
import signal
from pathlib import Path
from typing import Any

from app.backends.base import BackendUnavailableError

log = logging.getLogger(__name__)

LINE_LIMIT = 32 * 1024 * 1024


class ProcessEnded(Exception):
    """The process closed its output (exited or crashed)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def find_executable(configured: str, product: str, install_hint: str) -> str:
    """The executable's path, or a ``BackendUnavailableError`` that says what to do."""
    if os.sep in configured:
        path = Path(configured).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    else:
        found = shutil.which(configured)
        if found:
            return found
    raise BackendUnavailableError(
        f"{product} is not installed here (no '{configured}' command found). {install_hint}"
    )


async def read_version(executable: str, env: dict[str, str]) -> str | None:
    """The first version-looking word of ``EXE --version`` (None if it will not say)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            executable,
            "--version",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    except (OSError, TimeoutError):
        return None
    for word in out.decode(errors="replace").split():
        if word[:1].isdigit():
            return word
    return None


class JsonLineProcess:
    """One running child process exchanging JSON lines."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process) -> None:
        self.name = name
        self.proc = proc
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self.malformed = 0
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name=f"{name}-stderr")

    @classmethod
    async def spawn(
        cls, name: str, args: list[str], *, cwd: Path, env: dict[str, str]
    ) -> JsonLineProcess:
        cwd.mkdir(parents=True, exist_ok=True)
        try:
            proc = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(cwd),
                env=env,
                limit=LINE_LIMIT,
                start_new_session=True,
            )
        except OSError as exc:
            raise BackendUnavailableError(f"{name} could not be started: {exc.strerror}.") from exc
        log.info("%s started (pid %s)", name, proc.pid)
        return cls(name, proc)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
            await stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise ProcessEnded(f"{self.name} stopped reading its input ({exc})") from exc

    async def receive(self) -> dict[str, Any]:
        """The next JSON object from stdout; malformed lines are logged and skipped."""
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except (ValueError, asyncio.LimitOverrunError) as exc:
                self.malformed += 1
                log.warning("%s wrote an over-long line; skipped (%s)", self.name, exc)
                continue
            if not line:
                await self._settle()
                raise ProcessEnded(self.describe_end())
            text = line.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value  # pyright: ignore[reportUnknownVariableType]
            self.malformed += 1
            log.warning("%s wrote a malformed line; skipped: %.200r", self.name, text)

    def describe_end(self) -> str:
        code = self.proc.returncode
        tail = " | ".join(list(self.stderr_tail)[-3:])
        how = f"exited with code {code}" if code is not None else "closed its output"
        return f"{self.name} {how}" + (f": {tail}" if tail else "")

    async def stop(self, grace: float = 10.0) -> None:
        """Close stdin, wait ``grace`` seconds, then terminate and kill the process group."""
        if self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), grace)
        except TimeoutError:
            self._signal_group(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except TimeoutError:
                self._signal_group(signal.SIGKILL)
                await self.proc.wait()
        self._signal_group(signal.SIGKILL)  # children left in its group (MCP servers)
        await self._settle()

    def kill(self) -> None:
        """Kill it now (a hung turn)."""
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    async def _settle(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._stderr_task, 5)

    async def _drain_stderr(self) -> None:
        stderr = self.proc.stderr
        if stderr is None:
            return
        with contextlib.suppress(Exception):
            while line := await stderr.readline():
                text = line.decode("utf-8", errors="replace").rstrip()
                if text:
                    self.stderr_tail.append(text[:500])
                    log.info("%s: %s", self.name, text[:500])
