"""In a turn driven by a source delta or a schedule, guidance can only be proposed
(source-derived), the owner's records can only be proposed for retirement or
replacement, and outcomes on them are refused (``owner_turn_required``)."""

from __future__ import annotations

import pytest

from mama_core.memory import Engine, OwnerTurnRequiredError
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    SCHEDULED_AGENT,
    SOURCE_TURN_AGENT,
    agent_grant,
    save,
)

NON_OWNER_TURNS = (SOURCE_TURN_AGENT, SCHEDULED_AGENT)


def _read(engine: Engine, jid: int) -> dict:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, OWNER_GRANT)["record"]


@pytest.mark.parametrize("session", NON_OWNER_TURNS, ids=["source_delta", "scheduled"])
def test_guidance_from_a_non_owner_turn_is_a_source_derived_proposal(
    engine: Engine, session
) -> None:
    receipt = save(
        engine, "Reply to Bob within a day", "preference", session=session, grant=agent_grant()
    )
    assert receipt["status"] == "proposed"
    record = _read(engine, receipt["judgment_id"])
    assert record["involvement"] == "source_derived"
    assert record["provenance"]["turn"] == session.turn.value


@pytest.mark.parametrize("session", NON_OWNER_TURNS, ids=["source_delta", "scheduled"])
def test_retiring_or_replacing_the_owners_records_is_only_proposed(engine: Engine, session) -> None:
    rule = save(engine, "Never email clients on weekends", "constraint")["judgment_id"]
    stated = save(engine, "The budget is 10k")["judgment_id"]
    for target in (rule, stated):
        receipt = engine.dispatch(
            "memory.retire", {"id": target, "reason": "slack says so"}, session, agent_grant()
        )
        assert receipt["proposed"] is True
        replacement = save(
            engine, f"replacement {target}", replaces=[target], session=session, grant=agent_grant()
        )
        assert replacement["status"] == "proposed"
        assert _read(engine, target)["status"] == "active"
    with pytest.raises(OwnerTurnRequiredError) as info:
        engine.dispatch(
            "memory.update_outcome", {"id": stated, "outcome": "spent"}, session, agent_grant()
        )
    assert info.value.details["ids"] == [stated]

    # Positive control: the same turn may retire a record that is not the owner's (an
    # agent's own note from an earlier turn). What it saves itself is a claim, proposed.
    claim = save(engine, "Ticket 12 is closed", session=session, grant=agent_grant())
    assert claim["status"] == "proposed"
    own = save(engine, "Ticket 12 is open", session=AGENT, grant=agent_grant())["judgment_id"]
    assert (
        engine.dispatch("memory.retire", {"id": own, "reason": "closed"}, session, agent_grant())[
            "status"
        ]
        == "stale"
    )
