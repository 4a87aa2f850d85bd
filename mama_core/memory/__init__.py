"""The judgment engine: the one writer, scopes, review states, tombstones, purge,
time-travel reads and the action catalog, over the encrypted store.

The vocabulary (kinds, statuses, ``ChangeSet``) lives in ``mama_core.model``."""

from __future__ import annotations

from mama_core.errors import (
    CommandConflictError,
    EngineError,
    InvalidInputError,
    InvalidTransitionError,
    NotFoundError,
    NotGrantedError,
    OwnerTurnRequiredError,
    ScopeDeniedError,
    SecretRefusedError,
    TombstonedError,
    UnknownActionError,
)
from mama_core.memory.catalog import CATALOG, ActionSpec, Catalog
from mama_core.memory.config import EngineConfig
from mama_core.memory.engine import Engine
from mama_core.memory.verify import VerifyReport, verify_store
from mama_core.receipt import Receipt
from mama_core.scopes.grants import Grant
from mama_core.session import ActorKind, SessionFacts, TurnKind

__all__ = [
    "CATALOG",
    "ActionSpec",
    "ActorKind",
    "Catalog",
    "CommandConflictError",
    "Engine",
    "EngineConfig",
    "EngineError",
    "Grant",
    "InvalidInputError",
    "InvalidTransitionError",
    "NotFoundError",
    "NotGrantedError",
    "OwnerTurnRequiredError",
    "Receipt",
    "ScopeDeniedError",
    "SecretRefusedError",
    "SessionFacts",
    "TombstonedError",
    "TurnKind",
    "UnknownActionError",
    "VerifyReport",
    "verify_store",
]
