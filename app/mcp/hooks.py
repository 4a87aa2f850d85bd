"""``mama hook NAME``: the Claude Code plugin's hooks.

Each hook reads the event's JSON from stdin (an object whose
``hook_event_name`` is the hook's event) and answers on stdout in the form
Claude Code expects, or says nothing. A hook must never block the coding
agent: malformed input, a missing store, a missing key or any internal error
all end in silence and exit status 0 (details go to the log file).

- ``session-start``: the project's latest checkpoint and its active guidance,
  bounded, as ``hookSpecificOutput.additionalContext``; after ``mama team join``, also
  the newest team memories the member may read (or one line: the team store is away).
- ``pre-tool-use``: on ``Read``, up to three active decisions that name the
  file, once per file per session, as ``additionalContext``; skipped when the
  lookup would take more than its budget (150 ms, measured from the hook's
  entry, covering binding, key, store and lookup).
- ``pre-compact``: plain text, which Claude Code passes to compaction as extra
  instructions: keep where the work stands and save a checkpoint after.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.local.paths import Paths
from app.local.settings import Settings
from app.mcp.dev_memory import dev_memory_key, dev_memory_path
from app.mcp.hook_reads import (
    FileQuery,
    StoreNotReady,
    file_query,
    guidance_text,
    latest_checkpoint,
    read_connection,
    related_decisions,
)
from app.mcp.hook_state import SeenFiles, forget_old_sessions
from app.mcp.project_scope import (
    ProjectBinding,
    claims_folder,
    project_folder,
    resolve_binding,
)
from mama_core.errors import MamaError
from mama_core.memory.results import CheckpointEntry
from mama_core.recall import RecallHit

log = logging.getLogger(__name__)

PRE_TOOL_USE_BUDGET_S = 0.150
MAX_CHECKPOINT_SUMMARY_CHARS = 2000
MAX_CHECKPOINT_STATE_CHARS = 2000
MAX_DECISION_CHARS = 400
MAX_TEAM_MEMORIES = 10
TEAM_CONNECT_TIMEOUT_S = 2
"""A session start waits at most this long for a team server that does not answer."""


@dataclass(frozen=True)
class HookSettings:
    """The hook's configuration: folders, store and binding options from the command line."""

    paths: Paths
    db: Path | None = None
    project: str | None = None
    allow_global: bool = False
    pre_tool_use_budget_s: float = PRE_TOOL_USE_BUDGET_S

    @property
    def db_path(self) -> Path:
        return dev_memory_path(self.paths, self.db)

    def binding(self, event: Mapping[str, Any], folder: Path | None = None) -> ProjectBinding:
        return resolve_binding(
            _cwd(event),
            self.project,
            self.allow_global,
            folder,
            claims=claims_folder(self.paths.home),
        )


Handler = Callable[[Mapping[str, Any], HookSettings, float], str]


def run_hook(name: str, raw: str, settings: HookSettings, started: float | None = None) -> str:
    """What hook ``name`` prints for the event JSON ``raw`` ("" for nothing). Never raises."""
    started = time.monotonic() if started is None else started
    handler = HANDLERS.get(name)
    if handler is None:
        log.info("unknown hook %r", name)
        return ""
    try:
        event = json.loads(raw)
    except ValueError:
        log.info("hook %s: input is not JSON", name)
        return ""
    if not isinstance(event, dict) or event.get("hook_event_name") != EVENTS[name]:
        log.info("hook %s: input is not a %s event", name, EVENTS[name])
        return ""
    try:
        return handler(event, settings, started)
    except (StoreNotReady, MamaError) as exc:  # no store yet, no key, store busy …
        log.info("hook %s said nothing: %s", name, exc)
        return ""
    except Exception:
        log.exception("hook %s failed; said nothing", name)
        return ""


# --- SessionStart ------------------------------------------------------------


def session_start(event: Mapping[str, Any], settings: HookSettings, started: float) -> str:
    """The latest checkpoint and the active guidance of the project, bounded."""
    forget_old_sessions(settings.paths.cache)
    binding = settings.binding(event)
    db_path = settings.db_path
    parts: list[str] = []
    if db_path.is_file():
        budget = Settings.load(settings.paths.settings).guidance_budget_tokens
        with read_connection(db_path, dev_memory_key(db_path)) as conn:
            checkpoint = latest_checkpoint(conn, binding)
            guidance = guidance_text(conn, binding, budget)
        if checkpoint is not None:
            parts.append(_render_checkpoint(checkpoint))
        if guidance:
            parts.append(guidance)
    team = _team_text(settings.paths)
    if team:
        parts.append(team)
    if not parts:
        return ""
    header = (
        f"MAMA development memory for {binding.describe()} (MCP tools: search, save, get, "
        "checkpoint_save, checkpoint_load)."
    )
    return _additional_context("SessionStart", "\n\n".join([header, *parts]))


def _team_text(paths: Paths) -> str:
    """For a MAMA that joined a team: the newest team memories this member may read, or
    the one line saying the team store is away ("" when it joined none)."""
    from app.team.reach import TeamReach

    try:
        reach = TeamReach.for_home(paths.home, connect_timeout=TEAM_CONNECT_TIMEOUT_S)
        if reach is None:
            return ""
        found = reach.latest(MAX_TEAM_MEMORIES)
    except Exception:  # a damaged team.json must not silence the personal memory too
        log.exception("session-start: the team memories could not be read")
        return ""
    if found.away is not None:
        return f"Team memories left out: {_clip(found.away, MAX_DECISION_CHARS)}"
    if not found.hits:
        return ""
    lines = [
        "Team memories you may read, newest first (the team store's ids; search finds "
        "more, as team_results):"
    ]
    lines.extend(
        f"- [team #{hit.id}] {hit.kind} in {', '.join(hit.scopes)}, by {hit.author}: "
        f"{_clip(' '.join(hit.summary.split()), MAX_DECISION_CHARS)}"
        for hit in found.hits
    )
    return "\n".join(lines)


def _render_checkpoint(checkpoint: CheckpointEntry) -> str:
    provenance = checkpoint.provenance
    by = " ".join(
        str(v) for v in (provenance.get("actor_name"), provenance.get("actor_version")) if v
    )
    lines = [
        f"Latest checkpoint (#{checkpoint.id}, {checkpoint.created_at}"
        + (f", saved by {by}" if by else "")
        + "):",
        _clip(checkpoint.summary, MAX_CHECKPOINT_SUMMARY_CHARS),
    ]
    state = checkpoint.state
    if state:
        text = json.dumps(state, ensure_ascii=False, sort_keys=True)
        lines.append("State: " + _clip(text, MAX_CHECKPOINT_STATE_CHARS))
    return "\n".join(lines)


# --- PreToolUse ----------------------------------------------------------------


def pre_tool_use(event: Mapping[str, Any], settings: HookSettings, started: float) -> str:
    """Active decisions naming the file a ``Read`` is about to open, once per session."""
    if event.get("tool_name") != "Read":
        return ""
    tool_input = event.get("tool_input")
    file_path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(file_path, str) or not file_path.strip():
        return ""
    session_id = event.get("session_id")
    seen = SeenFiles(settings.paths.cache, session_id) if isinstance(session_id, str) else None
    if seen is not None and file_path in seen:
        return ""

    lookup = _Lookup(lambda: _decisions_for(event, settings, file_path))
    remaining = settings.pre_tool_use_budget_s - (time.monotonic() - started)
    found = lookup.result_within(remaining)
    if found is None:
        log.info(
            "pre-tool-use: skipped %s, over the %.0f ms budget",
            file_path,
            settings.pre_tool_use_budget_s * 1000,
        )
        return ""
    query, binding, hits = found
    log.info(
        "pre-tool-use: %d decision(s) for %s in %.0f ms",
        len(hits),
        file_path,
        (time.monotonic() - started) * 1000,
    )
    if seen is not None:
        seen.add(file_path)
    if query is None or not hits:
        return ""
    lines = [f"MAMA: active decisions about {query.relative} ({binding.describe()}):"]
    lines.extend(_render_decision(hit) for hit in hits)
    return _additional_context("PreToolUse", "\n".join(lines))


_Found = tuple[FileQuery | None, ProjectBinding, list[RecallHit]]


def _decisions_for(event: Mapping[str, Any], settings: HookSettings, file_path: str) -> _Found:
    folder = project_folder(_cwd(event))
    binding = settings.binding(event, folder)
    query = file_query(file_path, folder)
    db_path = settings.db_path
    if query is None or not db_path.is_file():
        return query, binding, []
    with read_connection(db_path, dev_memory_key(db_path)) as conn:
        return query, binding, related_decisions(conn, binding, query)


class _Lookup:
    """Runs the lookup on a daemon thread so that the hook can walk away from it
    at the deadline (a daemon thread does not hold the process open)."""

    def __init__(self, work: Callable[[], _Found]) -> None:
        self._work = work
        self._done = threading.Event()
        self._result: _Found | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="mama-hook-lookup", daemon=True).start()

    def _run(self) -> None:
        try:
            self._result = self._work()
        except BaseException as exc:
            self._error = exc
        finally:
            self._done.set()

    def result_within(self, seconds: float) -> _Found | None:
        """The result if it is ready within ``seconds``; None if not; re-raises its error."""
        if not self._done.wait(max(seconds, 0.0)):
            return None
        if self._error is not None:
            raise self._error
        return self._result


def _render_decision(hit: RecallHit) -> str:
    when = hit.valid_from[:10]
    topic = f"{hit.topic}: " if hit.topic else ""
    return (
        f"- [#{hit.id}] {when} {_clip(topic + ' '.join(hit.summary.split()), MAX_DECISION_CHARS)}"
    )


# --- PreCompact ----------------------------------------------------------------

PRE_COMPACT_TEXT = (
    "MAMA: keep in the summary where the work stands: the goal, what is done, the next "
    "steps, open questions and the files involved. End the summary with this line: "
    '"Save a MAMA checkpoint now (checkpoint_save tool) with where the work stands."'
)


def pre_compact(event: Mapping[str, Any], settings: HookSettings, started: float) -> str:
    """A reminder, given to compaction as instructions, to keep state and checkpoint it."""
    return PRE_COMPACT_TEXT


EVENTS: Mapping[str, str] = {
    "session-start": "SessionStart",
    "pre-tool-use": "PreToolUse",
    "pre-compact": "PreCompact",
}
"""The Claude Code event each hook answers; an event of another kind gets silence."""

HANDLERS: Mapping[str, Handler] = {
    "session-start": session_start,
    "pre-tool-use": pre_tool_use,
    "pre-compact": pre_compact,
}


# --- shared --------------------------------------------------------------------


def _cwd(event: Mapping[str, Any]) -> Path:
    cwd = event.get("cwd")
    return Path(cwd) if isinstance(cwd, str) and cwd else Path(os.getcwd())


def _additional_context(event_name: str, text: str) -> str:
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}},
        ensure_ascii=False,
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
