"""Every proposal becomes one review card, whoever made it and whenever it is seen."""

from __future__ import annotations

from app.durable.journal import DeliveryJournal, DeliveryKind
from app.durable.proposals import ProposalFeed
from app.durable.transaction import RuntimeDb
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


def test_a_backlog_at_the_first_start_is_one_notice_not_a_flood(
    engine: Engine, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    journal = DeliveryJournal(runtime_db, clock)
    feed = ProposalFeed(runtime_db, journal)
    for n in range(5):
        lesson = {"kind": "lesson", "summary": f"Lesson {n}", "applies_when": "always"}
        engine.dispatch("memory.save", lesson, MCP, GRANT)

    assert feed.scan() == []  # five is a backlog: no cards…
    notice = journal.take_next()
    assert notice is not None and notice.kind is DeliveryKind.NOTICE
    assert notice.text.startswith("5 proposals made before I was connected")
    assert journal.take_next() is None

    # …and what comes after the first start is carded as usual (the control).
    later = {"kind": "lesson", "summary": "Lesson 6", "applies_when": "always"}
    made = engine.dispatch("memory.save", later, MCP, GRANT)
    assert feed.scan() == [made["judgment_id"]]
    card = journal.take_next()
    assert card is not None and card.judgment_id == made["judgment_id"]


def test_a_change_proposed_to_the_owners_rule_is_carded_once(
    engine: Engine, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    journal = DeliveryJournal(runtime_db, clock)
    feed = ProposalFeed(runtime_db, journal)
    owner = SessionFacts.owner_cli()
    rule = engine.dispatch(
        "memory.save",
        {"kind": "constraint", "summary": "No deploys on Friday", "applies_when": "deploying"},
        owner,
        Grant.owner(),
    )["judgment_id"]
    assert feed.scan() == []  # the owner's own rule is no proposal (the control)

    retire = {"id": rule, "reason": "we ship daily"}
    change = engine.dispatch("memory.retire", retire, MCP, GRANT)
    assert change["proposed"] is True
    assert feed.scan() == [rule]
    assert feed.scan() == []  # once
    card = journal.take_next()
    assert card is not None and card.kind is DeliveryKind.PROPOSAL and card.judgment_id == rule

    # Rejected, then proposed again: a new change gets its own card.
    engine.dispatch("review.reject", {"id": rule, "reason": "no"}, owner, Grant.owner())
    engine.dispatch("memory.retire", retire, MCP, GRANT)
    assert feed.scan() == [rule]
