"""Which scopes one MCP server process (or one hook run) may read and write.

A coding agent's memory belongs to the project it works in, and a project is not
its folder name (two repositories both called ``app`` are two projects). The
binding is, first that wins:

1. the project named on the command line (``--project``);
2. a ``.mama-project`` file at the top of the project folder (the git root, or
   the working directory outside git): its first line names the project, and the
   owner can commit it so every clone and worktree shares one memory;
3. the git remote (``origin``, else the first remote), normalised so the ssh and
   https forms of one repository match: ``git@GitHub.com:acme/app.git`` and
   ``https://user@github.com/acme/app`` are both ``github.com/acme/app`` (scheme,
   user, port and ``.git`` dropped, the host in lower case);
4. the full resolved path of the project folder (``/home/me/src/app``).

Scopes named by folder name before (``project:app``) stay readable: the first
project with that folder name to bind after the change adopts the old scope (a
claim file under the data folder, created exclusively, so exactly one project
wins even when several start at once) and reads and writes it beside its own;
every other project of that name does not see it. The old scope may already mix
two repositories' records: that cannot be undone, but nothing new is mixed. An
owner who wants one repository to keep the old name writes it in
``.mama-project``.

The global scope is added only when the owner asks for it with
``--allow-global``. Nothing the client sends can widen the binding: the grant is
built from it once.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from mama_core.invisible import hidden_char
from mama_core.memory import Grant
from mama_core.scopes.names import GLOBAL, is_scope_name

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 5.0
PROJECT_FILE = ".mama-project"
"""The file at a project's top whose first line names the project."""
MAX_PROJECT_FILE_BYTES = 4096
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f]+")


class ProjectNameError(ValueError):
    """The project name cannot become a scope name."""


@dataclass(frozen=True)
class ProjectBinding:
    """One project scope (plus an adopted older scope, and global if the owner allowed it)."""

    project: str
    allow_global: bool = False
    source: str = "named on the command line"
    """How the project was identified, for ``mama doctor`` and the instructions."""
    adopted: str | None = None
    """A scope named by folder name before projects had identities, kept readable."""

    def __post_init__(self) -> None:
        if not is_scope_name(self.project_scope):
            raise ProjectNameError(f"{self.project!r} cannot be used as a project name")
        if self.adopted is not None and not is_scope_name(self.adopted):
            raise ProjectNameError(f"{self.adopted!r} is not a scope")

    @property
    def project_scope(self) -> str:
        """``project:<name>``: where saves and checkpoints go by default."""
        return f"project:{self.project}"

    @property
    def scopes(self) -> frozenset[str]:
        """Every scope this binding may read and write."""
        found = {self.project_scope}
        if self.adopted is not None:
            found.add(self.adopted)
        if self.allow_global:
            found.add(GLOBAL)
        return frozenset(found)

    @property
    def checkpoint_scopes(self) -> tuple[str, ...]:
        """Where the latest checkpoint is looked for: the project's scope, then the
        adopted one (a checkpoint saved before the project had an identity)."""
        return (self.project_scope,) + ((self.adopted,) if self.adopted else ())

    def grant(self) -> Grant:
        """An agent grant over these scopes (agent actions only, never owner-only ones)."""
        return Grant.agent(self.scopes, default_scope=self.project_scope)

    def describe(self) -> str:
        """The binding in words, for the server's instructions and logs."""
        extra = f" and {self.adopted} (its records from before)" if self.adopted else ""
        extra += " and global" if self.allow_global else ""
        return f"{self.project_scope}{extra}"

    def explain(self) -> str:
        """The binding and where it came from, in one line (``mama doctor``)."""
        return f"{self.describe()}, from {self.source}"


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
        log.info("%s is not in a git work tree; it is the project folder", cwd)
        return cwd.resolve()
    return root


def normalise_remote(url: str, base: Path | None = None) -> str | None:
    """A git remote URL as one name for the repository, whatever its form: scheme, user,
    port and a trailing ``.git`` or ``/`` dropped, the host in lower case. A local
    path remote is its resolved path (relative to ``base``). None for nothing usable."""
    url = url.strip()
    if not url:
        return None
    host, path = "", ""
    scp = re.fullmatch(r"(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.*)", url)
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file":
            return _local_remote(parts.path, base)
        host, path = (parts.hostname or ""), parts.path
    elif scp is not None and not re.fullmatch(r"[A-Za-z]", scp.group(1)):
        host, path = scp.group(1), scp.group(2)
    else:
        return _local_remote(url, base)
    path = path.strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if not host or not path:
        return None
    return f"{host.lower()}/{path}"


def _local_remote(path: str, base: Path | None) -> str | None:
    if not path:
        return None
    where = Path(path).expanduser()
    if not where.is_absolute() and base is not None:
        where = base / where
    resolved = str(where.resolve())
    return resolved.removesuffix(".git").rstrip("/") or "/"


def git_remote(folder: Path) -> tuple[str, str] | None:
    """``(remote name, URL)`` of ``origin``, else of the first remote; None without one."""
    names = _git(folder, "remote")
    if not names:
        return None
    listed = names.split()
    chosen = "origin" if "origin" in listed else sorted(listed)[0]
    url = _git(folder, "remote", "get-url", chosen)
    return (chosen, url) if url else None


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("git %s failed in %s (%s)", args[0], folder, type(exc).__name__)
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def project_file_name(folder: Path) -> str | None:
    """The first non-empty line of ``folder/.mama-project``, if there is such a file."""
    path = folder / PROJECT_FILE
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PROJECT_FILE_BYTES)
    except OSError:
        return None
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()
    return None


def identify(folder: Path) -> tuple[str, str]:
    """``(project name, how it was found)`` for the project at ``folder``."""
    named = project_file_name(folder)
    if named is not None:
        return project_name(named), f"{folder / PROJECT_FILE}"
    remote = git_remote(folder)
    if remote is not None:
        normalised = normalise_remote(remote[1], folder)
        if normalised is not None:
            return project_name(normalised), f"git remote {remote[0]} of {folder}"
    return project_name(str(folder.resolve())), f"the folder {folder.resolve()}"


def adopt_legacy(claims: Path, folder: Path, project: str, create: bool = True) -> str | None:
    """The folder-name scope from before (``project:<folder name>``) if this project
    owns it: the first to claim it does (an exclusive create, so one winner even under
    a race); the claim is kept under ``claims``. With ``create`` False only an existing
    claim counts (``mama doctor`` looks without claiming)."""
    try:
        legacy = f"project:{project_name(folder.name or 'root')}"
    except ProjectNameError:
        return None
    if legacy == f"project:{project}" or not is_scope_name(legacy):
        return None
    claim = claims / (hashlib.sha256(legacy.encode()).hexdigest()[:32] + ".claim")
    try:
        if not create:
            raise FileExistsError(claim)
        claims.mkdir(parents=True, exist_ok=True)
        fd = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        with contextlib.suppress(OSError):
            owner = claim.read_text(encoding="utf-8").splitlines()
            if owner[1:2] == [project]:
                return legacy
        return None
    except OSError as exc:
        log.info("cannot record who owns %s (%s); not adopting it", legacy, exc)
        return None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f"{legacy}\n{project}\n")
    log.info("project %s adopts %s (its records from before)", project, legacy)
    return legacy


def resolve_binding(
    cwd: Path,
    project: str | None = None,
    allow_global: bool = False,
    folder: Path | None = None,
    claims: Path | None = None,
    adopt: bool = True,
) -> ProjectBinding:
    """The binding for a process started in ``cwd``: ``project`` if given, else the
    identity of its project folder (``folder`` if the caller already knows it; see the
    module docstring). With ``claims`` (a folder), an older folder-name scope is
    adopted by the first project that binds to it."""
    if project is not None:
        return ProjectBinding(project_name(project), allow_global)
    folder = folder if folder is not None else project_folder(cwd)
    name, source = identify(folder)
    adopted = adopt_legacy(claims, folder, name, adopt) if claims is not None else None
    return ProjectBinding(name, allow_global, source=source, adopted=adopted)


def claims_folder(home: Path) -> Path:
    """Where the claims on folder-name scopes from before are kept (the data folder)."""
    return home / "mcp" / "legacy-projects"
