"""Every verb of the catalog, one module per concept; importing this package
registers them all (``dispatcher.mutation`` / ``dispatcher.query``).

The import order below is the catalog's order, which tool lists show; a new verb's
module is added here once.
"""

# ruff: noqa: I001  (the order is the catalog's, not the alphabet's)
from __future__ import annotations

from mama_core.memory.actions import saving
from mama_core.memory.actions import search
from mama_core.memory.actions import memory_read
from mama_core.memory.actions import retiring
from mama_core.memory.actions import outcomes
from mama_core.memory.actions import timeline
from mama_core.memory.actions import guidance_changes
from mama_core.memory.actions import checkpoints
from mama_core.memory.actions import review
from mama_core.memory.actions import restore
from mama_core.memory.actions import purge
from mama_core.memory.actions import observation_reads
from mama_core.memory.actions import quotes
from mama_core.memory.actions import tombstones
from mama_core.memory.actions import tombstone_list
from mama_core.memory.actions import observations
from mama_core.memory.actions import commitment_changes
from mama_core.memory.actions import commitment_list
from mama_core.memory.actions import owner_settings
from mama_core.memory.actions import people

__all__ = [
    "checkpoints",
    "commitment_changes",
    "commitment_list",
    "guidance_changes",
    "memory_read",
    "observation_reads",
    "observations",
    "outcomes",
    "owner_settings",
    "people",
    "purge",
    "quotes",
    "restore",
    "retiring",
    "review",
    "saving",
    "search",
    "timeline",
    "tombstone_list",
    "tombstones",
]
