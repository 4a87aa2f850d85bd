"""What the desktop app keeps in the OS keyring (the Telegram bot token), and
whether a keyring works here at all.

``keyring_available`` tells Settings and the first-run wizard whether a token
(or the store key) can be kept; with the ``fail`` backend (no Secret Service,
no D-Bus) the dialogs say so and never write a secret anywhere else. No Qt.
"""

from __future__ import annotations

import contextlib
import logging

import keyring
import keyring.errors

log = logging.getLogger(__name__)

SERVICE = "mama"
TELEGRAM_ACCOUNT = "telegram-bot-token"


def backend_name() -> str:
    """The keyring backend's name, for telling the owner where secrets go."""
    try:
        backend = keyring.get_keyring()
    except Exception:
        return "none"
    return str(getattr(backend, "name", type(backend).__name__))


def keyring_available() -> bool:
    """Whether a real keyring backend is present (not ``fail`` or ``null``)."""
    try:
        backend = keyring.get_keyring()
    except Exception:
        return False
    name = type(backend).__module__
    return not name.endswith((".fail", ".null")) and getattr(backend, "priority", 0) > 0


def load_telegram_token() -> str | None:
    """The stored token, or None when none is stored or no keyring works."""
    try:
        return keyring.get_password(SERVICE, TELEGRAM_ACCOUNT)
    except Exception as exc:
        log.info("telegram token not readable from the keyring: %s", type(exc).__name__)
        return None


def store_telegram_token(token: str) -> None:
    """Keep ``token`` in the keyring; an empty token removes it.

    Raises ``keyring.errors.KeyringError`` when no keyring can take it.
    """
    if token:
        keyring.set_password(SERVICE, TELEGRAM_ACCOUNT, token)
        return
    with contextlib.suppress(keyring.errors.PasswordDeleteError):
        keyring.delete_password(SERVICE, TELEGRAM_ACCOUNT)
