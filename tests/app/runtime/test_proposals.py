"""Every proposal becomes one review card, whoever made it and whenever it is seen."""

from __future__ import annotations

from app.runtime.journal import DeliveryJournal, DeliveryKind
from app.runtime.proposals import ProposalFeed
from app.runtime.transaction import RuntimeDb
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from tests.app.runtime.support import ManualClock

MCP = SessionFacts(ActorKind.MCP_CLIENT, "claude-code", turn=TurnKind.MCP)
GRANT = Grant.agent(["global"], "global")


def test_each_proposal_is_queued_once_and_owner_saves_never(
    engine: Engine, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    journal = DeliveryJournal(runtime_db, clock)
    feed = ProposalFeed(runtime_db, journal)
    lesson = {"kind": "lesson", "summary": "Run the linter first", "applies_when": "committing"}
    proposed = engine.dispatch("memory.save", lesson, MCP, GRANT)  # e.g. from `mama mcp`
    engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "Owner fact"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    assert proposed["status"] == "proposed"

    assert feed.scan() == [proposed["judgment_id"]]
    assert feed.scan() == []  # the cursor moved on
    card = journal.take_next()
    assert card is not None and card.kind is DeliveryKind.PROPOSAL
    assert card.judgment_id == proposed["judgment_id"]
    assert journal.take_next() is None
