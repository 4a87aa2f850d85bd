"""Which scopes one MCP server process (or one hook run) may read and write.

A coding agent's memory belongs to the project it works in. The binding is the
project named on the command line, or else the folder name of the git root of
the working directory (or of the working directory itself outside git); the
global scope is added only when the owner asks for it with ``--allow-global``.
Nothing the client sends can widen the binding: the grant is built from it once.
"""

from __future__ import annotations

import logging
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mama_core.invisible import hidden_char
from mama_core.memory import Grant
from mama_core.scope_names import GLOBAL, is_scope_name

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 5.0
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f]+")


class ProjectNameError(ValueError):
    """The project name cannot become a scope name."""


@dataclass(frozen=True)
class ProjectBinding:
    """One project scope, and global if the owner allowed it."""

    project: str
    allow_global: bool = False

    def __post_init__(self) -> None:
        if not is_scope_name(self.project_scope):
            raise ProjectNameError(f"{self.project!r} cannot be used as a project name")

    @property
    def project_scope(self) -> str:
        """``project:<name>``: where saves and checkpoints go by default."""
        return f"project:{self.project}"

    @property
    def scopes(self) -> frozenset[str]:
        """Every scope this binding may read and write."""
        if self.allow_global:
            return frozenset({self.project_scope, GLOBAL})
        return frozenset({self.project_scope})

    def grant(self) -> Grant:
        """An agent grant over these scopes (agent actions only, never owner-only ones)."""
        return Grant.agent(self.scopes, default_scope=self.project_scope)

    def describe(self) -> str:
        """The binding in words, for the server's instructions and logs."""
        extra = " and global" if self.allow_global else ""
        return f"{self.project_scope}{extra}"


def project_name(name: str) -> str:
    """``name`` as a scope-safe project name: runs of whitespace, controls and
    invisible marks (zero-width, bidi) become ``-``."""
    marked = "".join("\x00" if hidden_char(c) else c for c in name.strip())
    cleaned = _UNSAFE.sub("-", marked).strip("-")
    if not cleaned:
        raise ProjectNameError(f"{name!r} cannot be used as a project name")
    return cleaned[:200]


def git_root(cwd: Path) -> Path | None:
    """The top folder of the git work tree holding ``cwd``, or None outside git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("git is not usable in %s (%s)", cwd, type(exc).__name__)
        return None
    top = done.stdout.strip()
    if done.returncode != 0 or not top:
        return None
    return Path(top)


def project_folder(cwd: Path) -> Path:
    """The git root holding ``cwd``, or ``cwd`` itself outside git."""
    root = git_root(cwd)
    if root is None:
        log.info("%s is not in a git work tree; using its folder name as the project", cwd)
        return cwd.resolve()
    return root


def resolve_binding(
    cwd: Path,
    project: str | None = None,
    allow_global: bool = False,
    folder: Path | None = None,
) -> ProjectBinding:
    """The binding for a process started in ``cwd``: ``project`` if given, else the
    name of its project folder (``folder`` if the caller already knows it)."""
    if project is not None:
        return ProjectBinding(project_name(project), allow_global)
    folder = folder if folder is not None else project_folder(cwd)
    return ProjectBinding(project_name(folder.name or "root"), allow_global)
