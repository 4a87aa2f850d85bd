"""The backend the owner chose (settings ``agent_backend``), built for this machine.

``command`` (the default) needs nothing. ``claude`` and ``codex`` run the CLIs
(``MAMA_CLAUDE_BIN`` / ``MAMA_CODEX_BIN`` name the executables, else PATH);
``local`` runs the GGUF chat model of the ``local_model_path`` setting
(``MAMA_LOCAL_MODEL`` overrides it). A backend that cannot run here is still
built: its first turn tells the owner what is missing, and ``backend_problem``
says it beforehand (for the tray's status line and ``mama doctor``).
"""

from __future__ import annotations

import os
from pathlib import Path

from app.backends.base import AgentBackend, BackendUnavailableError
from app.backends.command_mode import CommandModeBackend
from app.durable.transaction import RuntimeDb
from mama_core.errors import MamaError

BACKENDS = ("command", "claude", "codex", "local")
"""The short names; each backend's own name (``claude-code``, ``local-gguf``…) works too."""


class UnknownBackendError(MamaError):
    code = "unknown_backend"
    exit_code = 3


def make_backend(
    name: str,
    home: Path,
    state: RuntimeDb,
    tools_prompt: str,
    *,
    local_model: Path | None = None,
) -> AgentBackend:
    """The backend called ``name``; ``home`` is the data folder (agent work folders
    live under it), ``state`` keeps session ids, ``tools_prompt`` is the system prompt,
    ``local_model`` the GGUF chat model of the local backend."""
    chosen = name.strip().lower()
    workdir = home / "agent"
    if chosen in ("command", "command-mode", ""):
        return CommandModeBackend()
    if chosen in ("claude", "claude-code"):
        from app.backends.claude_code import ClaudeCodeBackend, ClaudeSettings

        return ClaudeCodeBackend(
            ClaudeSettings(
                executable=os.environ.get("MAMA_CLAUDE_BIN") or "claude",
                workdir=workdir / "claude",
                system_prompt=tools_prompt,
                model=os.environ.get("MAMA_CLAUDE_MODEL") or None,
            ),
            state,
        )
    if chosen == "codex":
        from app.backends.codex import CodexBackend, CodexSettings

        return CodexBackend(
            CodexSettings(
                executable=os.environ.get("MAMA_CODEX_BIN") or "codex",
                workdir=workdir / "codex",
                instructions=tools_prompt,
                model=os.environ.get("MAMA_CODEX_MODEL") or None,
            ),
            state,
        )
    if chosen in ("local", "local-gguf", "gguf"):
        from app.backends.local_model import LocalModelBackend

        return LocalModelBackend(local_model, tools_prompt)
    raise UnknownBackendError(
        f"Unknown agent backend {name!r} in the settings; choose one of {', '.join(BACKENDS)}."
    )


def backend_problem(backend: AgentBackend) -> str | None:
    """What keeps ``backend`` from running here, found without starting it: the CLI is
    not installed (and how to install it), or no local chat model is there. None when
    nothing is known to be missing (starting may still fail, and then says why)."""
    from app.backends.process import find_executable

    # Named first, so command mode imports none of the CLI backends.
    try:
        if backend.name == "claude-code":
            from app.backends import claude_code

            if isinstance(backend, claude_code.ClaudeCodeBackend):
                find_executable(
                    backend.settings.executable, "Claude Code", claude_code.INSTALL_HINT
                )
        elif backend.name == "codex":
            from app.backends import codex

            if isinstance(backend, codex.CodexBackend):
                find_executable(backend.settings.executable, "Codex", codex.INSTALL_HINT)
        elif backend.name == "local-gguf":
            from app.backends.local_model import LocalModelBackend

            if isinstance(backend, LocalModelBackend):
                return _local_model_problem(backend.model_path)
    except BackendUnavailableError as exc:
        return exc.message
    return None


def _local_model_problem(model: Path | None) -> str | None:
    if model is None:
        return (
            "No local chat model is configured: choose a GGUF chat model in Settings "
            "(or set MAMA_LOCAL_MODEL), or choose another agent backend."
        )
    if not model.is_file():
        return f"The local chat model {model} does not exist; check the setting."
    return None
