"""Review cards: a change proposed to one of the owner's records is shown as that
change, beside the record as it stands; a proposed judgment keeps its own card."""

from __future__ import annotations

from app.present.cards import card_text, group_card_text, record_text
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


def test_a_proposal_card_shows_the_items_it_rests_on(engine: Engine) -> None:
    conn = engine.store.new_connection()
    try:
        said = int(
            conn.execute(
                "INSERT INTO observations (source, external_id, author, text, received_at) "
                "VALUES ('slack:T1', 'C1/1', 'anna', 'Anna: we ship on Thursdays from January', "
                "'2026-12-01T09:00:00.000000Z')"
            ).lastrowid
            or 0
        )
        conn.execute(
            "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
            "VALUES (?, '#ops', 'channel:slack/#ops', '{}')",
            (said,),
        )
    finally:
        conn.close()
    source = SessionFacts(ActorKind.AGENT, "claude-code", turn=TurnKind.SOURCE_DELTA)
    saved = engine.dispatch(
        "memory.save",
        {"kind": "decision", "summary": "We ship on Thursdays", "evidence": [f"obs:{said}"]},
        source,
        Grant.agent(["channel:slack/#ops"]),
    )["judgment_id"]
    record = engine.dispatch("memory.read", {"id": saved}, OWNER, Grant.owner())["record"]
    text = card_text(record)
    assert f'Rests on:\n- obs:{said} anna in #ops: "Anna: we ship on Thursdays from January"' in (
        text
    )
    assert f"- obs:{said} anna in #ops" in record_text(record)  # the Show button's text too
    group = group_card_text("#ops (work-slack)", [record])
    assert f"- #{saved} decision: We ship on Thursdays (obs:{said})" in group
    # Control: a proposal citing nothing has no such lines.
    plain = engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "Standups at 9:30"},
        source,
        Grant.agent(["global"]),
    )["judgment_id"]
    plain_record = engine.dispatch("memory.read", {"id": plain}, OWNER, Grant.owner())["record"]
    assert "Rests on" not in card_text(plain_record)
    assert plain_record["evidence"] == []
