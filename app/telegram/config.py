"""Where the gateway gets its token and its Bot API server.

The token comes from ``MAMA_TELEGRAM_TOKEN`` or the OS keyring (service
``mama``, account ``telegram-bot-token``, where the tray's settings put it);
it is never written to the data folder. ``MAMA_TELEGRAM_API_URL`` points at a
self-hosted Bot API server (and, in tests, at a fake one on 127.0.0.1).
"""

from __future__ import annotations

import logging
import os

import keyring

from app.local.log_redaction import register_secret

log = logging.getLogger(__name__)

KEYRING_SERVICE = "mama"
KEYRING_ACCOUNT = "telegram-bot-token"
ENV_TOKEN = "MAMA_TELEGRAM_TOKEN"
ENV_API_URL = "MAMA_TELEGRAM_API_URL"
DEFAULT_API_URL = "https://api.telegram.org"


def telegram_token() -> str | None:
    """The bot token from the environment or the keyring; None if neither has one."""
    token = os.environ.get(ENV_TOKEN, "").strip()
    if not token:
        try:
            stored = keyring.get_password(KEYRING_SERVICE, KEYRING_ACCOUNT)
        except Exception as exc:  # any keyring failure means: no token from the keyring
            log.info("no telegram token from the keyring: %s", type(exc).__name__)
            return None
        token = stored.strip() if stored else ""
    register_secret(token)  # never written to a log
    return token or None


def api_url() -> str:
    """The Bot API server's base URL, without a trailing slash."""
    return (os.environ.get(ENV_API_URL, "").strip() or DEFAULT_API_URL).rstrip("/")
