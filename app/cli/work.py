"""``mama work``: the owner's commitments at the command line.

``list`` shows open commitments by due time (overdue marked, proposals waiting for the
owner labelled); ``add`` makes one with its terms (who owes whom, by when); ``done``,
``drop`` and ``due`` close or move one. Each is an owner
action through the catalog (``commitment.list``, ``commitment.close``,
``commitment.reschedule``), so it gets the same checks, receipt and event as a click
in the review window. ``--json`` prints the result or receipt as JSON on stdout.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.params import ROW_ID
from mama_core import clock
from mama_core.errors import InvalidInputError
from mama_core.memory import Receipt
from mama_core.memory.commitments import due_fields
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.inputs import (
    OWNER_PARTY,
    CommitmentCloseInput,
    CommitmentRescheduleInput,
    SaveInput,
)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
CLEAR_DUE = ("none", "-")
"""WHEN values that take a commitment's due time away."""


@click.group()
def work() -> None:
    """Your commitments: who owes what to whom by when. List or add them, close or move one."""


@work.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also those done or dropped.")
@click.option("--limit", default=200, show_default=True, type=click.IntRange(1, 1000))
@json_option
@click.pass_obj
def list_command(obj: CliContext, show_all: bool, limit: int, as_json: bool) -> None:
    """List open commitments by due time, overdue first-marked; proposals are labelled."""
    states = ("open", "done", "dropped") if show_all else ("open",)
    found: list[dict[str, Any]] = []
    for state in states:
        result = obj.owner_dispatch("commitment.list", {"state": state, "limit": limit})
        found.extend(result["commitments"])
    if as_json:
        click.echo(json_text({"commitments": found}))
        return
    if not found:
        click.echo("no open commitments" if not show_all else "no commitments")
        return
    click.echo("\n".join(entry_text(entry) for entry in found))


@work.command("add")
@click.argument("text")
@click.option(
    "--owed-to",
    "owed_to",
    required=True,
    help="To whom it is owed: a person's name, or 'owner' when it is owed to you.",
)
@click.option(
    "--due",
    "when",
    required=True,
    help="When it is due: ISO 8601 with its offset (2026-12-05T17:00+01:00), a local "
    "time with --tz, or 'none'.",
)
@click.option("--tz", "zone", default=None, help="IANA timezone of --due, e.g. Europe/Berlin.")
@click.option(
    "--owed-by",
    "owed_by",
    default=OWNER_PARTY,
    show_default=True,
    help="Who owes it: 'owner' (you) or a person's name.",
)
@click.option(
    "--scope", "scopes", multiple=True, help="global, user:NAME, channel:NAME, project:NAME"
)
@click.option("--details", default="", help="Longer details.")
@json_option
@click.pass_obj
def add_command(
    obj: CliContext,
    text: str,
    owed_to: str,
    when: str,
    zone: str | None,
    owed_by: str,
    scopes: tuple[str, ...],
    details: str,
    as_json: bool,
) -> None:
    """Add a commitment TEXT with its terms: who owes it (you, unless --owed-by), to
    whom, and when it is due."""
    due = parse_when(when, zone, "--due")
    terms: dict[str, Any] = {"owed_by": owed_by, "owed_to": owed_to, "due": due}
    payload: dict[str, Any] = {
        "kind": "commitment",
        "summary": text,
        "details": details,
        "commitment": terms,
    }
    if scopes:
        payload["scopes"] = list(scopes)
    receipt = obj.owner_mutate(parse_input(SaveInput, **payload))
    if as_json:
        click.echo(json_text(receipt.to_wire()))
        return
    due_at, due_tz = due_fields(due)
    entry = {
        "id": receipt.judgment_id,
        "status": receipt.status,
        "state": "open",
        "overdue": False,
        "due_at": due_at,
        "due_tz": due_tz,
        "owed_by": owed_by,
        "owed_to": owed_to,
        "summary": text,
    }
    click.echo(f"added {entry_text(entry)}")


@work.command("done")
@click.argument("commitment_id", type=ROW_ID)
@click.option("--reason", default=None, help="Why, or how it was done.")
@json_option
@click.pass_obj
def done_command(obj: CliContext, commitment_id: int, reason: str | None, as_json: bool) -> None:
    """Mark commitment COMMITMENT_ID done."""
    inp = parse_input(CommitmentCloseInput, id=commitment_id, outcome="done", reason=reason)
    _emit(obj.owner_mutate(inp), as_json, "done")


@work.command("drop")
@click.argument("commitment_id", type=ROW_ID)
@click.option("--reason", required=True, help="Why it is dropped.")
@json_option
@click.pass_obj
def drop_command(obj: CliContext, commitment_id: int, reason: str, as_json: bool) -> None:
    """Drop commitment COMMITMENT_ID (it will not be done), with a reason."""
    inp = parse_input(CommitmentCloseInput, id=commitment_id, outcome="dropped", reason=reason)
    _emit(obj.owner_mutate(inp), as_json, "dropped")


@work.command("due")
@click.argument("commitment_id", type=ROW_ID)
@click.argument("when")
@click.option("--tz", "zone", default=None, help="IANA timezone of WHEN, e.g. Europe/Berlin.")
@click.option("--reason", default=None, help="Why it moved.")
@json_option
@click.pass_obj
def due_command(
    obj: CliContext,
    commitment_id: int,
    when: str,
    zone: str | None,
    reason: str | None,
    as_json: bool,
) -> None:
    """Give commitment COMMITMENT_ID a new due time WHEN (ISO 8601 with its offset, e.g.
    2026-12-05T17:00+01:00, or a local time with --tz), or 'none' to take it away."""
    due = parse_when(when, zone)
    inp = parse_input(CommitmentRescheduleInput, id=commitment_id, due=due, reason=reason)
    _emit(obj.owner_mutate(inp), as_json, "rescheduled")


def parse_when(when: str, zone: str | None, name: str = "WHEN") -> datetime | None:
    """WHEN (the value of ``name``) as an aware time (None for 'none'); a time without an
    offset needs ``--tz``, since whose 17:00 it is cannot be guessed."""
    text = when.strip()
    if text.lower() in CLEAR_DUE:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(
            f"{name} must be an ISO 8601 time such as 2026-12-05T17:00+01:00, not {when!r}.",
            details={"fields": [_field(name)]},
        ) from None
    tz = named_zone(zone) if zone is not None else None
    if moment.tzinfo is None:
        if tz is None:
            raise InvalidInputError(
                f"{name} has no timezone: add its offset (2026-12-05T17:00+01:00) or name "
                "the zone with --tz Europe/Berlin.",
                details={"fields": [_field(name)]},
            )
        return moment.replace(tzinfo=tz)
    return moment if tz is None else moment.astimezone(tz)


def _field(name: str) -> str:
    return name.lstrip("-").replace("-", "_").lower()


def named_zone(name: str) -> ZoneInfo:
    """The IANA zone ``name`` (a ``--tz`` value), or a one-line ``invalid_input``."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInputError(
            f"--tz must be an IANA timezone such as Europe/Berlin, not {name!r}.",
            details={"fields": ["tz"]},
        ) from None


def _emit(receipt: Receipt, as_json: bool, verb: str) -> None:
    if as_json:
        click.echo(json_text(receipt.to_wire()))
        return
    replay = " (already done earlier; nothing changed)" if receipt.replayed else ""
    replaced = receipt.extra.get("replaces")
    click.echo(f"{verb} #{replaced} (now #{receipt.judgment_id}){replay}")


def entry_text(entry: dict[str, Any]) -> str:
    """One commitment as a line for a person: id, labels, due, who owes whom, what."""
    labels = []
    if entry["status"] == "proposed":
        labels.append("proposed")
    if entry["state"] != "open":
        labels.append(entry["state"])
    if entry["overdue"]:
        labels.append("OVERDUE")
    label = f" [{', '.join(labels)}]" if labels else ""
    due = f"due {due_text(entry['due_at'], entry['due_tz'])}" if entry["due_at"] else "no due"
    owed_to = entry["owed_to"] or "-"
    return terminal_text(
        f"#{entry['id']}{label} {due}  {entry['owed_by']} -> {owed_to}: {entry['summary']}"
    )


def due_text(due_at: str, due_tz: str | None) -> str:
    """A due time in the zone it was given in (UTC when none was named)."""
    moment = clock.parse(due_at)
    if due_tz:
        try:
            local = moment.astimezone(ZoneInfo(due_tz))
            return f"{local:%Y-%m-%d %H:%M} {due_tz}"
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return f"{moment:%Y-%m-%d %H:%M} UTC"
