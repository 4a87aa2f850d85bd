"""Every file MAMA writes that can hold the owner's text: one registry, for purge and doctor.

The store is encrypted and a purge erases inside it; every *other* file that may
hold a text is listed here, with what a purge does to it:

- ``store_backup``: the copies of the whole store made before a migration, of the
  core's series and the app's (``backups/mama.db.<label>.<time>.bak``, made by
  ``Store.copy_aside``; ``mama_core.store.copies`` names and finds them). Deleted.
- ``export``: the files ``mama export --out`` wrote (recorded in ``exports.json``
  in the data folder: path, size and modification time). Deleted, if the file is
  still the one MAMA wrote (same size and time); one changed since is left and named.
- ``log``: ``logs/mama.log`` (and ``mcp.log``, ``hooks.log``) and their
  rotations. Secrets never reach them (``app.local.log_redaction``), but a failure's
  message, or a library at DEBUG (imapclient logs a fetched mail), may quote a
  text, so a purge empties the logs and deletes their rotations.
- ``claude_transcript`` / ``codex_rollout``: what the agent CLIs keep of MAMA's
  conversations (``app.backends.transcripts``). Deleted (Codex's history databases
  compacted); the running runtime also ends the conversation and deletes the
  Codex thread (``OwnerRuntime``).

``follow_purges`` subscribes an engine's commits: after every purge, this
process's or another's, the copies are erased at once by whichever MAMA process
sees it first (the one that purged, and the tray or daemon that follows the store).
``tests/app/test_copies_registry.py`` scans the code for file writes: a new one
must be registered here or named there as holding no owner text.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.backends.transcripts import (
    CLAUDE_SESSION_KEY,
    CODEX_THREAD_KEY,
    claude_config_dir,
    claude_project_dirs,
    codex_home,
    codex_rollouts,
    forget_claude_transcripts,
    forget_codex_transcripts,
)
from mama_core.model import ChangeSet
from mama_core.store.connection import Connection
from mama_core.store.copies import store_backups

if TYPE_CHECKING:
    from mama_core.memory import Engine

log = logging.getLogger(__name__)

EXPORTS_FILE = "exports.json"
LOG_DIR = "logs"
LOG_SUFFIX = ".log"
AGENT_DIR = "agent"


@dataclass(frozen=True)
class CopyKind:
    """One kind of file that can hold owner text."""

    name: str
    what: str
    on_purge: str
    written_by: tuple[str, ...]
    """The code that writes it (``module:function``), for the registry's test."""


KINDS: tuple[CopyKind, ...] = (
    CopyKind(
        "store_backup",
        "a full copy of the store made before a migration",
        "deleted",
        ("mama_core.store.store:Store.copy_aside",),
    ),
    CopyKind(
        "export",
        "a JSON-lines export written by `mama export --out`",
        "deleted",
        ("app.cli.memory:export", "app.admin.copies:_save_exports"),
    ),
    CopyKind(
        "log",
        "MAMA's log and its rotations",
        "emptied",
        ("app.local.logs:setup_file_logging", "app.admin.copies:_empty_logs"),
    ),
    CopyKind(
        "claude_transcript",
        "Claude Code's transcripts of MAMA's conversations",
        "deleted",
        (),  # written by the Claude Code CLI itself
    ),
    CopyKind(
        "codex_rollout",
        "Codex's rollout files of MAMA's threads",
        "deleted",
        (),  # written by the Codex CLI itself
    ),
)
KIND_NAMES = tuple(k.name for k in KINDS)


@dataclass(frozen=True)
class OwnerCopy:
    """One file (or folder) that may hold the owner's text."""

    kind: str
    path: Path

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": str(self.path)}


@dataclass(frozen=True)
class Where:
    """Where one store's copies are: its data folder, its file, the agents' env."""

    home: Path
    db: Path
    env: Mapping[str, str]

    @classmethod
    def for_store(cls, home: Path, db: Path, env: Mapping[str, str] | None = None) -> Where:
        return cls(home, db, dict(os.environ if env is None else env))


# --- exports ---------------------------------------------------------------


def record_export(home: Path, out: Path) -> bool:
    """Remember a file ``mama export --out`` wrote, so a purge can reach it; False if
    it could not be noted (the data folder is not writable)."""
    try:
        stat = out.stat()
        path = str(out.resolve())
        entries = [e for e in _load_exports(home) if e.get("path") != path]
        entries.append({"path": path, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
        _save_exports(home, entries)
    except OSError as exc:
        log.warning("could not note the export for a later purge: %s", exc.strerror)
        return False
    return True


def _load_exports(home: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads((home / EXPORTS_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    exports = data.get("exports") if isinstance(data, dict) else None
    if not isinstance(exports, list):
        return []
    return [e for e in exports if isinstance(e, dict) and isinstance(e.get("path"), str)]  # pyright: ignore[reportUnknownVariableType,reportUnknownMemberType]


def _save_exports(home: Path, entries: list[dict[str, Any]]) -> None:
    target = home / EXPORTS_FILE
    tmp = target.with_name(f".{EXPORTS_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"exports": entries}, indent=2), "utf-8")
    os.replace(tmp, target)


def _unchanged(entry: Mapping[str, Any], path: Path) -> bool:
    try:
        stat = path.stat()
    except OSError:
        return False
    return stat.st_size == entry.get("size") and stat.st_mtime_ns == entry.get("mtime_ns")


# --- what exists -------------------------------------------------------------


def _state(conn: Connection | None, key: str) -> list[str]:
    if conn is None:
        return []
    row = conn.execute("SELECT value FROM runtime_state WHERE key = ?", (key,)).fetchone()
    return [str(row[0])] if row is not None and row[0] else []


def log_files(home: Path) -> list[Path]:
    """MAMA's logs (``mama.log``, ``mcp.log``, ``hooks.log``) and their rotations (``.1``…)."""
    folder = home / LOG_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(f"*{LOG_SUFFIX}*") if p.is_file())


def owner_copies(where: Where, conn: Connection | None) -> list[OwnerCopy]:
    """Every file that exists now and may hold the owner's text (``conn`` reads the
    agents' session ids; without it, only the files found by name)."""
    found = [OwnerCopy("store_backup", p) for p in store_backups(where.db)]
    found += [
        OwnerCopy("export", Path(e["path"]))
        for e in _load_exports(where.home)
        if Path(e["path"]).exists()
    ]
    found += [OwnerCopy("log", p) for p in log_files(where.home)]
    claude_ids = _state(conn, CLAUDE_SESSION_KEY)
    for folder in claude_project_dirs(
        claude_config_dir(where.env), where.home / AGENT_DIR / "claude", claude_ids
    ):
        found.append(OwnerCopy("claude_transcript", folder))
    for path in codex_rollouts(codex_home(where.env), _state(conn, CODEX_THREAD_KEY)):
        found.append(OwnerCopy("codex_rollout", path))
    return found


# --- what a purge does -------------------------------------------------------


def erase_after_purge(where: Where, conn: Connection | None) -> dict[str, Any]:
    """Erase every copy that may hold a purged text; return what was done."""
    done: dict[str, Any] = {"deleted": [], "emptied": [], "left": []}
    for path in store_backups(where.db):
        _unlink(path, done)
    kept: list[dict[str, Any]] = []
    for entry in _load_exports(where.home):
        path = Path(entry["path"])
        if not path.exists():
            continue
        if _unchanged(entry, path):
            _unlink(path, done)
        else:
            done["left"].append(str(path))
            kept.append(entry)
    if (where.home / EXPORTS_FILE).exists():
        _save_exports(where.home, kept)
    claude = forget_claude_transcripts(
        where.env, where.home / AGENT_DIR / "claude", _state(conn, CLAUDE_SESSION_KEY)
    )
    codex = forget_codex_transcripts(where.env, _state(conn, CODEX_THREAD_KEY))
    done["deleted"] += [str(p) for p in [*claude, *codex]]
    _empty_logs(where.home, done)
    if done["left"]:
        log.warning(
            "a purge could not reach %d copy(ies): changed since MAMA wrote them, or busy",
            len(done["left"]),
        )
    log.info("a purge: %d copy(ies) deleted, the log emptied", len(done["deleted"]))
    return done


def _unlink(path: Path, done: dict[str, Any]) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        log.warning("could not delete %s after a purge: %s", path.name, exc.strerror)
        done["left"].append(str(path))
        return
    done["deleted"].append(str(path))


def _empty_logs(home: Path, done: dict[str, Any]) -> None:
    """Each current log is emptied in place (its handlers keep appending to it, at its
    new end); the rotations are deleted."""
    for path in log_files(home):
        if path.name.endswith(LOG_SUFFIX):
            try:
                with open(path, "r+b") as fh:
                    fh.truncate(0)
            except OSError:
                done["left"].append(str(path))
            else:
                done["emptied"].append(str(path))
        else:
            _unlink(path, done)


def follow_purges(engine: Engine, home: Path) -> Callable[[], None]:
    """Erase the copies after every purge ``engine`` sees (its own at once, other
    processes' when its commit feed finds them). Returns the unsubscribe function."""
    where = Where.for_store(home, engine.store.path)

    def on_commit(changes: ChangeSet) -> None:
        if changes.action != "memory.purge":
            return
        try:
            conn = engine.store.new_connection()
        except Exception:  # the copies are still erased by name
            log.exception("could not read the agents' session ids after a purge")
            conn = None
        try:
            erase_after_purge(where, conn)
        except Exception:
            log.exception("erasing the copies after a purge failed")
        finally:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    return engine.subscribe(on_commit)
