"""Command mode: no model at all, the default when nothing else is set up.

A source delta (new Slack, mail or Trello items) gets what needs no model: the
commitments its items state in a recognisable form, proposed for the owner's review
(``source_commitments``).

The owner types ``/remember``, ``/search``, ``/review``, ``/retire``, ``/show``
or ``/help``, and each is answered straight from the action catalog. The words
are the owner's own, so calls are made as the owner (``speaks_for_owner``) —
but with the agent's grant, so owner-only verbs (approve, reject, purge) stay
with the review buttons and the owner's own tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.backends.base import TurnReply, TurnRequest
from app.backends.source_commitments import propose_found_commitments
from app.backends.toolbox import ToolBox, ToolSpec, tool_name
from app.durable.evidence import Delivered
from app.durable.mailbox import InputKind
from app.present.cards import record_body
from mama_core.model import GUIDANCE_KINDS, KINDS, Kind

_OPTION = re.compile(r"\s*\|\s*(when|steps|topic)\s*:\s*", re.IGNORECASE)
_ANYWAY = re.compile(r"\s*\|\s*anyway\s*$", re.IGNORECASE)
"""``/remember … | anyway``: keep it as its own memory though one says the same."""


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str


COMMANDS: tuple[Command, ...] = (
    Command(
        "remember",
        "/remember [kind] TEXT [| when: …] [| steps: a; b] [| topic: …] [| anyway]",
        "save a judgment (kinds: "
        + ", ".join(KINDS)
        + "; default fact); '| anyway' keeps it even if a memory already says the same",
    ),
    Command("search", "/search WORDS", "find what MAMA believes"),
    Command("review", "/review", "show proposals waiting for your review, with buttons"),
    Command("show", "/show ID", "one judgment with its history"),
    Command("retire", "/retire ID REASON", "stop believing a judgment, keeping why"),
    Command(
        "forget",
        "/forget ID, or /forget as a reply to a message",
        "erase a memory or a stored message for good (asks first; answered by the bot itself)",
    ),
    Command(
        "approve",
        "/approve ID, or /approve ID YOUR WORDS",
        "approve a proposal; with your words, approve it as you put it (in Telegram, "
        "answered by the bot itself)",
    ),
    Command(
        "work",
        "/work",
        "your open commitments by due time (answered by the bot itself)",
    ),
    Command(
        "today",
        "/today",
        "today's meetings from your calendar, with what is due during them "
        "(answered by the bot itself)",
    ),
    Command("help", "/help", "this list"),
)


class CommandModeBackend:
    """The no-model backend: parses the owner's slash commands."""

    name = "command-mode"
    speaks_for_owner = True
    writes_briefs = False

    def __init__(self, *, note: str | None = None) -> None:
        self._note = note

    @property
    def version(self) -> str | None:
        return None

    @property
    def wants_session_context(self) -> bool:
        return False

    async def start(self, tools: list[ToolSpec]) -> None:
        return None

    async def close(self) -> None:
        return None

    async def forget_session(self) -> list[Path]:
        return []  # no conversation is kept: nothing to delete

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        if request.kind is InputKind.SOURCE_DELTA:
            # What needs no model: commitments in a recognisable form, proposed (one card).
            await propose_found_commitments(request.observations, tools)
            return TurnReply("")
        if request.kind is not InputKind.OWNER_MESSAGE:
            return TurnReply("")  # nothing to do without a model; the input stays observed
        if request.evidence is not None:
            return TurnReply(self._kept_as_evidence(request))
        text = request.raw.strip()
        if not text.startswith("/"):
            return TurnReply(self._not_a_command())
        head, _, rest = text.partition(" ")
        name = head[1:].split("@", 1)[0].lower()
        rest = rest.strip()
        if name in ("help", "start"):
            return TurnReply(help_text(tools))
        if name == "remember":
            return await self._remember(rest, tools)
        if name == "search":
            return await self._search(rest, tools)
        if name == "review":
            return await self._review(tools)
        if name == "show":
            return await self._show(rest, tools)
        if name == "retire":
            return await self._retire(rest, tools)
        return TurnReply(f"I don't know /{name}. " + self._not_a_command())

    def _kept_as_evidence(self, request: TurnRequest) -> str:
        """Forwarded or quoted content is never run, even when it reads as a command."""
        how = "forwarded" if request.evidence is Delivered.FORWARDED else "quoted"
        kept = f"I kept that {how} message as evidence; it is not a message from you."
        heads = (line.split(maxsplit=1)[0] for line in request.raw.splitlines() if line.split())
        command = next((h for h in heads if h.startswith("/") and len(h) > 1), None)
        if command is not None:
            return (
                f"{kept} Commands in {how} content are not run, so {command.split('@')[0]} "
                "was not. To run a command, type it yourself (not as a reply to a quote)."
            )
        return f"{kept} {self._not_a_command()}"

    def _not_a_command(self) -> str:
        lead = self._note or "No agent is set up, so I answer commands only."
        return f"{lead} Send /help to see them."

    async def _remember(self, rest: str, tools: ToolBox) -> TurnReply:
        if not rest:
            return TurnReply(f"Usage: `{COMMANDS[0].usage}`")
        payload = parse_remember(rest)
        outcome = await tools.call(tool_name("memory.save"), payload)
        if outcome.is_error:
            return TurnReply(_error_line(outcome.result))
        r = outcome.result
        if r.get("code") == "already_remembered":
            return TurnReply(
                f"Already remembered as #{r.get('duplicate_of')}; nothing new saved. "
                "To keep it as its own memory, send it again ending with `| anyway`."
            )
        return TurnReply(f"Saved #{r.get('judgment_id')} ({payload['kind']}, {r.get('status')}).")

    async def _search(self, rest: str, tools: ToolBox) -> TurnReply:
        outcome = await tools.call(tool_name("memory.search"), {"query": rest, "limit": 10})
        if outcome.is_error:
            return TurnReply(_error_line(outcome.result))
        results = outcome.result.get("results", [])
        if not results:
            return TurnReply("Nothing found." if rest else "Nothing remembered yet.")
        lines = [_result_line(r) for r in results]
        return TurnReply("\n".join(lines))

    async def _review(self, tools: ToolBox) -> TurnReply:
        outcome = await tools.call(
            tool_name("memory.search"), {"query": "", "statuses": ["proposed"], "limit": 20}
        )
        if outcome.is_error:
            return TurnReply(_error_line(outcome.result))
        results = outcome.result.get("results", [])
        if not results:
            return TurnReply("No proposals are waiting for you.")
        ids = tuple(int(r["id"]) for r in results)
        return TurnReply(f"{len(ids)} proposal(s) waiting for your review:", cards=ids)

    async def _show(self, rest: str, tools: ToolBox) -> TurnReply:
        ident = _parse_id(rest.split(" ", 1)[0] if rest else "")
        if ident is None:
            return TurnReply("Usage: `/show ID`")
        outcome = await tools.call(tool_name("memory.read"), {"id": ident})
        if outcome.is_error:
            return TurnReply(_error_line(outcome.result))
        return TurnReply(render_record(outcome.result))

    async def _retire(self, rest: str, tools: ToolBox) -> TurnReply:
        first, _, reason = rest.partition(" ")
        ident = _parse_id(first)
        if ident is None or not reason.strip():
            return TurnReply("Usage: `/retire ID REASON`")
        outcome = await tools.call(
            tool_name("memory.retire"), {"id": ident, "reason": reason.strip()}
        )
        if outcome.is_error:
            return TurnReply(_error_line(outcome.result))
        return TurnReply(f"Retired #{ident} ({outcome.result.get('status')}).")


def help_text(tools: ToolBox | None = None) -> str:
    """The command list; the catalog's own words for the actions behind them."""
    lines = ["Commands:"]
    lines += [f"`{c.usage}` — {c.help}" for c in COMMANDS]
    if tools is not None:
        lines.append("")
        lines.append("Actions an agent may use (from the catalog):")
        lines += [f"• {s.action}: {s.description}" for s in tools.specs]
    lines.append("")
    lines.append(
        "Proposals arrive with Approve / Reject / Show buttons; a proposed commitment "
        "with Confirm / Drop / Show."
    )
    lines.append("Forwarded messages and quotes are kept as evidence: commands in them never run.")
    return "\n".join(lines)


def parse_remember(rest: str) -> dict[str, Any]:
    """``[kind] TEXT [| when: …] [| steps: a; b] [| topic: …] [| anyway]`` → a
    memory.save payload."""
    anyway = _ANYWAY.search(rest)
    if anyway is not None:
        rest = rest[: anyway.start()]
    parts = _OPTION.split(rest)
    body, options = parts[0].strip(), parts[1:]
    first, _, tail = body.partition(" ")
    kind = Kind.FACT
    if first.lower() in KINDS and tail.strip():
        kind, body = Kind(first.lower()), tail.strip()
    payload: dict[str, Any] = {"kind": kind.value, "summary": body}
    for raw_key, raw_value in zip(options[0::2], options[1::2], strict=False):
        key, value = raw_key.lower(), raw_value.strip()
        if key == "when":
            payload["applies_when"] = value
        elif key == "topic":
            payload["topic"] = value
        else:
            payload["steps"] = [s.strip() for s in value.split(";") if s.strip()]
    if kind in GUIDANCE_KINDS and "applies_when" not in payload:
        payload["applies_when"] = "always"
    if anyway is not None:
        payload["even_if_duplicate"] = True
    return payload


def render_record(record: dict[str, Any]) -> str:
    """A judgment from memory.read, for a chat message."""
    inner = record.get("record", record)
    header = f"#{inner.get('id')} {inner.get('kind')} ({inner.get('status')})"
    return "\n".join([header, *record_body(inner)])


def _result_line(r: dict[str, Any]) -> str:
    line = f"#{r.get('id')} {r.get('kind')}: {' '.join(str(r.get('summary', '')).split())}"
    also = [
        f"  also said as #{a.get('id')}: {' '.join(str(a.get('summary', '')).split())}"
        for a in r.get("also_said_as", [])
    ]
    return "\n".join([line, *also])


def _parse_id(text: str) -> int | None:
    text = text.strip().lstrip("#")
    return int(text) if text.isdigit() and int(text) > 0 else None


def _error_line(result: dict[str, Any]) -> str:
    error = result.get("error", {})
    return f"Not done: {error.get('message', 'the action failed')}"
