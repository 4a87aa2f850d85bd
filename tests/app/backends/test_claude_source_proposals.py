"""Proposals from a source, through the REAL ``claude`` CLI against a scripted fake
Anthropic API: a Slack poll's items reach Claude Code with the instruction to propose
decisions, commitments and facts with the refs they rest on; its saves land proposed
with those refs on one group card; a ref outside the turn is refused; the owner
rejects one proposal and edits and approves another; in the next poll the rejected
text is refused when it comes again from the same item, while the same text from the
new item and another text from the old item land."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.durable.connector_store import ConnectorStore
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.edit_approval import edited_save
from mama_core.store import Store
from tests.app.backends.fake_anthropic import FakeAnthropic, text, tool_use
from tests.app.backends.test_claude_code import SAVE, make_backend
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import RecordingChannel

pytestmark = pytest.mark.slow

OPS = "channel:slack/#ops"
OWNER = SessionFacts.owner_cli()
DIGEST = "[New content from the connector"
SHIPS = "We ship on Thursdays from January on"


def read(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, Grant.owner())["record"]


def digest_and_results(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The newest source digest the model was given, and the tool results since."""
    messages = body.get("messages", [])
    for at in range(len(messages) - 1, -1, -1):
        content = messages[at].get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        said = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        if messages[at].get("role") == "user" and DIGEST in said:
            results = [
                b
                for m in messages[at + 1 :]
                if m.get("role") == "user" and not isinstance(m.get("content"), str)
                for b in m["content"]
                if b.get("type") == "tool_result"
            ]
            return said, results
    return "", []


def test_claude_proposes_what_a_poll_brought_with_its_refs(
    engine: Engine, store: Store, claude_bin: Path, tmp_path: Path
) -> None:
    refs: dict[str, int] = {}

    def model(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        said, results = digest_and_results(body)
        shown = [int(i) for i in re.findall(r'ref="obs:(\d+)"', said)]
        step = len(results)
        if "Carl:" not in said:  # the first poll: Anna's decision and promise, Bob's chatter
            refs.update(zip(("decision", "promise", "chatter"), shown, strict=True))
            plan = [
                {"kind": "decision", "summary": SHIPS, "evidence": [f"obs:{refs['decision']}"]},
                {
                    "kind": "commitment",
                    "summary": "Send Bob the release notes",
                    "commitment": {
                        "owed_by": "Anna",
                        "owed_to": "Bob",
                        "due": "2026-12-04T17:00:00+01:00",
                    },
                    "evidence": [f"obs:{refs['promise']}"],
                },
                {"kind": "fact", "summary": "Bob is on call", "evidence": ["obs:999999"]},
            ]
        else:  # the second poll: Carl repeats the decision
            (refs["repeat"],) = shown
            plan = [
                {"kind": "decision", "summary": SHIPS, "evidence": [f"obs:{refs['decision']}"]},
                {"kind": "decision", "summary": SHIPS, "evidence": [f"obs:{refs['repeat']}"]},
                {
                    "kind": "fact",
                    "summary": "Anna announces release decisions in #ops",
                    "evidence": [f"obs:{refs['decision']}"],
                },
            ]
        if step < len(plan):
            return [tool_use(SAVE, plan[step])], "tool_use"
        return [text("Proposed what I found, for your review.")], "end_turn"

    fake = FakeAnthropic(model).start()
    channel = RecordingChannel()
    settings = RuntimeSettings(agent_scopes=("global", OPS), default_scope="global")

    def group_cards() -> list[Any]:
        return [m for m in channel.sent if m.review_group is not None]

    async def scenario() -> None:
        backend = make_backend(claude_bin, fake, tmp_path, None)
        runtime = OwnerRuntime(engine, store, backend, settings)
        runtime.attach_channel(channel)
        await runtime.start()
        connector = ConnectorStore(runtime.db)
        try:
            posts = [
                item(1, channel="#ops", scope=OPS, text=f"Anna: decided, {SHIPS.lower()}"),
                item(2, channel="#ops", scope=OPS, text="Anna: I'll send Bob the notes by Fri"),
                item(3, channel="#ops", scope=OPS, text="Bob: lol"),
            ]
            await runtime.run_db(connector.store_batch, "work-slack", "slack", batch(*posts))
            runtime.wake()
            await channel.signal.until(lambda: len(group_cards()) == 1, timeout=120)

            # The owner decides: rejects the decision, approves the promise in own words.
            waiting = _proposed(engine)
            decision = next(r for r in waiting if r["kind"] == "decision")
            promise = next(r for r in waiting if r["kind"] == "commitment")
            engine.dispatch(
                "review.reject",
                {"id": decision["id"], "reason": "not decided"},
                OWNER,
                Grant.owner(),
            )
            edited = engine.mutate(
                edited_save(read(engine, promise["id"]), "Anna sends Bob the Q1 release notes"),
                OWNER,
                Grant.owner(),
            )
            assert edited.status == "active"

            repeat = item(4, channel="#ops", scope=OPS, text=f"Carl: reminder, {SHIPS.lower()}")
            await runtime.run_db(connector.store_batch, "work-slack", "slack", batch(repeat))
            runtime.wake()
            await channel.signal.until(lambda: len(group_cards()) == 2, timeout=120)
        finally:
            await runtime.stop()

    try:
        asyncio.run(scenario())
    finally:
        fake.stop()

    turns = fake.turn_requests()
    first_prompt, _ = digest_and_results(turns[0])
    # The prompt carries the items with their refs and what to look for in them.
    assert f'ref="obs:{refs["decision"]}"' in first_prompt
    assert "decisions" in first_prompt and "commitments" in first_prompt
    assert '"evidence": ["obs:12"]' in first_prompt and "already_rejected" in first_prompt

    def results_of(turn_request: dict[str, Any]) -> list[str]:
        return [json.dumps(r.get("content")) for r in digest_and_results(turn_request)[1]]

    first = results_of(next(r for r in reversed(turns) if "Carl:" not in json.dumps(r)))
    assert len(first) == 3
    assert "proposed" in first[0] and "proposed" in first[1]
    assert "not an item of this turn nor an observation in your scopes" in first[2]
    second = results_of(turns[-1])
    assert len(second) == 3
    assert "already_rejected" in second[0] and "Already rejected by the owner" in second[0]
    assert "already_rejected" not in second[1] and "proposed" in second[1]
    assert "already_rejected" not in second[2] and "proposed" in second[2]

    # What landed: proposed, each with the refs it rests on, on one card per poll.
    landed = sorted(_all(engine), key=lambda r: r["id"])
    by_summary = {(r["summary"], r["status"]): r for r in landed}
    rejected = by_summary[(SHIPS, "rejected")]
    assert rejected["provenance"]["evidence"] == [f"obs:{refs['decision']}"]
    again = by_summary[(SHIPS, "proposed")]
    assert again["provenance"]["evidence"] == [f"obs:{refs['repeat']}"]
    assert read(engine, again["id"])["evidence"][0]["excerpt"].startswith("Carl: reminder")
    other = by_summary[("Anna announces release decisions in #ops", "proposed")]
    assert other["provenance"]["evidence"] == [f"obs:{refs['decision']}"]
    kept = by_summary[("Anna sends Bob the Q1 release notes", "active")]
    assert kept["provenance"]["evidence"] == [f"obs:{refs['promise']}"]
    assert read(engine, kept["id"])["commitment"]["owed_to"] == "Bob"
    assert by_summary[("Send Bob the release notes", "superseded")]["superseded_by"] == kept["id"]
    assert not any(r["summary"] == "Bob is on call" for r in landed)  # its ref was refused

    card_one, card_two = [m.text for m in channel.sent if m.review_group is not None]
    assert card_one.startswith("**2 things found in #ops (work-slack) by Anna**")
    assert f"(obs:{refs['decision']})" in card_one
    assert card_two.startswith("**2 things found in #ops (work-slack) by Anna**")
    assert f"#{rejected['id']}" not in card_two  # the refused proposal made no card line


def _proposed(engine: Engine) -> list[dict[str, Any]]:
    return [r for r in _all(engine) if r["status"] == "proposed"]


def _all(engine: Engine) -> list[dict[str, Any]]:
    found = engine.dispatch(
        "memory.search",
        {"query": "", "statuses": ["proposed", "active", "rejected", "superseded"], "limit": 50},
        OWNER,
        Grant.owner(),
    )
    return [read(engine, int(r["id"])) for r in found["results"]]
