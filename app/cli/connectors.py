"""``mama connectors``: list, add, test, poll, pause, resume and remove the sources MAMA reads.

The connectors live in ``settings.json`` (``connectors``); their secrets in the
OS keyring (or ``MAMA_CONNECTOR_<NAME>_<KEY>``); their cursors and health in the
store, so a running tray or daemon sees a pause, an added or a removed
connector without a restart. Removing one stops it; what it stored stays until
the owner purges it (``mama purge --observation ID``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.memory import json_option
from app.durable.connector_store import ConnectorStore, Health
from app.durable.transaction import RuntimeDb
from app.settings import ConnectorConfig, Settings
from mama_core.errors import MamaError


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


@click.group()
def connectors() -> None:
    """The sources MAMA reads: Slack, mail (IMAP), Trello."""


@contextmanager
def _connector_store(obj: CliContext) -> Iterator[ConnectorStore]:
    from app.durable.schema import open_runtime_db

    db: RuntimeDb = open_runtime_db(obj.store())
    try:
        yield ConnectorStore(db)
    finally:
        db.close()


def _config(obj: CliContext, name: str) -> ConnectorConfig:
    config = obj.settings.connector(name)
    if config is None:
        known = ", ".join(c.name for c in obj.settings.connectors) or "none yet"
        raise ConnectorUnknownError(f"There is no connector {name!r} (connectors: {known}).")
    return config


def _save(obj: CliContext, connectors: tuple[ConnectorConfig, ...]) -> None:
    settings = obj.settings.model_copy(update={"connectors": connectors})
    Settings.model_validate(settings.model_dump())  # the same checks as on load
    settings.save(obj.paths.settings)
    obj._settings = settings  # the context caches the settings it loaded


def _row(config: ConnectorConfig, health: Health | None) -> dict[str, Any]:
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


def _line(config: ConnectorConfig, health: Health | None) -> str:
    if health is None:
        return f"{config.name} ({config.kind}): not polled yet"
    line = health.line()
    return line if config.enabled else f"{line} [disabled in settings]"


@connectors.command("list")
@json_option
@click.pass_obj
def list_connectors(obj: CliContext, as_json: bool) -> None:
    """Each connector with its health: state, items stored, last poll, last error."""
    with _connector_store(obj) as store:
        health = {h.name: h for h in store.all_health()}
    configs = obj.settings.connectors
    if as_json:
        click.echo(json_text({"connectors": [_row(c, health.get(c.name)) for c in configs]}))
        return
    if not configs:
        click.echo("No connectors yet: mama connectors add trello NAME --option boards=...")
    for config in configs:
        click.echo(terminal_text(_line(config, health.get(config.name))))


def _parse_option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConnectorOptionError(f"An option is KEY=VALUE, not {text!r}.")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    if isinstance(parsed, (dict, list)) and not value.strip().startswith(("[", "{")):
        parsed = value
    return key.strip(), parsed


@connectors.command("add")
@click.argument("kind")
@click.argument("name")
@click.option("--option", "-o", "options", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--interval", "interval_s", type=click.FloatRange(1, 86_400), default=60.0)
@click.option("--disabled", is_flag=True, help="Add it without polling it yet.")
@json_option
@click.pass_obj
def add(
    obj: CliContext,
    kind: str,
    name: str,
    options: tuple[str, ...],
    interval_s: float,
    disabled: bool,
    as_json: bool,
) -> None:
    """Add a connector of KIND (slack, mail, trello) named NAME; asks for its secrets."""
    from pydantic import ValidationError

    from app.connectors.kinds import KindUnavailableError, options_help, secret_keys
    from app.connectors.secrets import (
        NoKeyringError,
        connector_secret,
        env_var,
        set_connector_secret,
    )

    try:
        help_lines = options_help(kind)
    except KindUnavailableError as exc:
        raise ConnectorKindError(str(exc)) from None
    if obj.settings.connector(name) is not None:
        raise ConnectorExistsError(f"A connector named {name!r} exists; remove it first.")
    parsed = dict(_parse_option(o) for o in options)
    unknown = sorted(set(parsed) - set(help_lines))
    if unknown:
        known = ", ".join(k for k in help_lines if not k.startswith("secret:"))
        raise ConnectorOptionError(
            f"{kind} has no option {', '.join(unknown)} (its options: {known})."
        )
    try:
        config = ConnectorConfig(
            name=name, kind=kind, enabled=not disabled, interval_s=interval_s, options=parsed
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConnectorOptionError(
            f"Bad {'.'.join(str(p) for p in first['loc'])}: {first['msg']} "
            "(a name is lower-case letters, digits, - and _)."
        ) from None
    missing: list[str] = []
    for key in secret_keys(kind, parsed):
        if connector_secret(name, key):
            continue
        if not sys.stdin.isatty():
            missing.append(env_var(name, key))
            continue
        value = click.prompt(
            f"{name}: {help_lines.get('secret:' + key, key)}", hide_input=True, err=True
        )
        try:
            set_connector_secret(name, key, str(value))
        except NoKeyringError as exc:
            raise ConnectorOptionError(str(exc)) from None
    _save(obj, (*obj.settings.connectors, config))
    if as_json:
        click.echo(json_text({"added": _row(config, None), "secrets_missing": missing}))
        return
    click.echo(terminal_text(f"Added {name} ({kind}); a running MAMA starts polling it."))
    if missing:
        click.echo(
            terminal_text(
                "Its secrets are not set: run this again in a terminal, or set "
                + ", ".join(missing)
                + "."
            )
        )


def _run_connector(obj: CliContext, name: str, poll: bool) -> dict[str, Any]:
    from app.connectors.base import ConnectorError
    from app.connectors.kinds import KindUnavailableError, build_connector
    from app.connectors.secrets import secrets_of

    config = _config(obj, name)
    try:
        connector = build_connector(config.kind, name, config.options, secrets_of(name))
    except KindUnavailableError as exc:
        raise ConnectorKindError(str(exc)) from None
    except ConnectorError as exc:
        raise ConnectorFailedError(
            f"{name}: {exc.problem.value}: {exc}", details={"problem": exc.problem.value}
        ) from None

    async def run() -> dict[str, Any]:
        try:
            if not poll:
                return {"name": name, "summary": await connector.check()}
            with _connector_store(obj) as store:
                batch = await connector.poll(store.cursor(name), 200)
                stored = store.store_batch(name, config.kind, batch)
            return {
                "name": name,
                "read": stored.seen,
                "stored": len(stored.new_ids),
                "more": batch.more,
                "input_id": stored.input_id,
            }
        finally:
            await connector.aclose()

    try:
        return asyncio.run(run())
    except ConnectorError as exc:
        if poll:
            with _connector_store(obj) as store:
                store.record_failure(
                    name, config.kind, exc.problem.value, str(exc), next_poll_at=None
                )
        raise ConnectorFailedError(
            f"{name}: {exc.problem.value}: {exc}", details={"problem": exc.problem.value}
        ) from None


@connectors.command("test")
@click.argument("name")
@json_option
@click.pass_obj
def test(obj: CliContext, name: str, as_json: bool) -> None:
    """Check NAME's credentials and picks (reads nothing into the memory)."""
    result = _run_connector(obj, name, poll=False)
    click.echo(json_text(result) if as_json else terminal_text(f"{name}: {result['summary']}"))


@connectors.command("poll")
@click.argument("name")
@json_option
@click.pass_obj
def poll(obj: CliContext, name: str, as_json: bool) -> None:
    """Poll NAME once now and store what is new (the agent gets it in its next turn)."""
    result = _run_connector(obj, name, poll=True)
    if as_json:
        click.echo(json_text(result))
        return
    more = " (more waiting: poll again)" if result["more"] else ""
    click.echo(f"{name}: read {result['read']}, stored {result['stored']} new{more}")


def _pause(obj: CliContext, name: str, paused: bool, as_json: bool) -> None:
    config = _config(obj, name)
    with _connector_store(obj) as store:
        store.set_paused(name, config.kind, paused)
        health = store.health(name)
    if as_json:
        click.echo(json_text(_row(config, health)))
        return
    click.echo(f"{name}: {'paused' if paused else 'resumed'}")


@connectors.command("pause")
@click.argument("name")
@json_option
@click.pass_obj
def pause(obj: CliContext, name: str, as_json: bool) -> None:
    """Stop polling NAME until resumed (a running MAMA sees it within seconds)."""
    _pause(obj, name, True, as_json)


@connectors.command("resume")
@click.argument("name")
@json_option
@click.pass_obj
def resume(obj: CliContext, name: str, as_json: bool) -> None:
    """Poll NAME again (also after a problem you fixed, such as a new token)."""
    _pause(obj, name, False, as_json)


@connectors.command("remove")
@click.argument("name")
@json_option
@click.pass_obj
def remove(obj: CliContext, name: str, as_json: bool) -> None:
    """Stop and forget NAME and its secrets; what it stored stays until you purge it."""
    from app.connectors.kinds import KindUnavailableError, secret_keys
    from app.connectors.secrets import forget_connector_secrets

    config = _config(obj, name)
    _save(obj, tuple(c for c in obj.settings.connectors if c.name != name))
    with _connector_store(obj) as store:
        stored = store.health(name)
        store.forget_cursor(name)
    with suppress(KindUnavailableError):
        forget_connector_secrets(name, secret_keys(config.kind, config.options))
    kept = stored.items_stored if stored else 0
    if as_json:
        click.echo(json_text({"removed": name, "observations_kept": kept}))
        return
    click.echo(
        f"Removed {name}. The {kept} item(s) it stored stay: see them with "
        "`mama observations list`, erase one with `mama purge --observation ID`."
    )


COMMANDS = [connectors]
