"""Which function carries out each action: mutations build a writer command,
reads run on a read connection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mama_core.memory import (
    checkpoints,
    hybrid_search,
    observation_reads,
    observations,
    outcomes,
    plain_search,
    purge,
    quotes,
    reads,
    retiring,
    review,
    saving,
    timeline,
    tombstone_list,
    tombstones,
)
from mama_core.memory.calls import Call, Env
from mama_core.memory.writer import Command
from mama_core.store.connection import Connection

MutationBuilder = Callable[[Call, Env], Command]
ReadHandler = Callable[[Connection, Call, Env], dict[str, Any]]


def _search(conn: Connection, call: Call, env: Env) -> dict[str, Any]:
    if env.recall is None:
        return plain_search.search(conn, call)
    return hybrid_search.search(conn, call, env.recall)


MUTATIONS: dict[str, MutationBuilder] = {
    "memory.save": saving.save_command,
    "memory.retire": retiring.retire_command,
    "memory.update_outcome": outcomes.update_outcome_command,
    "memory.link": outcomes.link_command,
    "checkpoint.save": checkpoints.checkpoint_save_command,
    "review.approve": review.approve_command,
    "review.reject": review.reject_command,
    "memory.purge": purge.purge_command,
    "memory.tombstone": tombstones.tombstone_command,
    "tombstone.lift": tombstones.lift_command,
    "observation.record": observations.observation_command,
}

READS: dict[str, ReadHandler] = {
    "memory.search": _search,
    "memory.read": reads.read,
    "memory.timeline": timeline.timeline,
    "checkpoint.list": checkpoints.checkpoint_list,
    "tombstone.list": tombstone_list.list_tombstones,
    "observation.list": observation_reads.observation_list,
    "observation.read": observation_reads.observation_read,
    "memory.quotes": quotes.quotes,
}
