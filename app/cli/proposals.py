"""``mama proposals``: what waits for the owner, decided from the terminal.

Two kinds wait today: a *new memory* an agent, a coding session or a source proposed
(a judgment in status ``proposed``), and a *change* someone proposed to one of the
owner's records (``change_proposals``: a retire, an outcome, a link, closing or moving
a commitment). ``waiting_proposals`` is the one place that gathers them, so a new
kind is one more branch there. Both are decided by their record's id through the
catalog's ``review.approve`` / ``review.reject`` as the owner, the verbs the review
window and Telegram's buttons use.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from typing import Any

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.memory import edit_and_approve, receipt_line, text_option
from app.cli.params import ROW_ID
from mama_core.errors import EngineError
from mama_core.memory import Receipt
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.evidence import evidence_line
from mama_core.memory.inputs import ApproveInput, RejectInput
from mama_core.memory.provenance import turn_words

NEW_MEMORY = "new_memory"
CHANGE = "change"
LIST_LIMIT = 200
"""The catalog's largest page of proposed memories; a fuller queue says so."""
REJECT_REASON = "Rejected by the owner at the command line."
"""The reason kept when ``reject`` is given none."""


@dataclass(frozen=True)
class Proposal:
    """One thing waiting for the owner's decision, decided by ``id``."""

    id: int
    """The record to approve or reject (for a change: the owner's record it changes)."""
    proposal: str
    """``new_memory``, ``change`` (to a record) or ``setting`` (to a setting)."""
    kind: str
    """The record's kind (decision, fact, commitment…)."""
    summary: str
    """The proposed memory's words, or what the change would do."""
    proposed_by: str
    """Who proposed it, and in which turn (the origin line reads show)."""
    why: str
    """The proposer's reason: a memory's details, a change's reason ('' if none)."""
    proposed_at: str
    scopes: list[str] = field(default_factory=list[str])
    action: str = "memory.save"
    """The catalog verb approving it runs (a change: the one it proposes)."""
    change_id: int | None = None
    replaces: list[int] = field(default_factory=list[int])
    """Records a proposed memory would replace."""
    record_summary: str | None = None
    """For a change: the owner's record as it stands."""
    evidence: list[str] = field(default_factory=list[str])
    """The items a proposed memory rests on, one line each (``obs:12 Anna in #ops: …``)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def waiting_proposals(obj: CliContext, limit: int = LIST_LIMIT) -> tuple[list[Proposal], bool]:
    """Everything waiting for the owner, changes first (they touch records the owner
    already holds), then new memories newest first; and whether the memories were cut
    at ``limit``."""
    memories = _new_memories(obj, limit)
    return [*_setting_changes(obj), *_changes(obj), *memories], len(memories) >= limit


SETTING = "setting"
"""A change an agent proposed to the owner's settings (it has no record: decided as
``s<change id>``)."""


def _setting_changes(obj: CliContext) -> list[Proposal]:
    from mama_core.memory.proposed_changes import pending_after

    reader = obj.store().new_connection()
    try:
        waiting = [c for c in pending_after(reader) if c.setting_key is not None]
    finally:
        reader.close()
    out: list[Proposal] = []
    for change in reversed(waiting):  # newest first, like the rest
        by = change.proposed_by
        who = by.get("name") or str(by.get("kind") or "someone").replace("_", " ")
        after = " after reading outside content" if by.get("tainted") else ""
        out.append(
            Proposal(
                id=change.id,
                proposal=SETTING,
                kind=str(change.setting_key),
                summary=change.describe(),
                proposed_by=f"{who} {turn_words(str(by.get('turn') or ''))}{after}".strip(),
                why=str(change.payload.get("reason") or ""),
                proposed_at=change.created_at,
                action=change.action,
                change_id=change.id,
            )
        )
    return out


def _new_memories(obj: CliContext, limit: int) -> list[Proposal]:
    found = obj.owner_dispatch(
        "memory.search", {"query": "", "statuses": ["proposed"], "limit": limit}
    )
    out: list[Proposal] = []
    for hit in found["results"]:
        read = obj.owner_dispatch("memory.read", {"id": hit["id"]})
        record = read["record"]
        replaces = [h["id"] for h in read["history"] if h.get("replaced_by") == record["id"]]
        out.append(
            Proposal(
                id=record["id"],
                proposal=NEW_MEMORY,
                kind=record["kind"],
                summary=record["summary"],
                proposed_by=_without_status(record["origin"], record["status"]),
                why=record.get("details") or "",
                proposed_at=record["recorded_at"],
                scopes=list(record.get("scopes") or []),
                replaces=replaces,
                evidence=[evidence_line(item) for item in record.get("evidence") or []],
            )
        )
    return out


def _changes(obj: CliContext) -> list[Proposal]:
    from mama_core.memory.owner_reads import pending_change_ids

    reader = obj.store().new_connection()
    try:
        waiting = pending_change_ids(reader)
    finally:
        reader.close()
    out: list[Proposal] = []
    for judgment_id in waiting:
        record = obj.owner_dispatch("memory.read", {"id": judgment_id})["record"]
        change = record.get("pending_change")
        if not change:  # decided since the ids were read
            continue
        by = change.get("proposed_by") or {}
        who = by.get("name") or str(by.get("kind") or "someone").replace("_", " ")
        after = " after reading outside content" if by.get("tainted") else ""
        out.append(
            Proposal(
                id=judgment_id,
                proposal=CHANGE,
                kind=record["kind"],
                summary=change["description"],
                proposed_by=f"{who} {turn_words(str(by.get('turn') or ''))}{after}".strip(),
                why=str((change.get("input") or {}).get("reason") or ""),
                proposed_at=change["created_at"],
                scopes=list(record.get("scopes") or []),
                action=change["action"],
                change_id=change["id"],
                record_summary=record["summary"],
            )
        )
    return out


def _without_status(origin: str, status: str) -> str:
    return origin.removesuffix(f", {status}")


def proposal_text(p: Proposal) -> str:
    """A proposal for a person: its id and what it is, then who and why."""
    if p.proposal == SETTING:
        head = f"s{p.id} change to your {p.kind} setting: {p.summary}"
    elif p.proposal == CHANGE:
        head = f"#{p.id} change to your {p.kind} ({p.record_summary}): {p.summary}"
    else:
        replacing = ", ".join(f"#{i}" for i in p.replaces)
        also = f", replacing {replacing}" if replacing else ""
        head = f"#{p.id} new {p.kind}{also}: {p.summary}"
    lines = [head, f"    by {p.proposed_by}, {p.proposed_at}"]
    if p.why:
        lines.append(f"    why: {p.why}")
    lines += [f"    rests on {line}" for line in p.evidence]
    return "\n".join(terminal_text(line) for line in lines)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")


@click.group(invoke_without_command=True)
@click.option("--limit", default=LIST_LIMIT, show_default=True, type=click.IntRange(1, 200))
@json_option
@click.pass_context
def proposals(ctx: click.Context, limit: int, as_json: bool) -> None:
    """What waits for you: memories proposed by an agent or a source, and changes
    proposed to your own memories. Approve or reject them by id."""
    if ctx.invoked_subcommand is not None:
        return
    obj: CliContext = ctx.obj
    found, cut = waiting_proposals(obj, limit)
    if as_json:
        click.echo(json_text({"proposals": [p.to_json() for p in found], "truncated": cut}))
        return
    if not found:
        click.echo("nothing waits for you")
        return
    click.echo("\n".join(proposal_text(p) for p in found))
    more = f" (the newest {limit} new memories; more wait)" if cut else ""
    click.echo(
        f"{len(found)} waiting{more}. mama proposals approve ID… | "
        "mama proposals reject ID… [--reason TEXT]",
        err=True,
    )


def _decide_help(verb: str) -> str:
    return (
        f"{verb} the proposals IDS (as listed by 'mama proposals': a memory's number, "
        "or s<N> for a change to your settings), each on its own: "
        "one line per id. Exit 0 when every id was decided; otherwise the exit code "
        "of the first refused id's error (39 not found, 40 not waiting for you, e.g. "
        "already decided; 32 not an id), and the others are still decided."
    )


@proposals.command(
    "approve", help=_decide_help("Approve"), short_help="Approve proposals by id, each on its own."
)
@click.argument("ids", nargs=-1, required=True)
@click.option("--reason", default=None, help="Why (kept in the log beside the approval).")
@text_option
@json_option
@click.pass_obj
def approve_command(
    obj: CliContext, ids: tuple[str, ...], reason: str | None, text: str | None, as_json: bool
) -> None:
    if text is not None:
        if len(ids) != 1 or reason is not None:
            raise click.UsageError("--text edits one proposed memory: give one id, no --reason")
        token = ids[0].strip().lstrip("#")
        receipt = edit_and_approve(obj, ROW_ID.convert(token, None, None), text)
        if as_json:
            click.echo(
                json_text({"results": [{"id": token, "ok": True, "receipt": receipt.to_wire()}]})
            )
        else:
            click.echo(receipt_line(receipt, "approved as edited"))
        return
    _decide_each(obj, "approve", ids, reason, forbid_resave=False, as_json=as_json)


@proposals.command(
    "reject", help=_decide_help("Reject"), short_help="Reject proposals by id, each on its own."
)
@click.argument("ids", nargs=-1, required=True)
@click.option("--reason", default=None, help=f"Why (default: {REJECT_REASON!r}).")
@click.option("--forbid-resave", is_flag=True, help="Don't let a rejected memory come back.")
@json_option
@click.pass_obj
def reject_command(
    obj: CliContext, ids: tuple[str, ...], reason: str | None, forbid_resave: bool, as_json: bool
) -> None:
    _decide_each(obj, "reject", ids, reason, forbid_resave=forbid_resave, as_json=as_json)


def _decide_each(
    obj: CliContext,
    verb: str,
    ids: tuple[str, ...],
    reason: str | None,
    *,
    forbid_resave: bool,
    as_json: bool,
) -> None:
    """Decide each id on its own; a refused one is named on stderr and the rest go on."""
    results: list[dict[str, Any]] = []
    first_refusal: EngineError | None = None
    for raw in ids:
        try:
            token = raw.strip().lstrip("#")
            setting = token[:1].lower() == "s"
            judgment_id = ROW_ID.convert(token[1:] if setting else token, None, None)
            receipt = decide(obj, verb, judgment_id, reason, forbid_resave, setting=setting)
        except EngineError as exc:
            first_refusal = first_refusal or exc
            error = {"code": exc.code, "message": exc.message}
            results.append({"id": raw, "ok": False, "error": error})
            if not as_json:
                click.echo(terminal_text(f"mama: {exc.code}: {raw}: {exc.message}"), err=True)
            continue
        results.append({"id": judgment_id, "ok": True, "receipt": receipt.to_wire()})
        if not as_json:
            click.echo(receipt_line(receipt, f"{verb}d"))
    if as_json:
        click.echo(json_text({"results": results}))
    if first_refusal is not None:
        sys.exit(first_refusal.exit_code)


def decide(
    obj: CliContext,
    verb: str,
    judgment_id: int,
    reason: str | None,
    forbid_resave: bool,
    *,
    setting: bool = False,
) -> Receipt:
    """``review.approve`` or ``review.reject`` of ``judgment_id`` as the owner (with
    ``setting``: of the settings change with that id, which has no record)."""
    named: dict[str, Any] = {"change_id": judgment_id} if setting else {"id": judgment_id}
    if verb == "approve":
        approval: dict[str, Any] = dict(named)
        if reason is not None:
            approval["reason"] = reason
        return obj.owner_mutate(parse_input(ApproveInput, **approval))
    fields: dict[str, Any] = {**named, "reason": reason or REJECT_REASON}
    if forbid_resave:
        fields["forbid_resave"] = True
    return obj.owner_mutate(parse_input(RejectInput, **fields))
