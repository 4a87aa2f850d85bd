"""Logging to a rotating file in the data folder: tracebacks go there, never
to a person's screen, and no secret goes anywhere (``app.local.log_redaction``: every
record of every logger is redacted when it is made)."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from app.local.log_redaction import RedactingFormatter, install


def setup_file_logging(log_path: Path, level: int = logging.INFO) -> Path | None:
    """Send the root logger to ``log_path`` (rotating), redacted; None if it cannot be
    written (the redaction is installed either way)."""
    install()
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            log_path, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError:
        return None
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_mama", False)]:
        root.removeHandler(old)
        old.close()
    handler._mama = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    return log_path
