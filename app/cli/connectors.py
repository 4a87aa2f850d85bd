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
from contextlib import AbstractContextManager
from typing import Any

import click

from app.admin.connectors import (
    ConnectorExistsError,
    ConnectorFailedError,
    ConnectorKindError,
    ConnectorOptionError,
    ConnectorUnknownError,
    add_connector,
    check_connector,
    config_of,
    connector_row,
    health_line,
    keep_secret,
    kind_options,
    missing_secrets,
    new_connector,
    open_connector_store,
    poll_connector,
    remove_connector,
    secret_variable,
    set_paused,
)
from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.memory import json_option
from app.durable.connector_store import ConnectorStore
from app.local.settings import ConnectorConfig

__all__ = [
    "COMMANDS",
    "ConnectorExistsError",
    "ConnectorFailedError",
    "ConnectorKindError",
    "ConnectorOptionError",
    "ConnectorUnknownError",
]


@click.group()
def connectors() -> None:
    """The sources MAMA reads: Slack, mail (IMAP), Trello, your calendar (read only)."""


def _connector_store(obj: CliContext) -> AbstractContextManager[ConnectorStore]:
    return open_connector_store(obj.store())


def _config(obj: CliContext, name: str) -> ConnectorConfig:
    return config_of(obj.settings, name)


@connectors.command("list")
@json_option
@click.pass_obj
def list_connectors(obj: CliContext, as_json: bool) -> None:
    """Each connector with its health: state, items stored, last poll, last error."""
    with _connector_store(obj) as store:
        health = {h.name: h for h in store.all_health()}
    configs = obj.settings.connectors
    if as_json:
        click.echo(
            json_text({"connectors": [connector_row(c, health.get(c.name)) for c in configs]})
        )
        return
    if not configs:
        click.echo("No connectors yet: mama connectors add trello NAME --option boards=...")
    for config in configs:
        click.echo(terminal_text(health_line(config, health.get(config.name))))


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
    """Add a connector of KIND (slack, mail, trello, calendar) named NAME; asks for its
    secrets."""
    help_lines = kind_options(kind)
    parsed = dict(_parse_option(o) for o in options)
    config = new_connector(
        obj.settings, kind, name, parsed, interval_s=interval_s, enabled=not disabled
    )
    missing: list[str] = []
    for key in missing_secrets(config):
        if not sys.stdin.isatty():
            missing.append(secret_variable(name, key))
            continue
        value = click.prompt(
            f"{name}: {help_lines.get('secret:' + key, key)}", hide_input=True, err=True
        )
        keep_secret(name, key, str(value))
    obj._settings = add_connector(obj.settings, config, obj.paths.settings)
    if as_json:
        click.echo(json_text({"added": connector_row(config, None), "secrets_missing": missing}))
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
    config = _config(obj, name)
    if not poll:
        return {"name": name, "summary": asyncio.run(check_connector(config))}

    async def run() -> dict[str, Any]:
        with _connector_store(obj) as store:
            return await poll_connector(config, store)

    return asyncio.run(run())


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
        health = set_paused(store, config, paused)
    if as_json:
        click.echo(json_text(connector_row(config, health)))
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
    with _connector_store(obj) as store:
        removed = remove_connector(obj.settings, name, obj.paths.settings, store)
    obj._settings = removed.settings
    kept = removed.observations_kept
    if as_json:
        click.echo(json_text({"removed": name, "observations_kept": kept}))
        return
    click.echo(
        f"Removed {name}. The {kept} item(s) it stored stay: see them with "
        "`mama observations list`, erase one with `mama purge --observation ID`."
    )


COMMANDS = [connectors]
