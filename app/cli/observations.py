"""Forgetting from the command line: ``mama purge`` (a memory, the messages that
quote it, or messages by id) and ``mama observations list/show/purge``.

Observations are what MAMA keeps as it arrived: the owner's Telegram messages,
MAMA's replies and notices, connector items. Purging erases their text (and a
memory's) for good; the log keeps only that it happened. Without ``--yes`` a
purge asks on a terminal and refuses otherwise, so scripts stay safe.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from app.cli.context import CliContext
from app.cli.display import terminal_text
from app.cli.memory import ConfirmationRequired, json_option
from app.cli.params import ROW_ID
from mama_core.errors import InvalidInputError
from mama_core.memory import Receipt
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.inputs import PurgeInput
from mama_core.memory.purge_pending import pending_purge
from mama_core.store.connection import Connection

DEFAULT_REASON = "erased by the owner"
PREVIEW = 80


def printable(text: str) -> str:
    """``text`` safe for a terminal: escape sequences and invisible marks shown escaped."""
    return "\n".join(terminal_text(line) for line in text.split("\n"))


def _emit(result: dict[str, Any], as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, sort_keys=True, default=str))
    else:
        click.echo(text)


def _owner(obj: CliContext, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    return obj.owner_dispatch(action, payload)


def observation_line(o: dict[str, Any]) -> str:
    """One observation on one line: id, when, source, author and the start of its text."""
    if o.get("purged"):
        text = f"(purged {o.get('purged_at')})"
    else:
        flat = " ".join(str(o["text"]).split())
        text = flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"
    author = f" {o['author']}:" if o.get("author") else ""
    return printable(f"obs #{o['id']} {o['received_at']} [{o['source']}]{author} {text}")


def purge_outcome(receipt: Receipt) -> list[str]:
    """What the purge did beyond the rows: backups and the WAL, in words."""
    lines = []
    removed = receipt.backups_removed
    if removed:
        lines.append(f"deleted {len(removed)} backup(s) that held the text: {', '.join(removed)}")
    kept = receipt.get("backups_not_removed") or []
    if kept:
        lines.append(f"could not delete backup(s) {', '.join(kept)}; delete them by hand")
    if receipt.wal == "pending":
        lines.append(
            "another process is reading the store, so its write-ahead log still holds the "
            "old text; MAMA truncates it as soon as it can (see 'mama doctor')"
        )
    return lines


def purge_state_line(conn: Connection) -> str:
    """For ``mama doctor``: whether a purge's text may still be in the WAL or a backup."""
    pending = pending_purge(conn)
    if pending is None:
        return "purge: nothing pending (erased text has left the WAL and the backups)"
    return (
        f"purge: PENDING since {pending.at} (event {pending.event_id}): erased text may "
        "still be in the write-ahead log (another process was reading) or in a backup that "
        "could not be deleted (see the log); the tray, mama daemon or mama mcp finishes it, "
        "or the next mama command once the store is free"
    )


def _confirm(question: str, refusal: str, shown: list[str]) -> None:
    if not sys.stdin.isatty():
        raise ConfirmationRequired(refusal)
    for line in shown:
        click.echo(line, err=True)
    click.confirm(question, abort=True, err=True)


@click.command()
@click.argument("judgment_id", type=ROW_ID, required=False)
@click.option(
    "--observation",
    "observation_ids",
    multiple=True,
    type=ROW_ID,
    help="Erase this message (observation) too; repeatable; alone, without a memory id.",
)
@click.option("--reason", default=DEFAULT_REASON, show_default=True)
@click.option("--with-history", is_flag=True, help="Also erase the records it replaced.")
@click.option(
    "--with-quotes", is_flag=True, help="Also erase the messages that quote it (see below)."
)
@click.option("--yes", is_flag=True, help="Confirm: the text is erased for good.")
@json_option
@click.pass_obj
def purge(
    obj: CliContext,
    judgment_id: int | None,
    observation_ids: tuple[int, ...],
    reason: str,
    with_history: bool,
    with_quotes: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Erase a memory's text for good (the fact of the erasure stays in the log).

    Messages that quote the memory (the one it was saved from, MAMA's reply,
    any message containing its summary) are listed; --with-quotes erases them in
    the same step, and on a terminal you are asked. Backups that hold the text
    are deleted.
    """
    if judgment_id is None:
        if not observation_ids:
            raise InvalidInputError("Give a memory id, or --observation ID for a message.")
        _purge_observations(obj, list(observation_ids), reason, yes, as_json)
        return
    record = _owner(obj, "memory.read", {"id": judgment_id})["record"]
    found = _owner(obj, "memory.quotes", {"id": judgment_id, "include_chain": with_history})
    quotes: list[dict[str, Any]] = found["observations"]
    quoting = [q["id"] for q in quotes]
    if not yes:
        shown = [printable(f"#{record['id']} [{record['kind']}] {record['summary']}")]
        if quotes:
            shown.append(f"{len(quotes)} message(s) quote it:")
            shown += ["  " + observation_line(q) for q in quotes]
        refusal = f"Purging #{judgment_id} erases its text for good; add --yes to confirm"
        if quotes and not with_quotes:
            refusal += f" ({len(quotes)} message(s) quote it: add --with-quotes to erase them too)"
        _confirm(f"Erase the text of #{judgment_id} for good?", refusal + ".", shown)
        if quotes and not with_quotes:
            with_quotes = click.confirm(
                f"Also erase the {len(quotes)} message(s) that quote it?", default=True, err=True
            )
    payload: dict[str, Any] = {"id": judgment_id, "reason": reason}
    if with_history:
        payload["include_chain"] = True
    chosen = list(dict.fromkeys([*(quoting if with_quotes else []), *observation_ids]))
    if chosen:
        payload["observation_ids"] = chosen
    receipt = obj.owner_mutate(parse_input(PurgeInput, **payload))
    quotes_left = [] if with_quotes else quoting
    lines = [f"purged #{judgment_id} (event {receipt.event_id})"]
    if receipt.observations_purged:
        ids = ", ".join(f"#{i}" for i in receipt.observations_purged)
        lines.append(f"erased {len(receipt.observations_purged)} message(s): obs {ids}")
    if quotes_left:
        ids = " ".join(str(i) for i in quotes_left)
        lines.append(
            f"{len(quoting)} message(s) still quote it; erase them with "
            f"'mama observations purge {ids}'"
        )
    result = {**receipt.to_wire(), "quotes_left": quotes_left}
    _emit(result, as_json, "\n".join(lines + purge_outcome(receipt)))


def _purge_observations(
    obj: CliContext, ids: list[int], reason: str, yes: bool, as_json: bool
) -> None:
    if not yes:
        shown = [
            observation_line(_owner(obj, "observation.read", {"id": i})["observation"]) for i in ids
        ]
        _confirm(
            f"Erase the text of {len(ids)} message(s) for good?",
            f"Purging {len(ids)} message(s) erases their text for good; add --yes to confirm.",
            shown,
        )
    receipt = obj.owner_mutate(parse_input(PurgeInput, observation_ids=ids, reason=reason))
    done = ", ".join(f"#{i}" for i in receipt.observations_purged)
    lines = [f"purged obs {done} (event {receipt.event_id})"]
    _emit(receipt.to_wire(), as_json, "\n".join(lines + purge_outcome(receipt)))


@click.group()
def observations() -> None:
    """The messages MAMA keeps (yours, its replies, connector items): list, show, purge."""


@observations.command("list")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--before", "before_id", type=ROW_ID, help="Only ids below this.")
@click.option("--source", default=None, help="Only this source (e.g. telegram).")
@click.option("--all", "include_purged", is_flag=True, help="Include purged ones (no text).")
@json_option
@click.pass_obj
def observations_list(
    obj: CliContext,
    limit: int,
    before_id: int | None,
    source: str | None,
    include_purged: bool,
    as_json: bool,
) -> None:
    """List kept messages, newest first."""
    payload: dict[str, Any] = {"limit": limit, "include_purged": include_purged}
    if before_id is not None:
        payload["before_id"] = before_id
    if source is not None:
        payload["source"] = source
    result = _owner(obj, "observation.list", payload)
    lines = [observation_line(o) for o in result["observations"]]
    _emit(result, as_json, "\n".join(lines) if lines else "no messages kept")


@observations.command("show")
@click.argument("observation_id", type=ROW_ID)
@json_option
@click.pass_obj
def observations_show(obj: CliContext, observation_id: int, as_json: bool) -> None:
    """Show one kept message in full."""
    result = _owner(obj, "observation.read", {"id": observation_id})
    o = result["observation"]
    head = f"obs #{o['id']} {o['received_at']} [{o['source']} {o['external_id']}]"
    if o["purged"]:
        text = f"{head}\n  purged {o['purged_at']}"
    else:
        text = f"{head} from {o['author'] or '?'}\n{o['text']}"
    _emit(result, as_json, printable(text))


@observations.command("purge")
@click.argument("observation_ids", nargs=-1, required=True, type=ROW_ID)
@click.option("--reason", default=DEFAULT_REASON, show_default=True)
@click.option("--yes", is_flag=True, help="Confirm: the text is erased for good.")
@json_option
@click.pass_obj
def observations_purge(
    obj: CliContext, observation_ids: tuple[int, ...], reason: str, yes: bool, as_json: bool
) -> None:
    """Erase kept messages' text for good (the fact of the erasure stays in the log)."""
    _purge_observations(obj, list(dict.fromkeys(observation_ids)), reason, yes, as_json)


COMMANDS = [purge, observations]
