"""The backend the owner chose (settings ``agent_backend``), built for this machine.

``command`` (the default) needs nothing. ``claude`` and ``codex`` run the CLIs
(``MAMA_CLAUDE_BIN`` / ``MAMA_CODEX_BIN`` name the executables, else PATH);
``local`` runs the GGUF chat model of the ``local_model_path`` setting
(``MAMA_LOCAL_MODEL`` overrides it). A backend that cannot run here is still
built: its first turn tells the owner what is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.backends.base import AgentBackend
from app.backends.command_mode import CommandModeBackend
from app.runtime.transaction import RuntimeDb
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
