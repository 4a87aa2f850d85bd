"""The OS keyring, loaded on first use.

``keyring`` and what it imports (jaraco, more_itertools, importlib_metadata, the
backends' discovery) cost a ``mama`` command about a tenth of a second before it did
anything; most commands never touch the keyring (``MAMA_DB_KEY`` set, or no secret to
read). The store key, connector secrets and the team's credentials go through these
functions, which import it when a secret is really read, kept or forgotten.
"""

from __future__ import annotations


def get_password(service: str, account: str) -> str | None:
    import keyring

    return keyring.get_password(service, account)


def set_password(service: str, account: str, value: str) -> None:
    import keyring

    keyring.set_password(service, account, value)


def delete_password(service: str, account: str) -> None:
    import keyring

    keyring.delete_password(service, account)


def backend_name() -> str:
    """The active backend's class, e.g. ``SecretService.Keyring`` (may raise)."""
    import keyring

    backend = keyring.get_keyring()
    return f"{type(backend).__module__}.{type(backend).__name__}".removeprefix("keyring.backends.")
