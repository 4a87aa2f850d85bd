"""The one exception root of MAMA.

Every error a person may see is a ``MamaError``: a machine ``code`` (stable,
snake_case, what a program switches on), a one-sentence ``message`` that names
the problem and what to do, and the ``exit_code`` the command line uses.
Third-party errors (SQLCipher, llama.cpp, the OS keyring) are translated into
these where they enter, so no traceback reaches a person.
"""

from __future__ import annotations

from typing import Any, ClassVar


class MamaError(Exception):
    """Root of every error MAMA shows to a person or a program."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        """The machine form: code, message and any details."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
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
