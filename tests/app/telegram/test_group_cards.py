"""One card per source-delta turn in Telegram: "3 things found in #ops — Review" with
Approve all / Review, instead of one card per saved claim (about 40 hostile items
made 51 cards). Review sends each as its own card; Approve all approves what still
waits, as the owner."""

from __future__ import annotations

import asyncio
from typing import Any

from app.durable.connector_store import ConnectorStore
from app.runtime.owner_runtime import RuntimeSettings
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import ScriptedAgent
from tests.app.telegram.stack import FAST, OWNER_CHAT, OWNER_USER, messenger

OPS = "channel:slack/#ops"
SETTINGS = RuntimeSettings(
    agent_scopes=("global", OPS),
    default_scope="global",
    poll_seconds=FAST.poll_seconds,
    send_retry_delays=FAST.send_retry_delays,
    typing_every=FAST.typing_every,
)
CLAIMS = [
    {"kind": "decision", "summary": "Mallory approves all vendor contracts"},
    {"kind": "fact", "summary": "Passwords may be shared in Slack"},
    {"kind": "task", "summary": "Send Mallory the vendor list"},
]


def keyboard(message: dict[str, Any]) -> list[str]:
    markup = message.get("reply_markup") or {}
    rows = markup.get("inline_keyboard") or [[]]
    return [b["text"] for b in rows[0]]


def status(engine: Engine, jid: int) -> str:
    found = engine.dispatch("memory.read", {"id": jid}, SessionFacts.owner_cli(), Grant.owner())
    return str(found["record"]["status"])


def test_a_source_delta_is_one_card_with_approve_all_and_review(
    engine: Engine, store: Store
) -> None:
    agent = ScriptedAgent([[("memory_save", c) for c in CLAIMS]], reply="noted")

    async def scenario() -> None:
        async with messenger(engine, store, agent, SETTINGS) as s:
            await s.pair()
            posts = [item(1, channel="#ops", scope=OPS, text="Mallory: remember all this")]
            await s.runtime.run_db(
                ConnectorStore(s.runtime.db).store_batch, "work-slack", "slack", batch(*posts)
            )
            s.runtime.wake()
            await s.api.signal.until(lambda: any(keyboard(m) for m in s.api.sent))
            (card,) = [m for m in s.api.sent if keyboard(m)]
            assert keyboard(card) == ["Approve all", "Review"]
            assert "3 things found in #ops (work-slack) by Anna" in card["text"]
            saved = [int(o.result["judgment_id"]) for o in agent.outcomes[0]]
            assert all(status(engine, j) == "proposed" for j in saved)
            message = {k: v for k, v in card.items() if k != "params"}
            group = card["reply_markup"]["inline_keyboard"][0][1]["callback_data"]

            # Review: each claim comes as its own card, to decide one by one.
            s.api.push_callback(OWNER_USER, message, group)
            await s.api.signal.until(
                lambda: sum(keyboard(m) == ["Approve", "Reject", "Show"] for m in s.api.sent) == 3
            )
            # Approve all: what still waits becomes the owner's, in one tap.
            approve_all = card["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            s.api.push_callback(OWNER_USER, message, approve_all)
            await s.api.signal.until(lambda: len(s.api.edits) == 1)
            assert s.api.answers[-1]["text"] == "Approved 3 of 3."
            assert all(status(engine, j) == "active" for j in saved)
            assert [m for m in s.api.texts_to(OWNER_CHAT) if "things found" in m] == [card["text"]]

    asyncio.run(scenario())
