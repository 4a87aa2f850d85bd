"""Where the agent CLIs keep a conversation's transcript, so a purge can delete it.

Claude Code writes ``<config>/projects/<cwd, each non-alphanumeric character
turned into a dash>/<session id>.jsonl`` (and a ``<session id>/`` folder beside it for
sub-agents and large tool results; ``todos/``, ``file-history/``,
``session-env/`` and ``debug/`` entries named after the session), where
``<config>`` is ``CLAUDE_CONFIG_DIR`` or ``~/.claude``. Codex writes
``<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`` (and
``archived_sessions/``), ``CODEX_HOME`` defaulting to ``~/.codex``.

MAMA runs each CLI in its own working folder under the data folder
(``agent/claude``, ``agent/codex``), so every Claude Code project folder of that
working folder is MAMA's alone and is emptied whole. Codex keeps every
project's rollouts in one tree, so only the files named by MAMA's thread ids
are deleted; the threads themselves are deleted through the app-server
(``thread/delete``), and Codex's history databases (``thread_history_*.sqlite``,
``state_*.sqlite``) are then compacted so the deleted rows' bytes leave them.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

log = logging.getLogger(__name__)

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
CODEX_DATABASES = ("thread_history_*.sqlite", "state_*.sqlite")
"""Codex's own databases that hold threads' items and metadata."""
CLAUDE_SESSION_KEY = "claude_session_id"
"""The ``runtime_state`` key of MAMA's Claude Code session id."""
CODEX_THREAD_KEY = "codex_thread_id"
"""The ``runtime_state`` key of MAMA's Codex thread id."""
CLAUDE_SESSION_SPOTS = ("todos/{id}*", "file-history/{id}", "session-env/{id}", "debug/{id}*")


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's configuration folder for a process started with ``env``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured) if configured else _home(env) / ".claude"


def codex_home(env: Mapping[str, str]) -> Path:
    """Codex's home folder for a process started with ``env``."""
    configured = env.get("CODEX_HOME")
    return Path(configured) if configured else _home(env) / ".codex"


def claude_project_dirs(config: Path, workdir: Path, session_ids: Iterable[str]) -> list[Path]:
    """The project folders holding ``workdir``'s transcripts: the computed name, and any
    folder that holds one of ``session_ids`` (should the naming ever change)."""
    projects = config / "projects"
    found = {projects / _NON_ALNUM.sub("-", str(workdir.resolve()))}
    for session_id in session_ids:
        found.update(p.parent for p in projects.glob(f"*/{glob_safe(session_id)}.jsonl"))
    return sorted(p for p in found if p.is_dir())


def glob_safe(text: str) -> str:
    """``text`` with glob characters removed (ids are uuids; be strict anyway)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "", text)


def forget_claude_transcripts(
    env: Mapping[str, str], workdir: Path, session_ids: Iterable[str]
) -> list[Path]:
    """Delete every transcript of MAMA's Claude Code conversations; return what went."""
    config = claude_config_dir(env)
    ids = [glob_safe(s) for s in session_ids if glob_safe(s)]
    doomed: list[Path] = []
    for folder in claude_project_dirs(config, workdir, ids):
        doomed.append(folder)
    for session_id in ids:
        for spot in CLAUDE_SESSION_SPOTS:
            doomed += config.glob(spot.format(id=session_id))
    return _remove(doomed)


def forget_codex_transcripts(env: Mapping[str, str], thread_ids: Iterable[str]) -> list[Path]:
    """Delete the rollout files of MAMA's Codex threads and compact Codex's history
    databases (whose freed pages still hold a deleted thread's text); return the
    files deleted."""
    home = codex_home(env)
    removed = _remove(codex_rollouts(home, thread_ids))
    for database in CODEX_DATABASES:
        for path in sorted(home.glob(database)):
            compact_sqlite(path)
    return removed


def codex_rollouts(home: Path, thread_ids: Iterable[str]) -> list[Path]:
    """The rollout files of ``thread_ids`` under Codex's ``home``."""
    found: list[Path] = []
    for thread_id in (glob_safe(t) for t in thread_ids):
        if not thread_id:
            continue
        for tree in ("sessions", "archived_sessions"):
            found += (home / tree).glob(f"**/rollout-*{thread_id}.jsonl")
    return sorted(found)


def compact_sqlite(path: Path) -> bool:
    """Rewrite a SQLite file without its free pages (``VACUUM``) and empty its WAL, so
    deleted rows leave the file; False if it is busy (the CLI is running) or broken."""
    try:
        conn = sqlite3.connect(path, timeout=1.0, isolation_level=None)
    except sqlite3.Error as exc:
        log.warning("could not open %s to compact it: %s", path, exc)
        return False
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy
    except sqlite3.Error as exc:
        log.warning("could not compact %s: %s", path, exc)
        return False
    finally:
        conn.close()


def _remove(paths: Iterable[Path]) -> list[Path]:
    removed: list[Path] = []
    for path in dict.fromkeys(paths):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("could not delete the agent transcript %s: %s", path, exc)
            continue
        removed.append(path)
    return removed
