"""The engine's settings: a frozen value with defaults that hold for one owner."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineConfig:
    """Thresholds and bounds of the judgment engine."""

    tombstone_threshold: float | None = None
    """Cosine at or above which a save counts as a tombstoned text reworded; None: the
    embedding model's own (``ScoreScale.duplicate_threshold``), since each model spreads
    cosine over its own range."""
    reader_connections: int = 4
    """Read connections kept open for reads on caller threads."""
    checkpoint_wal_after_purge: bool = True
    """Truncate the WAL after a purge so erased bytes leave it too."""
    vector_dtype: str = "float32"
    """The vector cache's element type: float32, or float16 to halve its memory."""
    check_restatements: bool = True
    """Answer a save that restates a live memory with it (``restatements``). Off only
    where a caller writes records it knows to be distinct and wants them as given (a
    benchmark's seed store of generated sentences)."""
    commit_poll_seconds: float | None = 0.25
    """How often to look for other processes' commits once something subscribes to
    change-sets (None: follow only this process's, for short-lived commands)."""
