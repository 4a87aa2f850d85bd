"""One validated call on its way through the dispatcher, and what handlers may use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from mama_core.memory.catalog import ActionSpec
from mama_core.memory.config import EngineConfig
from mama_core.memory.grants import Grant
from mama_core.memory.session import SessionFacts
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.recall import Recall
from mama_core.store.connection import Connection


@dataclass(frozen=True)
class Call:
    """An action call after validation: its input, caller and idempotency key."""

    spec: ActionSpec
    input: BaseModel
    session: SessionFacts
    grant: Grant
    command_id: str = ""
    payload_hash: str = ""
    replay_known: bool = False
    """A receipt for ``command_id`` already exists: skip costly preparation."""


@dataclass(frozen=True)
class Env:
    """What handlers need from the engine: settings, the embedding model and recall."""

    config: EngineConfig
    model_id: str
    embed: Callable[[str], np.ndarray]
    recall: Callable[[], Recall] | None = None
    """Hybrid recall, made on first use (loading the vector cache costs time)."""


def command_for(
    call: Call,
    apply: Callable[[Tx], Applied],
    after_commit: Callable[[Connection], dict[str, Any] | None] | None = None,
) -> Command:
    """The writer command that carries out ``call`` with ``apply``."""
    return Command(
        action=call.spec.name,
        command_id=call.command_id,
        payload_hash=call.payload_hash,
        session=call.session,
        grant=call.grant,
        apply=apply,
        after_commit=after_commit,
    )
