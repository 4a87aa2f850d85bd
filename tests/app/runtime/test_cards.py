"""Review cards: a change proposed to one of the owner's records is shown as that
change, beside the record as it stands; a proposed judgment keeps its own card."""

from __future__ import annotations

from app.cards import card_text
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind

MCP = SessionFacts(ActorKind.MCP_CLIENT, "claude-code", turn=TurnKind.MCP)
OWNER = SessionFacts.owner_cli()


def test_a_change_card_names_the_change_the_proposer_and_the_record(engine: Engine) -> None:
    rule = engine.dispatch(
        "memory.save",
        {"kind": "constraint", "summary": "No deploys on Friday", "applies_when": "deploying"},
        OWNER,
        Grant.owner(),
    )["judgment_id"]
    engine.dispatch(
        "memory.retire",
        {"id": rule, "reason": "we ship daily"},
        MCP,
        Grant.agent(["global"]),
    )
    record = engine.dispatch("memory.read", {"id": rule}, OWNER, Grant.owner())["record"]
    text = card_text(record)
    assert text.startswith(f"**Proposed change to your #{rule}** (constraint)")
    assert f"claude-code proposes to retire #{rule} as stale: we ship daily" in text
    assert "No deploys on Friday" in text
    assert "in a coding session" in text

    # The control: a proposed judgment still gets the proposal card.
    lesson = engine.dispatch(
        "memory.save",
        {"kind": "lesson", "summary": "Run the linter first", "applies_when": "committing"},
        MCP,
        Grant.agent(["global"]),
    )["judgment_id"]
    proposal = engine.dispatch("memory.read", {"id": lesson}, OWNER, Grant.owner())["record"]
    assert card_text(proposal).startswith(f"**New proposal #{lesson}** (lesson)")
