"""``mama about NAME`` and ``mama people``: what the memory holds about someone, who it
knows, and the owner's word on which names are one person.

``about`` prints one person's page (``person.about``): the memories that name them,
open commitments owed by and to them, their latest messages per source, and meetings
with them; an unknown name is one line with the nearest known names. ``people`` lists
who is known (``person.list``); ``people join`` / ``people split`` are the owner's
``person.join`` / ``person.split``. ``--json`` prints the catalog's result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.work import entry_text
from mama_core import clock
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.person_aliases import PersonJoinInput, PersonSplitInput

if TYPE_CHECKING:
    from mama_core.memory.results import Meeting, PersonAboutResult, PersonMemory, PersonMessage

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
TEXT_WIDTH = 100
"""A message's text is cut to one line this long."""


@click.command("about")
@click.argument("name")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 200))
@json_option
@click.pass_obj
def about_command(obj: CliContext, name: str, limit: int, as_json: bool) -> None:
    """What MAMA knows about NAME (a name, or an e-mail address): memories naming them,
    commitments to and from them, their recent messages and meetings with them."""
    from mama_core.memory.results import PersonAboutResult

    found = obj.owner_read(PersonAboutResult, "person.about", {"name": name, "limit": limit})
    if as_json:
        click.echo(json_text(found.to_wire()))
        return
    click.echo("\n".join(page_lines(found)))


def page_lines(found: PersonAboutResult) -> list[str]:
    """One person's page as lines for a terminal."""
    person = found.person
    others = [a for a in person.aliases if a != person.name]
    head = person.name + (f" (also: {', '.join(others)})" if others else "")
    lines = [terminal_text(head)]
    memories = found.memories
    shown = f"{len(memories)} of {found.memories_total}"
    total = found.memories_total
    lines += _section(
        f"Memories naming them ({shown if total > len(memories) else total})",
        [f"#{m.id} {m.kind}{_proposed(m)}: {m.summary}" for m in memories],
    )
    commitments = found.commitments
    lines += _section(
        f"They owe ({len(commitments.owed_by)})",
        [entry_text(c.to_wire()) for c in commitments.owed_by],
    )
    lines += _section(
        f"Owed to them ({len(commitments.owed_to)})",
        [entry_text(c.to_wire()) for c in commitments.owed_to],
    )
    lines += _section(
        f"Recent messages ({len(found.messages)})",
        [_message_line(m) for m in found.messages],
    )
    meetings = found.meetings
    lines += _section(
        f"Upcoming meetings ({len(meetings.upcoming)})",
        [_meeting_line(m) for m in meetings.upcoming],
    )
    lines += _section(
        f"Recent meetings ({len(meetings.recent)})",
        [_meeting_line(m) for m in meetings.recent],
    )
    return lines


def _section(title: str, rows: list[str]) -> list[str]:
    return ["", title + ":", *(f"  {terminal_text(r)}" for r in rows or ["none"])]


def _proposed(memory: PersonMemory) -> str:
    return " [proposed]" if memory.status == "proposed" else ""


def _message_line(message: PersonMessage) -> str:
    when = clock.parse(message.received_at).strftime("%Y-%m-%d %H:%M")
    text = " ".join(message.text.split())
    if len(text) > TEXT_WIDTH:
        text = text[: TEXT_WIDTH - 1] + "…"
    where = message.channel or message.source
    return f"{when} {message.source} {where} obs:{message.id}: {text}"


def _meeting_line(meeting: Meeting) -> str:
    status = f" [{meeting.status}]" if meeting.status not in ("", "confirmed") else ""
    when = meeting.start if meeting.all_day else meeting.start.replace("T", " ")[:16]
    return f"{when}{status} {meeting.title} ({meeting.source}) obs:{meeting.observation_id}"


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def people(ctx: click.Context, as_json: bool) -> None:
    """The people MAMA knows of, from commitments, message authors, meeting attendees and
    your own joins; join names that are one person, or split one off again."""
    if ctx.invoked_subcommand is not None:
        return
    obj: CliContext = ctx.obj
    found = obj.owner_dispatch("person.list", {})
    if as_json:
        click.echo(json_text(found))
        return
    if not found["people"]:
        click.echo("no people known yet")
        return
    for person in found["people"]:
        counts = ", ".join(
            f"{person[k]} {k}" for k in ("memories", "commitments", "messages", "meetings")
        )
        others = [a for a in person["aliases"] if a != person["name"]]
        also = f" (also: {', '.join(others)})" if others else ""
        click.echo(terminal_text(f"{person['name']}{also}: {counts}"))


@people.command("join")
@click.argument("names", nargs=-1, required=True)
@json_option
@click.pass_obj
def join_command(obj: CliContext, names: tuple[str, ...], as_json: bool) -> None:
    """Join NAMES as one person; the first is the name MAMA calls them by
    (mama people join "Anna K" "Anna" "anna@corp.example")."""
    receipt = obj.owner_mutate(parse_input(PersonJoinInput, names=list(names)))
    if as_json:
        click.echo(json_text(receipt.to_wire()))
        return
    click.echo(terminal_text(f"joined as {names[0]}: {', '.join(names[1:])}"))


@people.command("split")
@click.argument("name")
@json_option
@click.pass_obj
def split_command(obj: CliContext, name: str, as_json: bool) -> None:
    """Split NAME off the person it was joined to; it then stands alone."""
    receipt = obj.owner_mutate(parse_input(PersonSplitInput, name=name))
    if as_json:
        click.echo(json_text(receipt.to_wire()))
        return
    click.echo(terminal_text(f"split {name} off; it now stands alone"))


COMMANDS = [about_command, people]
