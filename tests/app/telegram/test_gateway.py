"""The Telegram gateway with the real python-telegram-bot client against a fake
Bot API on 127.0.0.1: pairing, owner-only service, splitting, outages, buttons."""

from __future__ import annotations

import asyncio
import html.parser
from dataclasses import replace
from typing import Any

from app.backends.command_mode import CommandModeBackend
from app.telegram.formatting import TELEGRAM_LIMIT, to_html, to_plain, utf16_len
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.runtime.support import ScriptedAgent
from tests.app.telegram.stack import FAST, OWNER_CHAT, OWNER_USER, STRANGER, messenger

NO_POLL = replace(FAST, poll_seconds=600.0)


def judgments(engine: Engine) -> list[dict[str, Any]]:
    found = engine.dispatch(
        "memory.search",
        {"query": "", "statuses": ["active", "proposed"], "limit": 50},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    return list(found["results"])


def test_pairing_serves_only_the_owner(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            # Before pairing nobody is served; a wrong code is refused.
            s.api.push_message(STRANGER, STRANGER, "/pair ABCD-EFGH", username="mallory")
            await s.api.signal.until(lambda: len(s.api.texts_to(STRANGER)) == 1)
            assert "wrong or has expired" in s.api.texts_to(STRANGER)[0]
            assert s.gateway.owner is None

            await s.pair()
            assert s.gateway.owner is not None
            assert (s.gateway.owner.chat_id, s.gateway.owner.user_id) == (OWNER_CHAT, OWNER_USER)

            # A stranger's command, in their chat and as a user in a group: ignored.
            s.api.push_message(STRANGER, STRANGER, "/remember fact the owner is away")
            s.api.push_message(-100, STRANGER, "/remember fact group chatter")
            s.api.push_message(-100, OWNER_USER, "/remember fact owner in another chat")
            await s.api.signal.until(lambda: len(s.gateway.ignored) >= 4)
            # Positive control: the owner's own message, sent after them, is answered.
            message_id = await s.owner_says("/remember decision Ship on Monday")
            reply = s.last_to_owner()
            assert reply["text"].startswith("Saved #1 (decision, active)")
            assert reply["params"]["reply_parameters"]["message_id"] == message_id
            assert [j["summary"] for j in judgments(engine)] == ["Ship on Monday"]
            assert s.api.texts_to(STRANGER) == [s.api.texts_to(STRANGER)[0]]  # no new reply
            assert {i.reason for i in s.gateway.ignored} == {
                "pairing refused: wrong",
                "not the paired owner",
            }
            # A used code cannot pair a second time.
            s.api.push_message(STRANGER, STRANGER, "/pair ABCD-EFGH")
            await s.api.signal.until(lambda: len(s.gateway.ignored) >= 5)
            assert s.gateway.owner.user_id == OWNER_USER

            await s.owner_says("/search Monday")
            assert s.last_to_owner()["text"] == "#1 decision: Ship on Monday"
            typing = [c for c in s.api.calls if c.method == "sendChatAction"]
            assert typing and typing[0].params["chat_id"] == OWNER_CHAT

    asyncio.run(scenario())


class _TagChecker(html.parser.HTMLParser):
    """Fails on unbalanced tags: each part must be valid HTML on its own."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"


def test_a_5000_character_reply_is_split_without_breaking_formatting(
    engine: Engine, store: Store
) -> None:
    long_reply = (
        "Here is **the plan**:\n\n"
        + "\n".join(f"Step {i}: do the *careful* thing number {i} & check <it>." for i in range(40))
        + "\n\n```python\n"
        + "\n".join(f"    value_{i} = compute({i})  # keep" for i in range(90))
        + "\n```\nDone."
    )
    assert len(long_reply) > 5000
    agent = ScriptedAgent([[]], reply=long_reply)

    async def scenario() -> None:
        async with messenger(engine, store, agent) as s:
            await s.pair()
            before = len(s.api.sent)
            s.api.push_message(OWNER_CHAT, OWNER_USER, "Write me the plan.")
            await s.api.signal.until(lambda: len(s.api.sent) >= before + 2)
            await s.turns.until(lambda: len(agent.outcomes) == 1)
            parts = [m["params"]["text"] for m in s.api.sent[before:]]
            assert len(parts) == 2
            for part in parts:
                assert utf16_len(part) <= TELEGRAM_LIMIT
                assert s.api.sent[-1]["params"]["parse_mode"] == "HTML"
                checker = _TagChecker()
                checker.feed(part)
                assert checker.stack == [], "a part left a tag open"
            assert "".join(to_plain(p) for p in parts) == to_plain(to_html(long_reply))
            # The cut fell inside the code block: closed in part one, reopened in part two.
            assert parts[0].endswith("</code></pre>") and parts[1].startswith("<pre><code")

    asyncio.run(scenario())


def test_bot_api_outage_loses_nothing_and_sends_nothing_twice(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            await s.owner_says("/remember fact The printer is on floor 2")  # positive control

            # sendMessage fails while the reply to the second message is due …
            s.api.down = {"sendMessage", "sendChatAction"}
            s.api.push_message(OWNER_CHAT, OWNER_USER, "/search printer")
            await s.api.signal.until(lambda: s.api.failed("sendMessage") >= 2)
            # … then the whole API is down while the owner sends a third one.
            s.api.down = {"*"}
            s.api.push_message(OWNER_CHAT, OWNER_USER, "/remember fact Lunch is at noon")
            await s.api.signal.until(lambda: s.api.failed("getUpdates") >= 1)
            # Recovery, with one rate limit on the way.
            s.api.rate_limit_next = 1
            s.api.down = set()
            await s.api.signal.until(lambda: len(s.api.texts_to(OWNER_CHAT)) >= 4, timeout=30)
            texts = s.api.texts_to(OWNER_CHAT)
            assert texts[2] == "#1 fact: The printer is on floor 2"
            assert texts[3].startswith("Saved #2 (fact, active)")
            assert len(texts) == 4, texts  # each reply exactly once
            assert any(c.status == 429 for c in s.api.calls)
            counts = await s.runtime.run_db(s.runtime.mailbox.counts)
            assert counts == {"done": 3}

    asyncio.run(scenario())


GUIDANCE = {
    "kind": "preference",
    "summary": "Answer in short bullet points",
    "applies_when": "replying to the owner",
}


def test_a_proposal_arrives_with_buttons_and_approve_makes_it_active(
    engine: Engine, store: Store
) -> None:
    agent = ScriptedAgent([[("memory_save", GUIDANCE)]], reply="I proposed it for your review.")

    async def scenario() -> None:
        async with messenger(engine, store, agent) as s:
            await s.pair()
            s.api.push_message(OWNER_CHAT, OWNER_USER, "Keep it short from now on.")
            await s.api.signal.until(
                lambda: (
                    any(m.get("reply_markup") for m in s.api.sent)
                    and len(s.api.texts_to(OWNER_CHAT)) >= 3
                )
            )
            card = next(m for m in s.api.sent if m.get("reply_markup"))
            buttons = card["reply_markup"]["inline_keyboard"][0]
            assert [b["text"] for b in buttons] == ["Approve", "Reject", "Show"]
            jid = int(buttons[0]["callback_data"].split(":")[1])
            assert "Answer in short bullet points" in card["text"]
            assert judgments(engine)[0]["status"] == "proposed"
            card_message = {k: v for k, v in card.items() if k != "params"}

            # A stranger tapping Reject on a forwarded card does nothing.
            s.api.push_callback(STRANGER, card_message, f"reject:{jid}")
            await s.api.signal.until(lambda: len(s.api.answers) == 1)
            assert judgments(engine)[0]["status"] == "proposed"

            s.api.push_callback(OWNER_USER, card_message, f"show:{jid}")
            await s.api.signal.until(lambda: len(s.api.answers) == 2)
            await s.api.signal.until(
                lambda: any("involvement" in t for t in s.api.texts_to(OWNER_CHAT))
            )

            s.api.push_callback(OWNER_USER, card_message, f"approve:{jid}")
            await s.api.signal.until(lambda: len(s.api.edits) == 1)
            assert s.api.answers[-1]["text"] == f"Approved #{jid}."
            assert "Approved by you" in s.api.edits[0]["text"]
            record = engine.dispatch(
                "memory.read", {"id": jid}, SessionFacts.owner_cli(), Grant.owner()
            )
            assert record["record"]["status"] == "active"
            assert record["record"]["involvement"] == "owner_approved"
            approvals = [e for e in record["events"] if e["action"] == "review.approve"]
            assert len(approvals) == 1 and approvals[0]["actor"]["kind"] == "owner"

            # Tapping Approve again is answered, not applied twice.
            s.api.push_callback(OWNER_USER, card_message, f"approve:{jid}")
            await s.api.signal.until(lambda: len(s.api.answers) == 4)
            assert s.api.answers[-1].get("show_alert") is True

    asyncio.run(scenario())


RULE = {
    "kind": "constraint",
    "summary": "Never deploy on Fridays",
    "applies_when": "planning a deploy",
}


def test_an_agents_proposal_to_retire_the_owners_rule_is_decided_with_a_button(
    engine: Engine, store: Store
) -> None:
    owner, grant = SessionFacts.owner_cli(), Grant.owner()
    rule = engine.dispatch("memory.save", RULE, owner, grant)["judgment_id"]
    retire = ("memory_retire", {"id": rule, "reason": "we ship every day"})
    agent = ScriptedAgent([[retire]], reply="I asked you about the Friday rule.")

    def status() -> str:
        return engine.dispatch("memory.read", {"id": rule}, owner, grant)["record"]["status"]

    async def scenario() -> None:
        async with messenger(engine, store, agent) as s:
            await s.pair()
            s.api.push_message(OWNER_CHAT, OWNER_USER, "Friday deploys are fine now, I think.")
            await s.api.signal.until(lambda: any(m.get("reply_markup") for m in s.api.sent))
            card = next(m for m in s.api.sent if m.get("reply_markup"))
            assert card["text"].startswith(f"<b>Proposed change to your #{rule}</b>")
            assert "we ship every day" in card["text"]
            assert "Never deploy on Fridays" in card["text"]
            buttons = card["reply_markup"]["inline_keyboard"][0]
            change_id = engine.dispatch("memory.read", {"id": rule}, owner, grant)["record"][
                "pending_change"
            ]["id"]
            assert buttons[0]["callback_data"] == f"approve:{rule}:{change_id}"
            assert status() == "active"  # the agent's retire only proposed it

            card_message = {k: v for k, v in card.items() if k != "params"}
            # Decided elsewhere and proposed again: this card's Approve is refused.
            engine.dispatch("review.reject", {"id": rule, "reason": "not yet"}, owner, grant)
            again = engine.dispatch(
                "memory.retire",
                {"id": rule, "reason": "we really ship every day"},
                SessionFacts(actor_kind=ActorKind.AGENT, actor_name="scripted-agent"),
                Grant.agent(["global"]),
            )
            answered = len(s.api.answers)
            s.api.push_callback(OWNER_USER, card_message, f"approve:{rule}:{change_id}")
            await s.api.signal.until(lambda: len(s.api.answers) == answered + 1)
            assert s.api.answers[-1].get("show_alert") is True
            assert status() == "active"

            change_id = again["change_id"]
            s.api.push_callback(OWNER_USER, card_message, f"approve:{rule}:{change_id}")
            await s.api.signal.until(lambda: len(s.api.edits) == 1)
            assert s.api.answers[-1]["text"] == f"Approved #{rule}."
            assert "Approved by you — now stale" in s.api.edits[0]["text"]
            assert status() == "stale"
            events = engine.dispatch("memory.read", {"id": rule}, owner, grant)["events"]
            assert events[-1]["action"] == "review.approve"
            assert events[-1]["actor"]["kind"] == "owner"

    asyncio.run(scenario())


def test_an_agents_settings_change_from_a_tainted_turn_is_decided_with_a_button(
    engine: Engine, store: Store
) -> None:
    """A settings change has no record: its card names the change, and Approve applies
    it as the owner's own; Reject on a later one leaves the settings as they are."""
    owner, grant = SessionFacts.owner_cli(), Grant.owner()
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, owner, grant)
    tainted = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="scripted-agent").with_taint()

    def timezone() -> str:
        return str(engine.dispatch("owner.settings", {}, owner, grant)["timezone"])

    def cards() -> list[dict[str, Any]]:
        return [m for m in s.api.sent if m.get("reply_markup")]

    async def scenario() -> None:
        nonlocal s
        # No periodic scan in this test: the proposal's own commit must bring its card.
        async with messenger(engine, store, CommandModeBackend(), NO_POLL) as s:
            await s.pair()
            moved = engine.dispatch(
                "owner.set_timezone",
                {"timezone": "Pacific/Kiritimati", "reason": "Bob's mail says so"},
                tainted,
                Grant.agent(["global"]),
            )
            await s.api.signal.until(lambda: len(cards()) == 1)
            card = cards()[0]
            assert card["text"].startswith("<b>Proposed change to your settings</b>")
            assert "set your timezone to Pacific/Kiritimati: Bob's mail says so" in card["text"]
            buttons = card["reply_markup"]["inline_keyboard"][0]
            change = moved["change_id"]
            assert [b["callback_data"] for b in buttons] == [
                f"approve:settings:{change}",
                f"reject:settings:{change}",
            ]
            assert timezone() == "Europe/Berlin"  # only proposed

            card_message = {k: v for k, v in card.items() if k != "params"}
            s.api.push_callback(OWNER_USER, card_message, f"approve:settings:{change}")
            await s.api.signal.until(lambda: len(s.api.edits) == 1)
            assert timezone() == "Pacific/Kiritimati"
            assert "timezone Pacific/Kiritimati" in s.api.edits[0]["text"]

            # Decided: the same button again is refused, and nothing changes.
            answered = len(s.api.answers)
            s.api.push_callback(OWNER_USER, card_message, f"approve:settings:{change}")
            await s.api.signal.until(lambda: len(s.api.answers) == answered + 1)
            assert s.api.answers[-1].get("show_alert") is True

            off = engine.dispatch(
                "owner.set_timezone", {"timezone": "UTC"}, tainted, Grant.agent(["global"])
            )
            await s.api.signal.until(lambda: len(cards()) == 2)
            s.api.push_callback(OWNER_USER, card_message, f"reject:settings:{off['change_id']}")
            await s.api.signal.until(lambda: len(s.api.edits) == 2)
            assert "Rejected by you" in s.api.edits[1]["text"]
            assert timezone() == "Pacific/Kiritimati"

    s: Any = None
    asyncio.run(scenario())
