"""observation.counts: connector items per source and channel after an id, within the
caller's scopes (the brief's "what came in" reads this, not every item's text)."""

from __future__ import annotations

from app.durable.connector_store import ConnectorStore
from app.durable.mailbox import InputKind, Mailbox, NewInput
from app.durable.transaction import RuntimeDb
from mama_core.memory import Engine, Grant, SessionFacts
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import ManualClock
from tests.mama_core.memory.helpers import SOURCE_TURN_AGENT


def test_counts_per_channel_after_an_id_and_only_in_the_callers_scopes(
    engine: Engine, app_db: RuntimeDb, clock: ManualClock
) -> None:
    store = ConnectorStore(app_db, clock)
    first = store.store_batch(
        "work-trello",
        "trello",
        batch(
            item(1),
            item(2),
            item(3, channel="Hiring", scope="project:trello/Hiring"),
        ),
    ).new_ids
    Mailbox(app_db, clock).post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "hi"))
    later = store.store_batch("work-trello", "trello", batch(item(4))).new_ids

    def counts(grant: Grant, after_id: int = 0) -> dict:
        return engine.dispatch(
            "observation.counts", {"after_id": after_id}, SOURCE_TURN_AGENT, grant
        )

    everything = engine.dispatch("observation.counts", {}, SessionFacts.owner_cli(), Grant.owner())
    assert everything["counts"] == [
        {"source": "trello:me", "channel": "Hiring", "count": 1, "last_id": first[2]},
        {"source": "trello:me", "channel": "Roadmap", "count": 3, "last_id": later[0]},
    ]
    assert everything["newest_id"] == later[0]
    assert counts(Grant.owner(), after_id=first[2])["counts"] == [
        {"source": "trello:me", "channel": "Roadmap", "count": 1, "last_id": later[0]}
    ]
    # An agent granted only the Roadmap scope: Roadmap is counted (positive control),
    # Hiring is not.
    roadmap = counts(Grant.agent(["project:trello/Roadmap"]))
    assert [(c["channel"], c["count"]) for c in roadmap["counts"]] == [("Roadmap", 3)]
    assert counts(Grant.agent(["global"]))["counts"] == []
