"""The owner's memory commands: remember, search, show, history, retire,
approve, reject, verify, export (purge is in ``app.cli.observations``).

Each is an owner action (actor owner, turn cli) through the engine's catalog,
so it gets the same validation, receipt and event as any other front end.
``--json`` prints the receipt or record as JSON on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from app.admin.copies import record_export
from app.cli.context import CliContext
from app.cli.display import json_line_text, json_text, terminal_text
from app.cli.export_target import check_export_target, export_error
from app.cli.params import ROW_ID
from app.team.scopes import is_team_scope
from mama_core.errors import MamaError, NotADatabaseError
from mama_core.export import export_lines
from mama_core.json_types import JsonObject
from mama_core.memory import Receipt
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.inputs import ApproveInput, RejectInput, RetireInput, SaveInput
from mama_core.memory.results import MemoryReadResult, MemoryRecord, PendingChange
from mama_core.model import KINDS, RetireStatus

RETIRE_STATUSES = [s.value for s in RetireStatus]
VERIFY_FAILED = 5


class ConfirmationRequired(MamaError):
    code = "confirmation_required"
    exit_code = 4


def _emit(result: JsonObject, as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json_text(result))
    else:
        click.echo(text)


def _owner(obj: CliContext, action: str, payload: JsonObject) -> JsonObject:
    return obj.owner_dispatch(action, payload)


def receipt_line(receipt: Receipt, verb: str) -> str:
    """``approved #12 (proposed change 3): stale``: what a mutation did, in one line."""
    replay = " (already done earlier; nothing changed)" if receipt.replayed else ""
    if receipt.judgment_id is None and receipt.change_id is not None:  # a settings change
        return f"{verb} change {receipt.change_id} to your settings{replay}"
    change = ""
    if receipt.change_id is not None:
        change = f" (proposed change {receipt.change_id})"
    return f"{verb} #{receipt.judgment_id}{change}: {receipt.status}{replay}"


def _emit_receipt(receipt: Receipt, as_json: bool, verb: str) -> None:
    _emit(receipt.to_wire(), as_json, receipt_line(receipt, verb))


def _decision(judgment_id: int | None, change_id: int | None) -> JsonObject:
    """What ``mama approve``/``reject`` decide: a record (and the change shown on it), or
    with ``--change`` alone a change proposed to the owner's settings."""
    if judgment_id is None and change_id is None:
        raise click.UsageError(
            "name the memory (its id), or a change proposed to your settings with --change N"
        )
    payload: JsonObject = {}
    if judgment_id is not None:
        payload["id"] = judgment_id
    if change_id is not None:
        payload["change_id"] = change_id
    return payload


change_option = click.option(
    "--change",
    "change_id",
    type=ROW_ID,
    default=None,
    help="The proposed change (as 'mama settings show' lists it); alone for a settings change.",
)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")


@click.command()
@click.argument("text")
@click.option("--kind", type=click.Choice(KINDS), required=True)
@click.option("--topic", default="", help="A short topic line.")
@click.option("--details", default="", help="Longer details.")
@click.option(
    "--scope", "scopes", multiple=True, help="global, user:NAME, channel:NAME, project:NAME"
)
@click.option("--applies-when", default=None, help="When guidance applies (guidance kinds).")
@click.option("--step", "steps", multiple=True, help="A workflow step, in order (repeatable).")
@click.option("--replaces", "replaces", multiple=True, type=ROW_ID, help="Id this revises.")
@click.option(
    "--anyway",
    is_flag=True,
    help="Keep it as its own memory even if one in the same scopes already says the same.",
)
@json_option
@click.pass_obj
def remember(
    obj: CliContext,
    text: str,
    kind: str,
    topic: str,
    details: str,
    scopes: tuple[str, ...],
    applies_when: str | None,
    steps: tuple[str, ...],
    replaces: tuple[int, ...],
    anyway: bool,
    as_json: bool,
) -> None:
    """Remember TEXT as a judgment of the given kind.

    If a memory of that kind in the same scopes already says the same, nothing new is
    saved and its id is printed; --anyway keeps TEXT as its own memory."""
    payload: JsonObject = {"kind": kind, "summary": text, "topic": topic, "details": details}
    if scopes:
        payload["scopes"] = list(scopes)
    if applies_when:
        payload["applies_when"] = applies_when
    if steps:
        payload["steps"] = list(steps)
    if replaces:
        payload["replaces"] = list(replaces)
    if anyway:
        payload["even_if_duplicate"] = True
    if any(is_team_scope(s) for s in scopes):  # the team store (issue 29): app.cli.team
        from app.cli.team import remember_in_team

        saved = remember_in_team(obj, payload, list(scopes))
        _emit(saved, as_json, f"remembered team #{saved['memory_id']}: active")
        return
    receipt = obj.owner_mutate(parse_input(SaveInput, **payload))
    if receipt.extra.get("code") == "already_remembered":
        _emit(receipt.to_wire(), as_json, already_remembered_line(receipt))
    else:
        _emit_receipt(receipt, as_json, "remembered")
    _note_waiting_vectors(obj)


def already_remembered_line(receipt: Receipt) -> str:
    """``already remembered as #12; nothing new saved (...)``: a save that restated one."""
    replay = " (answered earlier)" if receipt.replayed else ""
    return (
        f"already remembered as #{receipt.extra.get('duplicate_of')}; nothing new saved"
        f"{replay}. To keep it as its own memory: mama remember --anyway ..."
    )


@click.command()
@click.argument("query")
@click.option("--scope", "scopes", multiple=True)
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS))
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@json_option
@click.pass_obj
def search(
    obj: CliContext,
    query: str,
    scopes: tuple[str, ...],
    kinds: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """Search active memories for QUERY (and the team's, after `mama team join`)."""
    from app.cli.team import joined, search_with_team

    if joined(obj) or any(is_team_scope(s) for s in scopes):
        search_with_team(
            obj, query, list(scopes), list(kinds), limit, as_json, personal_search, search_lines
        )
        return
    result = personal_search(obj, query, list(scopes), list(kinds), limit)
    lines = search_lines(result)
    _emit(result, as_json, "\n".join(lines) if lines else "nothing found")
    _note_waiting_vectors(obj)


def personal_search(
    obj: CliContext, query: str, scopes: list[str], kinds: list[str], limit: int
) -> JsonObject:
    """The personal store's ``memory.search`` as the owner."""
    payload: JsonObject = {"query": query, "limit": limit}
    if scopes:
        payload["scopes"] = scopes
    if kinds:
        payload["kinds"] = kinds
    return _owner(obj, "memory.search", payload)


def search_lines(result: JsonObject) -> list[str]:
    """One line per result, and under it each record that says the same (``also_said_as``)."""
    return [
        terminal_text(line)
        for hit in result.get("results", [])
        for line in (
            f"#{hit['id']} [{hit['kind']}] {hit['summary']}  ({', '.join(hit.get('scopes', []))})",
            *(f"    also said as #{a['id']}: {a['summary']}" for a in hit.get("also_said_as", [])),
        )
    ]


def _note_waiting_vectors(obj: CliContext) -> None:
    """One line on stderr when memories still lack a vector of the configured model (it
    changed, e.g. in an update). A short command does not start that long job: the
    tray, the daemon and ``mama mcp`` do it in the background, or ``mama reindex``."""
    from mama_core.recall import count_missing

    reader = obj.store().new_connection()
    try:
        waiting = count_missing(reader, obj.embedder().model_id)
    finally:
        reader.close()
    if waiting:
        click.echo(waiting_vectors_line(waiting), err=True)


def waiting_vectors_line(waiting: int) -> str:
    """What a person reads when ``waiting`` memories lack the new model's vectors."""
    noun = "memory waits" if waiting == 1 else "memories wait"
    return (
        f"note: {waiting} {noun} for the new embedding model's vectors (search finds them "
        "by their words meanwhile); they are updated while MAMA runs, or run 'mama reindex'."
    )


def _record_text(record: MemoryRecord) -> str:
    show = terminal_text
    lines = [show(f"#{record.id} [{record.kind}] {record.status}: {record.summary}")]
    for name, value in (
        ("topic", record.topic),
        ("details", record.details),
        ("applies_when", record.applies_when),
        ("outcome", record.outcome),
        ("valid_from", record.valid_from),
        ("valid_until", record.valid_until),
        ("recorded_at", record.recorded_at),
        ("involvement", record.involvement),
    ):
        if value:
            lines.append(f"  {name}: {show(value)}")
    if record.steps:
        lines.extend(f"  step {i}: {show(s)}" for i, s in enumerate(record.steps, start=1))
    lines.append(f"  scopes: {show(', '.join(record.scopes))}")
    terms = record.commitment
    if terms is not None:
        due = terms.due_at or "no due"
        zone = f" ({terms.due_tz})" if terms.due_tz else ""
        lines.append(
            show(
                f"  commitment: {terms.state}, {terms.owed_by} -> "
                f"{terms.owed_to or '-'}, {due}{zone}"
            )
        )
    if record.provenance:
        lines.append(f"  provenance: {show(json.dumps(record.provenance, sort_keys=True))}")
    change = record.pending_change
    if change is not None:
        lines.append(_pending_change_text(record.id, change))
    return "\n".join(lines)


def _pending_change_text(judgment_id: int, change: PendingChange) -> str:
    """Why a record waits for the owner, and the two commands that decide it."""
    by = change.proposed_by or {}
    who = str(by.get("name") or by.get("kind") or "someone")
    turn = f" ({by['turn']} turn)" if by.get("turn") else ""
    return (
        f"  waiting for you: {terminal_text(who)}{turn} proposes to "
        f"{terminal_text(change.description or '')}\n"
        f"    mama approve {judgment_id}   applies it as your own change\n"
        f"    mama reject {judgment_id} --reason TEXT   leaves #{judgment_id} as it is"
    )


@click.command()
@click.argument("judgment_id", type=ROW_ID)
@json_option
@click.pass_obj
def show(obj: CliContext, judgment_id: int, as_json: bool) -> None:
    """Show one memory with its provenance."""
    result = obj.owner_read(MemoryReadResult, "memory.read", {"id": judgment_id})
    _emit(result.to_wire(), as_json, _record_text(result.record))


@click.command()
@click.argument("judgment_id", type=ROW_ID)
@json_option
@click.pass_obj
def history(obj: CliContext, judgment_id: int, as_json: bool) -> None:
    """Show what a memory replaced and every event that touched it."""
    result = obj.owner_read(MemoryReadResult, "memory.read", {"id": judgment_id})
    lines = [_record_text(result.record)]
    for older in result.history:
        lines.append(terminal_text(f"  replaced: #{older.id} {older.status}: {older.summary}"))
    for event in result.events:
        payload = event.get("payload")
        reason = payload.get("reason") if isinstance(payload, dict) else None
        because = f": {reason}" if reason else ""  # "(erased)" once a purge took it
        lines.append(
            terminal_text(f"  event {event['id']} {event['at']} {event['action']}{because}")
        )
    _emit(result.to_wire(), as_json, "\n".join(lines))


@click.command()
@click.argument("judgment_id", type=ROW_ID)
@click.option("--reason", required=True, help="Why it no longer holds.")
@click.option("--status", type=click.Choice(RETIRE_STATUSES), default="stale", show_default=True)
@click.option("--by", "successor", type=ROW_ID, default=None, help="The record that replaces it.")
@click.option("--forbid-resave", is_flag=True, help="Don't let it come back (tombstone).")
@json_option
@click.pass_obj
def retire(
    obj: CliContext,
    judgment_id: int,
    reason: str,
    status: str,
    successor: int | None,
    forbid_resave: bool,
    as_json: bool,
) -> None:
    """Retire a memory: it stops being believed, with a reason."""
    payload: JsonObject = {"id": judgment_id, "reason": reason, "status": status}
    if successor is not None:
        payload["by"] = successor
    if forbid_resave:
        payload["forbid_resave"] = True
    receipt = obj.owner_mutate(parse_input(RetireInput, **payload))
    _emit_receipt(receipt, as_json, "retired")


text_option = click.option(
    "--text",
    default=None,
    help="Edit and approve: your words become the active memory in place of the "
    "proposal's (which stays in its history as replaced).",
)


@click.command()
@click.argument("judgment_id", type=ROW_ID, required=False)
@change_option
@text_option
@json_option
@click.pass_obj
def approve(
    obj: CliContext,
    judgment_id: int | None,
    change_id: int | None,
    text: str | None,
    as_json: bool,
) -> None:
    """Approve a proposed memory (it becomes active), or the change an agent proposed
    to one of your memories or (with --change alone) to your settings: it is applied
    as your own change. With --text, approve the proposed memory in your own words."""
    if text is not None:
        if judgment_id is None or change_id is not None:
            raise click.UsageError("--text goes with the id of a proposed memory alone")
        _emit_receipt(edit_and_approve(obj, judgment_id, text), as_json, "approved as edited")
        return
    receipt = obj.owner_mutate(parse_input(ApproveInput, **_decision(judgment_id, change_id)))
    _emit_receipt(receipt, as_json, "approved")


def edit_and_approve(obj: CliContext, judgment_id: int, text: str) -> Receipt:
    """The owner's ``text`` saved as the active record replacing proposal ``judgment_id``
    (``edit_approval``): its kind, scopes, terms and evidence kept."""
    from mama_core.memory.edit_approval import edited_save

    record = obj.owner_dispatch("memory.read", {"id": judgment_id})["record"]
    return obj.owner_mutate(edited_save(record, text))


@click.command()
@click.argument("judgment_id", type=ROW_ID, required=False)
@change_option
@click.option("--reason", required=True)
@click.option("--forbid-resave", is_flag=True, help="Don't let it come back (tombstone).")
@json_option
@click.pass_obj
def reject(
    obj: CliContext,
    judgment_id: int | None,
    change_id: int | None,
    reason: str,
    forbid_resave: bool,
    as_json: bool,
) -> None:
    """Reject a proposed memory, or the change proposed to one or to your settings,
    keeping the reason."""
    payload: JsonObject = {**_decision(judgment_id, change_id), "reason": reason}
    if forbid_resave:
        payload["forbid_resave"] = True
    receipt = obj.owner_mutate(parse_input(RejectInput, **payload))
    _emit_receipt(receipt, as_json, "rejected")


@click.command()
@click.option(
    "--reanchor",
    is_flag=True,
    help="Accept the store as it is now (after restoring a backup yourself): replace "
    "the chain anchors kept outside it with its current head, then verify.",
)
@json_option
@click.pass_obj
def verify(obj: CliContext, reanchor: bool, as_json: bool) -> None:
    """Check the schema, the event chain and its anchors, every row the chain covers,
    the observations, the search index and the database file.

    Exit 5: a problem was found; exit 19 (verify_busy): another MAMA process kept the
    store busy, so it could not be checked (nothing was found wrong)."""
    if reanchor:
        _reanchor(obj)
    try:
        report = obj.verify()
        problems = list(report.problems)
    except NotADatabaseError as exc:  # a damaged file is a finding of verify, not a crash
        problems = [exc.message]
    ok = not problems
    result = {"ok": ok, "problems": problems}
    _emit(result, as_json, "all checks passed" if ok else "\n".join(map(terminal_text, problems)))
    if not ok:
        sys.exit(VERIFY_FAILED)


def _reanchor(obj: CliContext) -> None:
    from mama_core.memory.anchor import anchor_for, mark_anchored, observation_count
    from mama_core.memory.events import chain_head
    from mama_core.store import sqlcipher, translate_error

    store = obj.store()
    anchors = obj.anchors()
    try:
        head = chain_head(store.conn)
        count = observation_count(store.conn)
        anchors.remove()
        anchors.save(anchor_for(store.secret, store.store_id, head, count))
        mark_anchored(store.conn)
    except (sqlcipher.Error, OSError) as exc:
        raise translate_error(exc, store.path) from exc
    click.echo(f"anchored the store at event {head.id} with {count} observations", err=True)


@click.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@json_option
@click.pass_obj
def export(obj: CliContext, out: Path | None, as_json: bool) -> None:
    """Write every record as JSON lines (stdout, or --out FILE).

    The lines are JSON either way; with --out, --json prints the count as JSON.
    """
    if out is not None:
        check_export_target(out)
    reader = obj.store().new_connection()
    try:
        if out is None:
            for line in export_lines(reader):
                click.echo(json_line_text(line))
            return
        count = 0
        try:
            with out.open("w", encoding="utf-8") as fh:
                for line in export_lines(reader):
                    fh.write(line + "\n")
                    count += 1
        except OSError as exc:
            raise export_error(out, exc) from exc
        if not record_export(obj.paths.home, out):  # a full copy: a purge must reach it
            click.echo(
                f"note: MAMA could not note {terminal_text(out)} in its data folder; "
                "a later purge will not delete it.",
                err=True,
            )
        if as_json:
            click.echo(json_text({"exported": count, "out": str(out)}))
        else:
            click.echo(f"exported {count} records to {terminal_text(out)}", err=True)
    finally:
        reader.close()


@click.command()
@click.option("--batch", default=64, show_default=True, type=click.IntRange(1, 1024))
@json_option
@click.pass_obj
def reindex(obj: CliContext, batch: int, as_json: bool) -> None:
    """Embed every memory that lacks a vector for the configured model.

    The tray, the daemon and `mama mcp` do this in the background when the model
    changes; this does it now, in one go. It commits batch by batch, so an
    interrupted run continues where it stopped, and it is safe beside a running
    MAMA (a vector already written by another process is kept).
    """
    from app.cli.progress import model_progress
    from mama_core.recall import reembed

    store, embedder = obj.store(), obj.embedder()
    with model_progress() as progress:
        result = reembed(store, embedder, progress, batch=batch)
    if as_json:
        counts = {
            "embedded": result.embedded,
            "model_id": result.model_id,
            "remaining": result.remaining,
        }
        click.echo(json_text(counts))
        return
    click.echo(
        f"embedded {result.embedded} memories with {result.model_id}; "
        f"{result.remaining} still without a vector"
    )


COMMANDS = [
    remember,
    search,
    show,
    history,
    retire,
    approve,
    reject,
    verify,
    export,
    reindex,
]
