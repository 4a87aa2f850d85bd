"""Where the database key comes from: ``MAMA_DB_KEY``, the OS keyring, or a
passphrase the owner types.

On first use a random 256-bit key is created and kept in the OS keyring, one
entry per store file. Where no keyring works, the owner gives a passphrase
that SQLCipher turns into the key. ``MAMA_DB_KEY`` overrides both (headless
use and tests). The key is never written to the data folder or a log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from filelock import FileLock

from app.local import os_keyring
from app.local.log_redaction import register_secret
from mama_core.errors import KeyUnavailableError
from mama_core.store import DbKey
from mama_core.store.store import creation_lock_path

log = logging.getLogger(__name__)

KEYRING_SERVICE = "mama"
ENV_KEY = "MAMA_DB_KEY"

AskPassphrase = Callable[[str, bool], str]
"""``ask(prompt, confirm)`` returns the passphrase the owner typed."""


class KeyOrigin(StrEnum):
    ENV = "MAMA_DB_KEY"
    KEYRING = "keyring"
    PASSPHRASE = "passphrase"


@dataclass(frozen=True)
class ResolvedKey:
    key: DbKey
    origin: KeyOrigin
    detail: str = ""

    def describe(self) -> str:
        """Where the key came from, for `mama doctor` (never the key)."""
        return f"{self.origin.value} ({self.detail})" if self.detail else self.origin.value


def keyring_account(db_path: Path) -> str:
    return f"store:{db_path.resolve()}"


def resolve_key(db_path: Path, ask_passphrase: AskPassphrase | None = None) -> ResolvedKey:
    """The key for the store at ``db_path``, creating one for a new store; the key is
    registered as a live secret, so no log ever shows it."""
    resolved = _resolve_key(db_path, ask_passphrase)
    register_secret(resolved.key.reveal())
    return resolved


def _resolve_key(db_path: Path, ask_passphrase: AskPassphrase | None) -> ResolvedKey:
    env = os.environ.get(ENV_KEY)
    if env:
        return ResolvedKey(DbKey.from_secret(env), KeyOrigin.ENV)

    exists = db_path.exists() and db_path.stat().st_size > 0
    backend = _backend_name()
    try:
        stored = os_keyring.get_password(KEYRING_SERVICE, keyring_account(db_path))
        if stored:
            return ResolvedKey(DbKey.from_secret(stored), KeyOrigin.KEYRING, backend)
        if not exists:
            return _new_keyring_key(db_path, backend)
    except Exception as exc:  # any keyring backend failure means: no usable keyring
        log.info("no usable OS keyring (%s): %s", backend, type(exc).__name__)

    if ask_passphrase is None:
        raise KeyUnavailableError(
            f"No key for the memory store {db_path}: no OS keyring holds one and no "
            f"passphrase can be asked here; set {ENV_KEY} or run MAMA in a terminal."
        )
    prompt = (
        f"Passphrase for the memory store {db_path}"
        if exists
        else f"Choose a passphrase for the new memory store {db_path}"
    )
    secret = ask_passphrase(prompt, not exists)
    if not secret:
        raise KeyUnavailableError("No passphrase was given; the memory store stays closed.")
    return ResolvedKey(DbKey(secret, raw=False), KeyOrigin.PASSPHRASE)


def _new_keyring_key(db_path: Path, backend: str) -> ResolvedKey:
    """A key for the new store at ``db_path``, made once: processes started together on
    a new folder take the store's creation lock, and the first one's key is everyone's."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(creation_lock_path(db_path), thread_local=False):
        stored = os_keyring.get_password(KEYRING_SERVICE, keyring_account(db_path))
        if stored:
            return ResolvedKey(DbKey.from_secret(stored), KeyOrigin.KEYRING, backend)
        key = DbKey.generate()
        os_keyring.set_password(KEYRING_SERVICE, keyring_account(db_path), key.reveal())
    log.info("created a new store key in the OS keyring (%s)", backend)
    return ResolvedKey(key, KeyOrigin.KEYRING, backend)


def forget_keyring_key(db_path: Path) -> None:
    """Remove the keyring's key for ``db_path`` (a store that no longer exists)."""
    try:
        os_keyring.delete_password(KEYRING_SERVICE, keyring_account(db_path))
    except Exception as exc:  # no entry, or no usable keyring: nothing to forget
        log.info("no keyring key removed for %s: %s", db_path, type(exc).__name__)


def _backend_name() -> str:
    try:
        return os_keyring.backend_name()
    except Exception:
        return "unknown"
