"""The connector kinds this build knows, each a module imported only when used.

Every module here exposes ``build(name, options, secret) -> Connector`` and
``OPTIONS_HELP`` (option -> one line for the owner); ``SECRETS`` (the secret keys
it reads, e.g. ``("api_key", "token")``) is optional — ``KNOWN_SECRETS`` names
them for Slack (``token``) and mail (``password``, or ``oauth_token`` with
``auth=xoauth2``) and the calendar (``password`` for CalDAV, else ``ics_url``).
A kind whose module is missing says so instead of crashing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, cast

from app.connectors.base import Connector
from app.local.log_redaction import register_secret

KINDS: dict[str, str] = {
    "slack": "app.connectors.slack",
    "mail": "app.connectors.mail",
    "trello": "app.connectors.trello",
    "calendar": "app.connectors.calendar",
}

SecretLookup = Callable[[str], "str | None"]


class KindUnavailableError(Exception):
    """An unknown kind, or one whose module is not in this build."""

    code = "connector_unavailable"


def kind_module(kind: str) -> ModuleType:
    """The module of ``kind``, or KindUnavailableError with a line for the owner."""
    path = KINDS.get(kind)
    if path is None:
        raise KindUnavailableError(
            f"There is no connector kind {kind!r}; the kinds are {', '.join(sorted(KINDS))}."
        )
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (exc.name == path or path.startswith(exc.name + ".")):
            raise KindUnavailableError(
                f"The {kind} connector is not available in this build."
            ) from None
        raise


def build_connector(
    kind: str, name: str, options: Mapping[str, Any], secret: SecretLookup
) -> Connector:
    """A connector of ``kind`` named ``name`` (it may raise ConnectorError for bad options)."""
    module = kind_module(kind)

    def held(key: str) -> str | None:
        value = secret(key)
        register_secret(value)  # a connector holds it from now on: never in a log
        return value

    return cast(Connector, module.build(name, options, held))


def options_help(kind: str) -> dict[str, str]:
    return dict(getattr(kind_module(kind), "OPTIONS_HELP", {}))


def _mail_secrets(options: Mapping[str, Any]) -> list[str]:
    return ["oauth_token" if options.get("auth") == "xoauth2" else "password"]


def _calendar_secrets(options: Mapping[str, Any]) -> list[str]:
    # CalDAV's password, or (without url=) the iCalendar address, which is its own secret.
    return ["password"] if options.get("url") else ["ics_url"]


KNOWN_SECRETS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "slack": lambda _options: ["token"],
    "mail": _mail_secrets,
    "calendar": _calendar_secrets,
}
"""The secrets of kinds whose modules do not name them (``SECRETS``), by their options."""


def secret_keys(kind: str, options: Mapping[str, Any] | None = None) -> list[str]:
    """The secrets a kind reads with ``options``: its ``SECRETS``, else ``KNOWN_SECRETS``,
    else the ``secret:`` entries of its help."""
    module = kind_module(kind)
    keys = getattr(module, "SECRETS", None)
    if keys is not None:
        return [str(k) for k in keys]
    if kind in KNOWN_SECRETS:
        return KNOWN_SECRETS[kind](options or {})
    return [
        k.removeprefix("secret:")
        for k in getattr(module, "OPTIONS_HELP", {})
        if k.startswith("secret:")
    ]
