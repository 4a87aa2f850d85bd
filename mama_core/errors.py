"""The one exception root of MAMA.

Every error a person may see is a ``MamaError``: a machine ``code`` (stable,
snake_case, what a program switches on), a one-sentence ``message`` that names
the problem and what to do, and the ``exit_code`` the command line uses.
Third-party errors (SQLCipher, llama.cpp, the OS keyring) are translated into
these where they enter, so no traceback reaches a person. The judgment engine's
refusals (``EngineError`` and below, exit codes 30-49) are here too, one class per
refusal.
"""

from __future__ import annotations

from typing import ClassVar

from mama_core.json_types import JsonObject


class MamaError(Exception):
    """Root of every error MAMA shows to a person or a program."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, details: JsonObject | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: JsonObject = dict(details or {})

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> JsonObject:
        """The machine form: code, message and any details."""
        out: JsonObject = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


# --- the store ------------------------------------------------------------


class StoreError(MamaError):
    """A problem with the encrypted database file or its folder."""

    code = "store_error"
    exit_code = 10


class WrongKeyError(StoreError):
    code = "wrong_key"
    exit_code = 11


class NotADatabaseError(StoreError):
    code = "not_a_database"
    exit_code = 12


class NewerSchemaError(StoreError):
    code = "newer_schema"
    exit_code = 13


class StoreLockedError(StoreError):
    code = "store_locked"
    exit_code = 14


class ReadOnlyError(StoreError):
    code = "read_only"
    exit_code = 15


class DiskFullError(StoreError):
    code = "disk_full"
    exit_code = 16


class KeyUnavailableError(StoreError):
    code = "key_unavailable"
    exit_code = 17


class MigrationError(StoreError):
    code = "migration_failed"
    exit_code = 18


class ModelUnavailableError(MamaError):
    """The embedding model cannot be built or loaded."""

    code = "model_unavailable"
    exit_code = 20


# --- the judgment engine: one class per refusal, exit codes 30-49 -------------
# Messages name what was refused and why; they never repeat caller text that might be a secret.


class EngineError(MamaError):
    """Root of the judgment engine's refusals."""

    code = "engine_error"
    exit_code = 30


class UnknownActionError(EngineError):
    """The action name is not in the catalog."""

    code = "unknown_action"
    exit_code = 31


class InvalidInputError(EngineError):
    """The payload does not match the action's schema; details name the field paths."""

    code = "invalid_input"
    exit_code = 32


class NotGrantedError(EngineError):
    """The caller's grant does not include this action (or this use of it)."""

    code = "not_granted"
    exit_code = 33


class ScopeDeniedError(EngineError):
    """An explicit scope lies outside the caller's grant; never silently narrowed."""

    code = "scope_denied"
    exit_code = 34


class SecretRefusedError(EngineError):
    """A recallable write contains something shaped like a secret."""

    code = "secret_refused"
    exit_code = 35


class OwnerTurnRequiredError(EngineError):
    """A non-owner turn tried to retire or replace guidance or an owner's record."""

    code = "owner_turn_required"
    exit_code = 36


class TombstonedError(EngineError):
    """The save matches a tombstone: the owner retired this and forbade its return."""

    code = "tombstoned"
    exit_code = 37


class AlreadyRejectedError(EngineError):
    """A proposal the owner already rejected, from the same items: not proposed again."""

    code = "already_rejected"
    exit_code = 41


class CommandConflictError(EngineError):
    """A command id was reused with a different payload, action or caller."""

    code = "command_conflict"
    exit_code = 38


class NotFoundError(EngineError):
    """No such record, or not visible to the caller (the two look the same)."""

    code = "not_found"
    exit_code = 39


class InvalidTransitionError(EngineError):
    """The record's status does not allow this change (e.g. approving an active record)."""

    code = "invalid_transition"
    exit_code = 40


class UnknownPersonError(NotFoundError):
    """No one the caller may know of goes by this name; the nearest known names are in
    ``details["suggestions"]`` (a not-found, so its exit code is not-found's)."""

    code = "unknown_person"

    def __init__(self, name: str, suggestions: list[str]) -> None:
        hint = (
            f" Did you mean {', '.join(repr(s) for s in suggestions)}?"
            if suggestions
            else " No one with a similar name is known either."
        )
        super().__init__(
            f"No one known as {name.strip()!r}: no commitment, message, meeting or memory "
            f"names them.{hint} List the people known, or join this name to one of them.",
            details={"name": name.strip(), "suggestions": suggestions},
        )
