"""The errors the judgment engine raises, one class per refusal.

Each carries a stable machine ``code`` (what MCP clients, Telegram and the CLI
switch on) and its own exit code in 30-49. Messages name what was refused and
why; they never repeat caller text that might be a secret.
"""

from __future__ import annotations

from mama_core.errors import MamaError


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


__all__ = [
    "AlreadyRejectedError",
    "CommandConflictError",
    "EngineError",
    "InvalidInputError",
    "InvalidTransitionError",
    "NotFoundError",
    "NotGrantedError",
    "OwnerTurnRequiredError",
    "ScopeDeniedError",
    "SecretRefusedError",
    "TombstonedError",
    "UnknownActionError",
    "UnknownPersonError",
]
