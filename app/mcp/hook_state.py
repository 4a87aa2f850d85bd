"""What the PreToolUse hook already told one Claude Code session.

One small JSON file per session (named by a hash of the session id) under the
cache folder lists the files whose decisions were looked up, so each file is
looked up once per session. Files of sessions idle for a week are removed.
Losing this state only means a note may be repeated, so it is kept simply:
written whole to a temporary file and renamed into place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

STATE_DIR_NAME = "claude-code-hooks"
MAX_AGE_S = 7 * 24 * 3600
MAX_FILES_REMEMBERED = 5000


def state_dir(cache_dir: Path) -> Path:
    return cache_dir / STATE_DIR_NAME


class SeenFiles:
    """The files one session has been told about."""

    def __init__(self, cache_dir: Path, session_id: str) -> None:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        self.path = state_dir(cache_dir) / f"session-{digest}.json"

    def _load(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return []
        files = data.get("files") if isinstance(data, dict) else None
        return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []

    def __contains__(self, file_path: object) -> bool:
        return file_path in self._load()

    def add(self, file_path: str) -> None:
        """Remember ``file_path`` for this session."""
        files = self._load()
        if file_path in files:
            return
        files = [*files, file_path][-MAX_FILES_REMEMBERED:]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"files": files}), "utf-8")
        os.replace(tmp, self.path)


def forget_old_sessions(cache_dir: Path, now: float | None = None) -> int:
    """Delete the state of sessions untouched for a week; return how many."""
    folder = state_dir(cache_dir)
    if not folder.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - MAX_AGE_S
    removed = 0
    for entry in folder.iterdir():
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < cutoff:
                entry.unlink()
                removed += 1
    return removed
