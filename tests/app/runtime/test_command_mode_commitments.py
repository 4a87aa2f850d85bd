"""Command mode (no model) proposes the commitments a source delta's items state in a
recognisable form: each ``proposed``, resting on its observation, from the source-delta
turn, reviewed on the turn's one card; a question, a request or a conditional in the
same poll proposes nothing."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from app.backends.command_mode import CommandModeBackend
from app.connectors.base import Item
from app.durable.connector_store import ConnectorStore
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.connectors.items import T0, batch, item
from tests.app.runtime.support import RecordingChannel, Signal

OPS = "channel:slack/#ops"
MAIL = "channel:mail/me@example.com/INBOX"
SETTINGS = RuntimeSettings(
    agent_scopes=("global", OPS, MAIL), default_scope="global", poll_seconds=5.0
)
OWNER = SessionFacts.owner_cli()
BERLIN = ZoneInfo("Europe/Berlin")  # T0 is Monday 2026-11-30 09:00 UTC


def slack(n: int, text: str) -> Item:
    return item(n, channel="#ops", scope=OPS, text=text)


def mail(n: int, text: str) -> Item:
    return Item(
        source="mail:me@example.com",
        external_id=f"INBOX/<m{n}@vendor.example>",
        channel="INBOX",
        scope=MAIL,
        author="Priya Nair <priya@vendor.example>",
        at=T0,
        text=text,
        metadata={"subject": "Quote"},
    )


def feed(
    engine: Engine, store: Store, *polls: tuple[str, str, list[Item]]
) -> tuple[list[list[int]], RecordingChannel]:
    """Store each poll through the connector store, let the runtime (command mode) run
    its source-delta turn; the polls' new observation ids, and the owner's channel."""
    channel = RecordingChannel()
    stored: list[list[int]] = []

    async def main() -> None:
        runtime = OwnerRuntime(engine, store, CommandModeBackend(), SETTINGS)
        runtime.attach_channel(channel)
        turns = Signal()
        done: list[int] = []
        runtime.turn_listeners.append(lambda claimed, reply: (done.append(1), turns.notify()))
        await runtime.start()
        try:
            for name, kind, items in polls:
                result = await runtime.run_db(
                    ConnectorStore(runtime.db).store_batch, name, kind, batch(*items)
                )
                stored.append(list(result.new_ids))
                runtime.wake()
                await turns.until(lambda: len(done) == len(stored))
        finally:
            await runtime.stop()

    asyncio.run(main())
    return stored, channel


def proposed_commitments(engine: Engine) -> list[dict[str, Any]]:
    listed = engine.dispatch("commitment.list", {}, OWNER, Grant.owner())
    return [c for c in listed["commitments"] if c["status"] == "proposed"]


def read(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, Grant.owner())["record"]


def test_a_source_delta_in_command_mode_proposes_the_commitments_it_states(
    engine: Engine, store: Store
) -> None:
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, OWNER, Grant.owner())
    (ops_ids, mail_ids), channel = feed(
        engine,
        store,
        (
            "work-slack",
            "slack",
            [
                slack(1, "I'll send you the deck by Friday."),
                slack(2, "Can you send the deck by Friday?"),
                slack(3, "If I have time I'll look at the flaky test tomorrow."),
                slack(4, "Thanks. Bob will review the contract tomorrow."),
            ],
        ),
        ("work-mail", "mail", [mail(1, "Hi,\n\nI will send the revised quote on Wednesday.")]),
    )
    found = {tuple(c["source_observations"]): c for c in proposed_commitments(engine)}
    # The statements are proposed, each resting on the item that says it …
    assert set(found) == {(ops_ids[0],), (ops_ids[3],), (mail_ids[0],)}
    # … and the question and the conditional beside them propose nothing.
    assert (ops_ids[1],) not in found and (ops_ids[2],) not in found

    deck = found[(ops_ids[0],)]
    assert (deck["owed_by"], deck["owed_to"]) == ("Anna", "#ops")
    assert deck["summary"] == 'Anna: "I\'ll send you the deck by Friday."'
    due = datetime.fromisoformat(deck["due_at"].replace("Z", "+00:00")).astimezone(BERLIN)
    assert due == datetime(2026, 12, 4, 17, 0, tzinfo=BERLIN)
    review = found[(ops_ids[3],)]
    assert (review["owed_by"], review["owed_to"]) == ("Bob", "#ops")
    assert review["due_at"].startswith("2026-12-01T16:00")  # Tuesday 17:00 in Berlin

    # Owed to the owner, it would land active from a source delta; a guess is proposed.
    quote = found[(mail_ids[0],)]
    assert (quote["owed_by"], quote["owed_to"]) == ("Priya Nair <priya@vendor.example>", "owner")
    assert quote["status"] == "proposed"

    for commitment in found.values():
        record = read(engine, commitment["id"])
        assert record["status"] == "proposed"
        provenance = record["provenance"]
        assert provenance["turn"] == "source_delta"
        assert provenance["actor_name"] == "command-mode"
        refs = provenance["source_refs"]
        assert refs[0].startswith("obs:") and refs[1].startswith("connector:")
    slack_refs = read(engine, deck["id"])["provenance"]["source_refs"]
    assert slack_refs[1].startswith("connector:work-slack:")

    # The owner reviews each poll's proposals on one card, as an agent's.
    cards = [m for m in channel.sent if m.review_group is not None]
    assert len(cards) == 1 and "2 things found" in cards[0].text


def test_a_poll_with_no_commitment_proposes_nothing(engine: Engine, store: Store) -> None:
    (ids,), _ = feed(
        engine,
        store,
        (
            "work-slack",
            "slack",
            [
                slack(1, "Will you send it?"),
                slack(2, "I sent it yesterday."),
                slack(3, "I'll rewrite the whole backend over the weekend lol"),
            ],
        ),
    )
    assert len(ids) == 3
    assert proposed_commitments(engine) == []
    # Control: the same runtime path proposes from a statement.
    (more,), _ = feed(engine, store, ("work-slack", "slack", [slack(4, "I'll send it tomorrow.")]))
    assert [c["source_observations"] for c in proposed_commitments(engine)] == [more]
