"""memory.read carries a commitment's terms (the review card and Show need who owes
what to whom by when); a record of another kind carries none."""

from __future__ import annotations

from mama_core.memory import Engine
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, SOURCE_TURN_AGENT, agent_grant


def test_a_commitment_read_names_its_terms_another_kind_has_none(engine: Engine) -> None:
    saved = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Send Dana the Q3 deck",
            "commitment": {
                "owed_by": "owner",
                "owed_to": "Dana",
                "due": "2026-12-05T17:00:00+01:00",
            },
        },
        SOURCE_TURN_AGENT,
        agent_grant(),
    )
    record = engine.dispatch("memory.read", {"id": saved["judgment_id"]}, OWNER, OWNER_GRANT)
    assert record["record"]["status"] == "proposed"  # the owner owes it: waits for the owner
    assert record["record"]["commitment"] == {
        "owed_by": "owner",
        "owed_to": "Dana",
        "due_at": "2026-12-05T16:00:00.000000Z",
        "due_tz": None,
        "state": "open",
        "source_observations": [],
    }
    fact = engine.dispatch(
        "memory.save", {"kind": "fact", "summary": "Dana runs sales"}, OWNER, OWNER_GRANT
    )
    plain = engine.dispatch("memory.read", {"id": fact["judgment_id"]}, OWNER, OWNER_GRANT)
    assert "commitment" not in plain["record"]
