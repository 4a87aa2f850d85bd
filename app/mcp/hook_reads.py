"""The reads behind the Claude Code hooks, on one read-only connection.

A hook is a fresh process that must answer quickly, so it does not start the
engine (a writer thread, a reader pool and the embedding model). It reads the
way the engine does, under the hook's project binding:

- the latest checkpoint through the catalog's own ``checkpoint.list`` read
  (validated and scope-checked like any agent call);
- active guidance through ``mama_core.guidance.render_index`` (bounded);
- decisions about a file through recall's lexical arms (``Recall`` without an
  embedder): file paths are identifiers that BM25 and trigrams match well, and
  loading the model alone would not fit a PreToolUse budget.

Every one of them is bounded by the recall predicate or the catalog's scope
check, so no other project's rows can appear.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

import numpy as np

from app.mcp.identity import ClientIdentity
from app.mcp.project_scope import ProjectBinding
from mama_core.errors import EngineError
from mama_core.guidance import render_index
from mama_core.memory import CATALOG, EngineConfig
from mama_core.memory.actions.checkpoints import checkpoint_list
from mama_core.memory.dispatcher import Env, prepare_call
from mama_core.memory.results import CheckpointEntry
from mama_core.recall import Recall, RecallHit, RecallQuery
from mama_core.store import DbKey, connect, latest_version, schema_version
from mama_core.store.connection import Connection

HOOK_BUSY_TIMEOUT_MS = 100
HOOK_ACTOR = ClientIdentity("mama-hook")


class StoreNotReady(Exception):
    """The store is missing or at another schema version: a hook says nothing."""


@contextlib.contextmanager
def read_connection(db_path: Path, key: DbKey) -> Iterator[Connection]:
    """A read-only connection to an existing store at the current schema version."""
    if not db_path.is_file():
        raise StoreNotReady(f"no store at {db_path}")
    conn = connect(db_path, key, readonly=True, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)
    try:
        if schema_version(conn) != latest_version():
            raise StoreNotReady(f"{db_path} is not at schema {latest_version()}")
        yield conn
    finally:
        conn.close()


def _refuse_embedding(_text: str) -> np.ndarray:
    raise EngineError("Hooks do not embed text.")


def _refuse_recall() -> Recall:
    raise EngineError("Hooks do not load recall.")


def latest_checkpoint(conn: Connection, binding: ProjectBinding) -> CheckpointEntry | None:
    """The project's newest checkpoint, read through the catalog's ``checkpoint.list``."""
    session = HOOK_ACTOR.session_facts()
    env = Env(EngineConfig(), model_id="", embed=_refuse_embedding, recall=_refuse_recall)
    for scope in binding.checkpoint_scopes:
        call = prepare_call(
            CATALOG, "checkpoint.list", {"scope": scope, "limit": 1}, session, binding.grant()
        )
        checkpoints = checkpoint_list(conn, call, env).checkpoints
        if checkpoints:
            return checkpoints[0]
    return None


def guidance_text(conn: Connection, binding: ProjectBinding, budget_tokens: int) -> str:
    """Active guidance in the binding's scopes, constraints first, within the budget."""
    return render_index(conn, sorted(binding.scopes), budget_tokens).text


@dataclass(frozen=True)
class FileQuery:
    """What to look for about one file: its path in the project, its name, and the
    words of its path as a lexical query."""

    relative: str
    name: str
    text: str


def file_query(file_path: str, root: Path | None) -> FileQuery | None:
    """The file as a path relative to the project root, its name and a lexical query."""
    path = PurePath(file_path)
    if root is not None:
        path = _relative(path, root)
    if not path.name:
        return None
    folders = [p for p in path.parent.parts if p not in ("/", ".", "..")]
    # The name's words first (stem, extension), then the nearest folders.
    words = [path.stem or path.name, path.suffix.lstrip("."), *reversed(folders[-3:])]
    return FileQuery(relative=path.as_posix(), name=path.name, text=" ".join(w for w in words if w))


def _relative(path: PurePath, root: Path) -> PurePath:
    """``path`` relative to ``root`` (through symlinks if need be), else unchanged."""
    with contextlib.suppress(ValueError):
        return path.relative_to(root)
    with contextlib.suppress(ValueError, OSError):
        return Path(path).resolve().relative_to(root.resolve())
    return path


def related_decisions(
    conn: Connection, binding: ProjectBinding, query: FileQuery, limit: int = 3
) -> list[RecallHit]:
    """Up to ``limit`` active decisions in the binding's scopes that name the file.

    Ranked by the lexical arms over the file's name and folders; a hit is kept
    only if it names the file (``parser.py``, or its path in the project), so a
    decision that merely shares a word with the path does not ride along.
    """
    recall = Recall(conn)
    hits = recall.search(
        RecallQuery(
            text=query.text,
            scopes=sorted(binding.scopes),
            kinds=("decision",),
            statuses=("active",),
            limit=max(limit * 8, 20),
        )
    )
    return [h for h in hits if _names_file(h, query)][:limit]


def _names_file(hit: RecallHit, query: FileQuery) -> bool:
    body = " ".join((hit.topic, hit.summary, hit.details))
    if query.relative.casefold() in body.casefold():
        return True
    name = re.compile(rf"(?<![\w.-]){re.escape(query.name)}(?![\w-])", re.IGNORECASE)
    return name.search(body) is not None
