"""Resident memory of this process, for the benchmarks' reports."""

from __future__ import annotations

from pathlib import Path


def rss_mb() -> float:
    """Resident set size in MiB (Linux ``/proc``; 0 where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
