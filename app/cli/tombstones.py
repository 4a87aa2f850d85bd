"""``mama tombstones list`` and ``mama tombstones lift ID``: the owner sees which
retired texts are kept from coming back, who made each tombstone, and lifts one.

Both are owner actions through the catalog (``tombstone.list``,
``tombstone.lift``), so a lift gets its receipt and event like any other change.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.params import ROW_ID
from mama_core.json_types import JsonObject
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.inputs import LiftInput

if TYPE_CHECKING:
    from mama_core.memory.results import Actor, TombstoneEntry

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")


@click.group()
def tombstones() -> None:
    """Retired texts that may not be saved again: list them, lift one."""


@tombstones.command("list")
@click.option("--active", "active_only", is_flag=True, help="Only tombstones not lifted.")
@click.option("--limit", default=200, show_default=True, type=click.IntRange(1, 1000))
@json_option
@click.pass_obj
def list_command(obj: CliContext, active_only: bool, limit: int, as_json: bool) -> None:
    """List tombstones, newest first: what each blocks, who made it, whether lifted."""
    from mama_core.memory.results import TombstoneListResult

    payload: JsonObject = {"limit": limit, "include_lifted": not active_only}
    result = obj.owner_read(TombstoneListResult, "tombstone.list", payload)
    if as_json:
        click.echo(json_text(result.to_wire()))
        return
    entries = result.tombstones
    if not entries:
        click.echo("no tombstones")
        return
    click.echo("\n".join(entry_text(entry) for entry in entries))


@tombstones.command("lift")
@click.argument("tombstone_id", type=ROW_ID)
@click.option("--reason", default="lifted by the owner", show_default=True)
@json_option
@click.pass_obj
def lift_command(obj: CliContext, tombstone_id: int, reason: str, as_json: bool) -> None:
    """Lift tombstone TOMBSTONE_ID: its text may be saved again."""
    receipt = obj.owner_mutate(parse_input(LiftInput, tombstone_id=tombstone_id, reason=reason))
    if as_json:
        click.echo(json_text(receipt.to_wire()))
        return
    replay = " (already done earlier; nothing changed)" if receipt.replayed else ""
    click.echo(f"lifted tombstone {tombstone_id} (event {receipt.event_id}){replay}")


def entry_text(entry: TombstoneEntry) -> str:
    """A tombstone as a few lines for a person."""
    if entry.text_erased:
        blocks = "(text erased; its fingerprint still blocks the same words)"
    elif entry.text is None:
        blocks = "(text unknown)"
    else:
        blocks = json.dumps(entry.text, ensure_ascii=False)
    record = f" from #{entry.judgment_id}" if entry.judgment_id is not None else ""
    state = "active" if not entry.lifted else "lifted"
    lines = [
        f"tombstone {entry.id} [{state}]{record}: {blocks}",
        f"  scopes: {', '.join(entry.scopes) or '-'}",
        f"  made by {actor_text(entry.created_by)} at {entry.created_at} ({entry.made_by_action})",
        f"  reason: {entry.reason}",
    ]
    if entry.lifted:
        why = f": {entry.lift_reason}" if entry.lift_reason else ""
        lines.append(f"  lifted by {actor_text(entry.lifted_by)} at {entry.lifted_at}" + why)
    return "\n".join(terminal_text(line) for line in lines)


def actor_text(actor: Actor | None) -> str:
    """``the owner (cli)``, ``the agent claude-code (owner_message)``."""
    from mama_core.memory.tombstones import describe_actor

    if actor is None:
        return describe_actor({})
    return describe_actor(actor.model_dump()) + (f" ({actor.turn})" if actor.turn else "")
