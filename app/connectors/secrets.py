"""A connector's secrets (tokens, passwords): the OS keyring, or the environment.

Each secret is a keyring entry (service ``mama``, account
``connector:<name>:<key>``). Where no keyring works (a server), the variable
``MAMA_CONNECTOR_<NAME>_<KEY>`` (upper case, ``-`` as ``_``) gives it instead,
and wins over the keyring. Secrets never go to ``settings.json`` or a log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from app.local import os_keyring
from app.local.log_redaction import register_secret

log = logging.getLogger(__name__)

KEYRING_SERVICE = "mama"


class NoKeyringError(Exception):
    """No usable keyring to keep the secret in (use the environment variable)."""


def env_var(name: str, key: str) -> str:
    """The environment variable that gives ``key`` of connector ``name``."""
    return f"MAMA_CONNECTOR_{name}_{key}".upper().replace("-", "_")


def account(name: str, key: str) -> str:
    return f"connector:{name}:{key}"


def connector_secret(name: str, key: str) -> str | None:
    """The secret ``key`` of connector ``name``, or None if neither place has it."""
    value = os.environ.get(env_var(name, key))
    if not value:
        try:
            value = os_keyring.get_password(KEYRING_SERVICE, account(name, key))
        except Exception as exc:  # any keyring failure means: not from the keyring
            log.info("no connector secret from the keyring: %s", type(exc).__name__)
            return None
    register_secret(value)  # held in memory from now on: never written to a log
    return value


def secrets_of(name: str) -> Callable[[str], str | None]:
    """The ``secret(key)`` callable a connector module's ``build`` takes."""
    return lambda key: connector_secret(name, key)


def set_connector_secret(name: str, key: str, value: str) -> None:
    """Keep ``value`` in the keyring; NoKeyringError names the variable to use instead."""
    register_secret(value)
    try:
        os_keyring.set_password(KEYRING_SERVICE, account(name, key), value)
    except Exception as exc:
        raise NoKeyringError(
            f"no usable OS keyring ({type(exc).__name__}); set {env_var(name, key)} instead"
        ) from exc


def forget_connector_secrets(name: str, keys: list[str]) -> None:
    """Remove the keyring's secrets of a removed connector (missing ones are fine)."""
    for key in keys:
        try:
            os_keyring.delete_password(KEYRING_SERVICE, account(name, key))
        except Exception as exc:  # no entry or no keyring: nothing to forget
            log.info("no connector secret removed: %s", type(exc).__name__)
