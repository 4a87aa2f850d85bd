"""``mama brief now`` and ``mama settings``: the daily brief on demand, and the owner's
timezone and brief schedule (the owner's own action, so always allowed here)."""

from __future__ import annotations

from typing import Any

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.memory import json_option
from mama_core.memory.owner_settings import COVERS, DAYS


@click.group()
def brief() -> None:
    """The daily brief: what came in, what is due, what waits for you."""


@brief.command("now")
@click.option(
    "--send", is_flag=True, help="Also send it to your Telegram chat (by the running MAMA)."
)
@json_option
@click.pass_obj
def brief_now(obj: CliContext, send: bool, as_json: bool) -> None:
    """Write the brief now, as MAMA does without a model, and print it.

    It counts what is new since the last scheduled brief; it does not move that mark.
    """
    from app.durable.journal import DeliveryJournal
    from app.durable.schema import open_runtime_db
    from app.runtime.brief_gather import BriefWriter

    engine = obj.engine()
    db = open_runtime_db(obj.store())
    try:
        writer = BriefWriter(engine, db)
        text = writer.compose()
        queued = None
        if send:
            queued = DeliveryJournal(db).enqueue_notice(f"brief-now:{writer.clock.now()}", text)
    finally:
        db.close()
    if as_json:
        click.echo(json_text({"text": text, "lines": text.splitlines(), "queued": queued}))
        return
    click.echo(text)
    if send:
        click.echo("\nQueued for your Telegram chat; the running MAMA sends it.", err=True)


@click.group("settings")
def settings_group() -> None:
    """Your timezone and the daily brief's schedule."""


@settings_group.command("show")
@json_option
@click.pass_obj
def settings_show(obj: CliContext, as_json: bool) -> None:
    """Show your timezone and the daily brief's settings."""
    _emit(obj.owner_dispatch("owner.settings", {}), as_json)


@settings_group.command("timezone")
@click.argument("name")
@json_option
@click.pass_obj
def settings_timezone(obj: CliContext, name: str, as_json: bool) -> None:
    """Set your timezone (an IANA name such as Europe/Berlin)."""
    receipt = obj.owner_dispatch("owner.set_timezone", {"timezone": name})
    _emit(receipt["settings"], as_json)


@settings_group.command("brief")
@click.option("--on/--off", "enabled", default=None, help="Send the daily brief, or not.")
@click.option("--days", help=f"Comma-separated weekdays ({','.join(DAYS)}), or 'weekdays'.")
@click.option("--time", "at", help="Local time, HH:MM (24-hour).")
@click.option("--covers", help=f"Comma-separated: {','.join(COVERS)}.")
@json_option
@click.pass_obj
def settings_brief(
    obj: CliContext,
    enabled: bool | None,
    days: str | None,
    at: str | None,
    covers: str | None,
    as_json: bool,
) -> None:
    """Change the daily brief; what you leave out stays as it is."""
    payload: dict[str, Any] = {}
    if enabled is not None:
        payload["enabled"] = enabled
    if days is not None:
        payload["days"] = _days(days)
    if at is not None:
        payload["time"] = at
    if covers is not None:
        payload["covers"] = _words(covers)
    receipt = obj.owner_dispatch("owner.set_brief", payload)
    _emit(receipt["settings"], as_json)


def _days(text: str) -> list[str]:
    words = _words(text)
    if words == ["weekdays"]:
        return list(DAYS[:5])
    if words in (["daily"], ["every"], ["all"]):
        return list(DAYS)
    return [w[:3] for w in words]


def _words(text: str) -> list[str]:
    return [w.strip().lower() for w in text.replace(" ", ",").split(",") if w.strip()]


def _emit(settings: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json_text(settings))
        return
    brief_settings = settings["brief"]
    from mama_core.memory.owner_settings import local_zone

    zone = settings["timezone"] or f"not set (this computer's: {local_zone().key})"
    state = "on" if brief_settings["enabled"] else "off"
    click.echo(f"Timezone: {zone}")
    click.echo(
        f"Daily brief: {state}, {','.join(brief_settings['days']) or 'no days'} at "
        f"{brief_settings['time']}; covers {', '.join(brief_settings['covers']) or 'nothing'}"
    )
    for change in settings.get("pending_changes") or []:
        click.echo(_waiting_text(change))


def _waiting_text(change: dict[str, Any]) -> str:
    """A settings change an agent proposed, and the two commands that decide it."""
    by = change.get("proposed_by") or {}
    who = by.get("name") or by.get("kind") or "someone"
    turn = f" ({by['turn']} turn)" if by.get("turn") else ""
    number = change["id"]
    return (
        f"Waiting for you: change {number}: {terminal_text(who)}{turn} proposes to "
        f"{terminal_text(change.get('description', ''))}\n"
        f"    mama approve --change {number}   applies it as your own change\n"
        f"    mama reject --change {number} --reason TEXT   leaves your settings as they are"
    )


COMMANDS = [brief, settings_group]
