"""``mama timeline``: a memory's history, or what held (and changed) at a time.

``mama timeline ID`` lists every version of a memory (what it replaced and what
replaced it) with its validity and recording times, and the events that made,
approved, replaced or retired them. ``--valid-at WHEN`` asks what held in the world
at an instant, ``--from WHEN --to WHEN`` what held or changed over a span, and
``--as-recorded-at WHEN`` what the store believed at an instant (with either, or on
its own). They are the catalog's ``memory.read`` and ``memory.timeline``, the reads
the MCP server offers coding agents, run as the owner.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.moments import parse_moment
from app.cli.params import ROW_ID
from app.cli.work import named_zone
from mama_core import clock
from mama_core.errors import InvalidInputError
from mama_core.json_types import JsonObject
from mama_core.model import KINDS

if TYPE_CHECKING:
    from mama_core.memory.results import TimelineResult

MAX_VERSIONS = 200
"""A chain of revisions longer than this is cut (its newest versions are kept)."""


@click.command()
@click.argument("judgment_id", type=ROW_ID, required=False)
@click.option("--valid-at", "valid_at", metavar="WHEN", help="What held in the world at WHEN.")
@click.option("--from", "start", metavar="WHEN", help="What held or changed from WHEN on.")
@click.option("--to", "end", metavar="WHEN", help="… up to WHEN (exclusive; default now).")
@click.option(
    "--as-recorded-at",
    "recorded_at",
    metavar="WHEN",
    help="What the store believed at WHEN (alone, or with --valid-at or --from/--to).",
)
@click.option(
    "--tz", "zone", default=None, help="Zone of a WHEN without an offset (default: yours)."
)
@click.option(
    "--scope", "scopes", multiple=True, help="global, user:NAME, channel:NAME, project:NAME"
)
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS))
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@click.pass_obj
def timeline(
    obj: CliContext,
    judgment_id: int | None,
    valid_at: str | None,
    start: str | None,
    end: str | None,
    recorded_at: str | None,
    zone: str | None,
    scopes: tuple[str, ...],
    kinds: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """The history of memory JUDGMENT_ID, or what held at a time.

    \b
    mama timeline 12                     every version of #12 and every event
    mama timeline --valid-at 2026-03-01  what held in the world then
    mama timeline --from "7 days ago"    what held or changed since (--to: until)
    mama timeline --as-recorded-at yesterday   what MAMA believed then

    WHEN is an ISO date or time (2026-11-01, 2026-11-01T09:00, 2026-11-01T09:00+01:00;
    without an offset it is in --tz, else your timezone), 'now', 'today', 'yesterday'
    or 'N minutes/hours/days/weeks ago'."""
    if judgment_id is not None:
        if valid_at or start or end or recorded_at or scopes or kinds:
            raise InvalidInputError(
                "Give a memory's ID, or --valid-at / --from / --as-recorded-at, not both.",
                details={"fields": ["judgment_id"]},
            )
        result = record_timeline(obj, judgment_id)
        _emit(result, as_json, lambda: record_timeline_text(result, _owner_zone(obj, zone)))
        return
    if not (valid_at or start or end or recorded_at):
        raise InvalidInputError(
            "Say what to show: a memory's ID, --valid-at WHEN, --from WHEN [--to WHEN] or "
            "--as-recorded-at WHEN (mama timeline --help).",
            details={"fields": ["judgment_id"]},
        )
    if end and not start:
        raise InvalidInputError(
            "--to needs --from (the range's start).", details={"fields": ["from"]}
        )
    tz = _owner_zone(obj, zone)
    now = clock.now()
    payload: JsonObject = {"limit": limit}
    if valid_at:
        payload["valid_at"] = _iso(parse_moment(valid_at, "--valid-at", tz, now))
    if start:
        begins = parse_moment(start, "--from", tz, now)
        ends = parse_moment(end, "--to", tz, now) if end else now
        if begins >= ends:
            raise InvalidInputError(
                f"--from ({_iso(begins)}) must be before --to ({_iso(ends)}).",
                details={"fields": ["from", "to"]},
            )
        payload["from_time"], payload["to_time"] = _iso(begins), _iso(ends)
    if recorded_at:
        payload["as_recorded_at"] = _iso(parse_moment(recorded_at, "--as-recorded-at", tz, now))
    if scopes:
        payload["scopes"] = list(scopes)
    if kinds:
        payload["kinds"] = list(kinds)
    from mama_core.memory.results import TimelineResult

    result = obj.owner_read(TimelineResult, "memory.timeline", payload)
    _emit(result.to_wire(), as_json, lambda: moment_text(result, tz))


def _emit(result: JsonObject, as_json: bool, text: Any) -> None:
    click.echo(json_text(result) if as_json else text())


def _iso(moment: datetime) -> str:
    return clock.iso(moment)


def _owner_zone(obj: CliContext, zone: str | None) -> ZoneInfo:
    """``--tz`` if given, else the owner's timezone, else this computer's."""
    if zone is not None:
        return named_zone(zone)
    from mama_core.memory.owner_settings import zone_for

    return zone_for(obj.owner_dispatch("owner.settings", {}).get("timezone"))


def record_timeline(obj: CliContext, judgment_id: int) -> dict[str, Any]:
    """Every version of ``judgment_id``'s chain (oldest first) and the events that
    touched any of them (in order): the newest version's read names its predecessors,
    and ``superseded_by`` leads from the asked one to the newest."""
    read = obj.owner_dispatch("memory.read", {"id": judgment_id})
    seen = {judgment_id}
    while (after := read["record"].get("superseded_by")) is not None and after not in seen:
        seen.add(after)
        read = obj.owner_dispatch("memory.read", {"id": after})
    versions: dict[int, dict[str, Any]] = {read["record"]["id"]: read["record"]}
    events: dict[int, dict[str, Any]] = {e["id"]: e for e in read["events"]}
    for older in read["history"][:MAX_VERSIONS]:
        older_read = obj.owner_dispatch("memory.read", {"id": older["id"]})
        versions[older["id"]] = {**older_read["record"], "relation": older["relation"]}
        events.update((e["id"], e) for e in older_read["events"])
    ordered = sorted(versions.values(), key=lambda r: (r["recorded_at"], r["id"]))
    return {
        "id": judgment_id,
        "versions": ordered,
        "events": [events[i] for i in sorted(events)],
    }


def record_timeline_text(result: dict[str, Any], zone: ZoneInfo) -> str:
    asked = next(v for v in result["versions"] if v["id"] == result["id"])
    lines = [
        terminal_text(f"#{asked['id']} [{asked['kind']}] {asked['status']}: {asked['summary']}"),
        f"versions, oldest first (times in {zone.key}):",
    ]
    lines += [f"  {version_line(v, zone)}" for v in result["versions"]]
    lines.append("events:")
    lines += [f"  {event_line(e, zone)}" for e in result["events"]]
    return "\n".join(lines)


def version_line(record: dict[str, Any], zone: ZoneInfo) -> str:
    """``#3 superseded by #5  valid 2026-01-01 09:00 to 2026-03-01 09:00  recorded …: text``."""
    status = record["status"]
    if record.get("superseded_by") is not None:
        status += f" by #{record['superseded_by']}"
    if record.get("relation") == "proposed_replacement":
        status += " (a proposal would replace it)"
    terms = record.get("commitment")
    if terms:
        status += f", {terms['state']}"
    until = local_time(record["valid_until"], zone) if record.get("valid_until") else "open"
    return terminal_text(
        f"#{record['id']} {status}  valid {local_time(record['valid_from'], zone)} to {until}  "
        f"recorded {local_time(record['recorded_at'], zone)}: {record['summary']}"
    )


def event_line(event: dict[str, Any], zone: ZoneInfo) -> str:
    """``2026-12-02 09:31 event 7 memory.retire #5 by you: the reason``."""
    payload = event.get("payload") or {}
    reason = payload.get("reason")
    because = f": {reason}" if reason else ""  # "(erased)" once a purge took it
    target = f" #{event['judgment_id']}" if event.get("judgment_id") is not None else ""
    return terminal_text(
        f"{local_time(event['at'], zone)} event {event['id']} {event['action']}{target} "
        f"by {actor_text(event.get('actor') or {})}{because}"
    )


def actor_text(actor: dict[str, Any]) -> str:
    """``you``, or the agent, client or connector by name."""
    kind = str(actor.get("kind") or "")
    if kind == "owner":
        return "you"
    name = actor.get("name")
    what = kind.replace("_", " ") or "someone"
    return f"{what} {name}" if name else what


def moment_text(result: TimelineResult, zone: ZoneInfo) -> str:
    """What held (or changed) at the asked time or over the asked span."""
    heading = []
    if result.valid_at:
        heading.append(f"held at {local_time(result.valid_at, zone)}")
    if result.from_time and result.to_time:  # a range has both ends
        heading.append(
            f"held or changed from {local_time(result.from_time, zone)} "
            f"to {local_time(result.to_time, zone)}"
        )
    if result.as_recorded_at:
        heading.append(f"as MAMA knew it at {local_time(result.as_recorded_at, zone)}")
    if not heading:
        heading.append("held now")
    records = result.records
    head = f"{', '.join(heading)} ({zone.key}):"
    if not records:
        return f"{head} nothing"
    lines = [head]
    for record in records:
        notes = []
        if record.status_then and record.status_then != record.status:
            notes.append(f"then {record.status_then}")
        if record.changed_in_range:
            notes.append("changed in the range")
        note = f" ({', '.join(notes)})" if notes else ""
        until = record.valid_until_then
        valid = f"valid {local_time(record.valid_from, zone)} to "
        valid += local_time(until, zone) if until else "open"
        lines.append(
            terminal_text(
                f"  #{record.id} [{record.kind}] {record.status}{note}  {valid}: {record.summary}"
            )
        )
    if result.events:
        lines.append("events:")
        lines += [f"  {event_line(e, zone)}" for e in result.events]
    return "\n".join(lines)


def local_time(stored: str, zone: ZoneInfo) -> str:
    """A stored UTC time in ``zone``, to the minute (seconds when they are not zero)."""
    moment = clock.parse(stored).astimezone(zone)
    return f"{moment:%Y-%m-%d %H:%M:%S}" if moment.second else f"{moment:%Y-%m-%d %H:%M}"
