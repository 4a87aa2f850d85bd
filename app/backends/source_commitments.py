"""What command mode notices in a source delta without a model: commitments stated in a
recognisable form ("I'll send you the deck by Friday", "Anna wird es morgen prüfen"),
found by ``mama_core.extraction``'s rule set and each *proposed* for the owner's review.

It works as an agent would, through the turn's toolbox only: ``owner.settings`` for the
owner's timezone, ``observation.read`` for each new item (so the turn's grant, narrowed
to the delta's scopes, decides what it may read), and ``memory.save`` with the terms and
the observation it rests on. The save asks to be proposed even where a commitment owed
to the owner would land active: a pattern found it and no one read it. The proposals of
one delta become one card (``ProposalFeed``), reviewed per source like an agent's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from app.backends.toolbox import ToolBox, tool_name
from mama_core import clock
from mama_core.extraction import FoundCommitment, Message, find_commitments
from mama_core.memory.inputs import OWNER_PARTY
from mama_core.memory.owner_settings import zone_for

log = logging.getLogger(__name__)

MAX_SUMMARY = 400
"""A sentence longer than this is cut in the summary (the observation keeps it whole)."""


async def propose_found_commitments(observation_ids: Sequence[int], tools: ToolBox) -> list[int]:
    """Propose every commitment the rule set finds in the observations ``observation_ids``;
    return the ids of the proposals saved (a refused save is logged and skipped)."""
    if not observation_ids:
        return []
    settings = await tools.call(tool_name("owner.settings"), {})
    zone = zone_for(None if settings.is_error else settings.result.get("timezone"))
    saved: list[int] = []
    for observation_id in observation_ids:
        read = await tools.call(tool_name("observation.read"), {"id": observation_id})
        if read.is_error:  # outside this turn's scopes, or erased meanwhile
            continue
        item: dict[str, Any] = read.result["observation"]
        if item["purged"] or (item.get("metadata") or {}).get("deletes"):
            continue  # nothing to read, or a deletion at the source (its text is a notice)
        message = Message(
            text=str(item["text"]),
            author=str(item["author"]),
            written_at=clock.to_utc(str(item["received_at"])),
            audience=audience_of(item),
            observation_id=observation_id,
        )
        # Off the event loop: a long item is regex work, and the loop serves the owner.
        for found in await asyncio.to_thread(find_commitments, message, zone):
            outcome = await tools.call(tool_name("memory.save"), save_payload(found, item))
            if outcome.is_error:
                error = outcome.result.get("error", {})
                log.info("a found commitment was not proposed: %s", error.get("code"))
                continue
            saved.append(int(outcome.result["judgment_id"]))
    return saved


def audience_of(item: dict[str, Any]) -> str:
    """Whom an unaddressed promise in ``item`` is made to: the owner for mail (the
    owner's inbox), else the channel or board it was said in."""
    if str(item.get("source", "")).startswith("mail:"):
        return OWNER_PARTY
    return str(item.get("channel") or "") or OWNER_PARTY


def save_payload(found: FoundCommitment, item: dict[str, Any]) -> dict[str, Any]:
    """The ``memory.save`` input for ``found``: the sentence as said is the summary, the
    act its topic, the terms who owes whom by when, resting on the item it was said in."""
    sentence = " ".join(str(item["text"])[found.start : found.end].split())
    if len(sentence) > MAX_SUMMARY:
        sentence = sentence[: MAX_SUMMARY - 1] + "…"
    where = f" in {item['channel']}" if item.get("channel") else ""
    return {
        "kind": "commitment",
        "topic": found.what[:300],
        "summary": f'{found.owed_by}: "{sentence}"',
        "details": (
            f"Found without a model (rule {found.rule}) in a message by {item['author']}"
            f"{where}, obs:{found.observation_id}."
        ),
        "commitment": {
            "owed_by": found.owed_by,
            "owed_to": found.owed_to,
            "due": None if found.due is None else found.due.isoformat(),
            "source_observations": [found.observation_id],
        },
        "propose": True,
    }
