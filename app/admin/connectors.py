"""The owner's control of the connectors, shared by ``mama connectors`` and Settings.

Add (checked options, secrets to the keyring), test, poll once, pause or resume,
and remove a connector. The connectors live in ``settings.json``; their secrets
in the OS keyring (or ``MAMA_CONNECTOR_<NAME>_<KEY>``); their cursors and health
in the store. The CLI and the desktop's Settings page both call these functions,
so a connector added in one behaves the same as one added in the other. No Qt,
no Click: errors are ``MamaError`` subclasses with a line for the owner.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.connectors.base import ConnectorError
from app.connectors.kinds import (
    KindUnavailableError,
    SecretLookup,
    build_connector,
    options_help,
    secret_keys,
)
from app.connectors.secrets import (
    NoKeyringError,
    connector_secret,
    env_var,
    forget_connector_secrets,
    secrets_of,
    set_connector_secret,
)
from app.durable.connector_store import ConnectorStore, Health
from app.local.settings import ConnectorConfig, Settings
from mama_core.errors import MamaError
from mama_core.store import Store


class ConnectorUnknownError(MamaError):
    code = "connector_not_found"
    exit_code = 4


class ConnectorExistsError(MamaError):
    code = "connector_exists"
    exit_code = 4


class ConnectorKindError(MamaError):
    code = "connector_unavailable"
    exit_code = 4


class ConnectorOptionError(MamaError):
    code = "invalid_input"
    exit_code = 2


class ConnectorFailedError(MamaError):
    """A test or poll that the source refused; ``details.problem`` is its machine code."""

    code = "connector_failed"
    exit_code = 5


@contextmanager
def open_connector_store(store: Store) -> Iterator[ConnectorStore]:
    """The connectors' cursors and health on a connection of its own, closed after.

    Blocking (a new SQLCipher connection): call it off the event loop, and use the
    store on the thread that opened it."""
    from app.durable.schema import open_runtime_db

    db = open_runtime_db(store)
    try:
        yield ConnectorStore(db)
    finally:
        db.close()


def config_of(settings: Settings, name: str) -> ConnectorConfig:
    """The connector ``name``, or ConnectorUnknownError naming the ones there are."""
    config = settings.connector(name)
    if config is None:
        known = ", ".join(c.name for c in settings.connectors) or "none yet"
        raise ConnectorUnknownError(f"There is no connector {name!r} (connectors: {known}).")
    return config


def kind_options(kind: str) -> dict[str, str]:
    """A kind's options and secrets (``secret:<key>``), each with a line of help."""
    try:
        return options_help(kind)
    except KindUnavailableError as exc:
        raise ConnectorKindError(str(exc)) from None


def new_connector(
    settings: Settings,
    kind: str,
    name: str,
    options: Mapping[str, Any],
    *,
    interval_s: float = 60.0,
    enabled: bool = True,
) -> ConnectorConfig:
    """A checked new connector (not saved yet): a known kind, a free name, known options."""
    from pydantic import ValidationError

    help_lines = kind_options(kind)
    if settings.connector(name) is not None:
        raise ConnectorExistsError(f"A connector named {name!r} exists; remove it first.")
    unknown = sorted(set(options) - set(help_lines))
    if unknown:
        known = ", ".join(k for k in help_lines if not k.startswith("secret:"))
        raise ConnectorOptionError(
            f"{kind} has no option {', '.join(unknown)} (its options: {known})."
        )
    try:
        return ConnectorConfig(
            name=name, kind=kind, enabled=enabled, interval_s=interval_s, options=dict(options)
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConnectorOptionError(
            f"Bad {'.'.join(str(p) for p in first['loc'])}: {first['msg']} "
            "(a name is lower-case letters, digits, - and _)."
        ) from None


def missing_secrets(config: ConnectorConfig) -> list[str]:
    """The secret keys ``config`` reads that neither the keyring nor the environment has."""
    return [
        key
        for key in secret_keys(config.kind, config.options)
        if not connector_secret(config.name, key)
    ]


def keep_secret(name: str, key: str, value: str) -> None:
    """Keep a connector's secret in the OS keyring (never a file); a line if it cannot."""
    try:
        set_connector_secret(name, key, value)
    except NoKeyringError as exc:
        raise ConnectorOptionError(str(exc)) from None


def secret_variable(name: str, key: str) -> str:
    """The environment variable that gives a secret where no keyring works."""
    return env_var(name, key)


def save_connectors(
    settings: Settings, connectors: tuple[ConnectorConfig, ...], path: Path
) -> Settings:
    """``settings`` with ``connectors``, checked as on load and saved to ``path``."""
    new = settings.model_copy(update={"connectors": connectors})
    Settings.model_validate(new.model_dump())  # the same checks as on load
    new.save(path)
    return new


def add_connector(settings: Settings, config: ConnectorConfig, path: Path) -> Settings:
    """Save ``config`` (from ``new_connector``) beside the others; a running MAMA polls it."""
    if settings.connector(config.name) is not None:
        raise ConnectorExistsError(f"A connector named {config.name!r} exists; remove it first.")
    return save_connectors(settings, (*settings.connectors, config), path)


@dataclass(frozen=True)
class Removed:
    settings: Settings
    """The settings now saved (without the connector)."""
    observations_kept: int
    """Items it stored, which stay until the owner purges them."""


def remove_connector(settings: Settings, name: str, path: Path, store: ConnectorStore) -> Removed:
    """Stop and forget ``name``: out of the settings, its cursor and its keyring secrets
    gone; what it stored stays until the owner purges it."""
    config = config_of(settings, name)
    new = save_connectors(settings, tuple(c for c in settings.connectors if c.name != name), path)
    stored = store.health(name)
    store.forget_cursor(name)
    with suppress(KindUnavailableError):
        forget_connector_secrets(name, secret_keys(config.kind, config.options))
    return Removed(new, stored.items_stored if stored else 0)


def set_paused(store: ConnectorStore, config: ConnectorConfig, paused: bool) -> Health | None:
    """Pause or resume polling (a running MAMA reads it before every poll)."""
    store.set_paused(config.name, config.kind, paused)
    return store.health(config.name)


def _build(config: ConnectorConfig, secret: SecretLookup | None) -> Any:
    try:
        return build_connector(
            config.kind, config.name, config.options, secret or secrets_of(config.name)
        )
    except KindUnavailableError as exc:
        raise ConnectorKindError(str(exc)) from None
    except ConnectorError as exc:
        raise failed(config.name, exc) from None


def failed(name: str, exc: ConnectorError) -> ConnectorFailedError:
    """The owner's line for a connector error: ``name: problem: what the source said``."""
    return ConnectorFailedError(
        f"{name}: {exc.problem.value}: {exc}", details={"problem": exc.problem.value}
    )


async def check_connector(config: ConnectorConfig, secret: SecretLookup | None = None) -> str:
    """Check the credentials and picks (``mama connectors test``); reads nothing into
    the memory. A one-line summary, or ConnectorFailedError with the source's problem."""
    connector = _build(config, secret)
    try:
        return str(await connector.check())
    except ConnectorError as exc:
        raise failed(config.name, exc) from None
    finally:
        await connector.aclose()


PICKS: dict[str, str] = {"trello": "boards", "slack": "channels", "calendar": "calendars"}
"""The option each kind can offer choices for, read live from the source."""


async def list_choices(
    kind: str, options: Mapping[str, Any], secret: SecretLookup, name: str = "new"
) -> list[str]:
    """What the owner may pick for ``PICKS[kind]`` (Trello boards, Slack channels), as the
    source lists them for these credentials; ConnectorFailedError says why not."""
    option = PICKS.get(kind)
    if option is None:
        raise ConnectorKindError(f"{kind} offers nothing to pick from a list.")
    # The picks themselves do not matter for listing; the options' checks want one.
    from pydantic import ValidationError

    picked = {**options, option: ["-"]}
    try:
        config = ConnectorConfig(name=name, kind=kind, options=picked)
    except ValidationError:  # a name still being typed: list anyway
        config = ConnectorConfig(name="new", kind=kind, options=picked)
    connector = _build(config, secret)
    try:
        return [str(choice) for choice in await connector.choices()]
    except ConnectorError as exc:
        raise failed(name, exc) from None
    finally:
        await connector.aclose()


async def poll_connector(
    config: ConnectorConfig,
    store: ConnectorStore,
    limit: int = 200,
    secret: SecretLookup | None = None,
) -> dict[str, Any]:
    """Poll once now from the stored cursor and store what is new (``mama connectors
    poll``); a failure is recorded in the connector's health and raised."""
    connector = _build(config, secret)
    try:
        batch = await connector.poll(store.cursor(config.name), limit)
        stored = store.store_batch(config.name, config.kind, batch)
    except ConnectorError as exc:
        store.record_failure(
            config.name, config.kind, exc.problem.value, str(exc), next_poll_at=None
        )
        raise failed(config.name, exc) from None
    finally:
        await connector.aclose()
    return {
        "name": config.name,
        "read": stored.seen,
        "stored": len(stored.new_ids),
        "more": batch.more,
        "input_id": stored.input_id,
    }


def connector_row(config: ConnectorConfig, health: Health | None) -> dict[str, Any]:
    """A connector and its health as JSON (``mama connectors list --json``)."""
    row: dict[str, Any] = {
        "name": config.name,
        "kind": config.kind,
        "enabled": config.enabled,
        "interval_s": config.interval_s,
        "options": config.options,
    }
    row.update(
        (health.to_wire() | {"name": config.name, "kind": config.kind})
        if health
        else {"state": "idle", "paused": False, "items_stored": 0}
    )
    return row


def health_line(config: ConnectorConfig, health: Health | None) -> str:
    """One line for a person about a connector's health."""
    if health is None:
        return f"{config.name} ({config.kind}): not polled yet"
    line = health.line()
    return line if config.enabled else f"{line} [disabled in settings]"
