"""The two time axes: what the store believed as recorded at T (rebuilt from the
events) and what held in the world at V (valid_from <= V < valid_until)."""

from __future__ import annotations

from typing import Any

from mama_core.memory import Engine
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save


def _timeline(engine: Engine, **query: Any) -> dict[str, Any]:
    return engine.dispatch("memory.timeline", query, OWNER, OWNER_GRANT)


def _ids(result: dict[str, Any]) -> list[int]:
    return [r["id"] for r in result["records"]]


def _history(engine: Engine) -> tuple[dict, dict, dict]:
    a = save(engine, "Team meets on Mondays", valid_from="2024-01-01T00:00:00Z")
    b = save(
        engine,
        "Team meets on Tuesdays",
        replaces=[a["judgment_id"]],
        valid_from="2024-06-01T00:00:00Z",
    )
    retired = engine.dispatch(
        "memory.retire", {"id": b["judgment_id"], "reason": "team disbanded"}, OWNER, OWNER_GRANT
    )
    return a, b, retired


def test_as_recorded_at_rebuilds_belief_from_events(engine: Engine) -> None:
    a, b, retired = _history(engine)
    a_id, b_id = a["judgment_id"], b["judgment_id"]

    at_a = _timeline(engine, as_recorded_at=a["at"])
    assert _ids(at_a) == [a_id]
    assert at_a["records"][0]["status_then"] == "active"
    assert at_a["records"][0]["status"] == "superseded"  # as it stands now
    assert [e["id"] for e in at_a["events"]] == [a["event_id"]]

    at_b = _timeline(engine, as_recorded_at=b["at"])
    assert _ids(at_b) == [b_id]
    assert {e["id"] for e in at_b["events"]} == {b["event_id"]}

    assert _ids(_timeline(engine, as_recorded_at=retired["at"])) == []
    # Positive control: the same instant, asked about B by id, shows why it left.
    by_id = _timeline(engine, id=b_id, as_recorded_at=retired["at"])
    assert by_id["records"][0]["status_then"] == "stale"
    assert [e["action"] for e in by_id["events"]] == ["memory.save", "memory.retire"]
    assert by_id["events"][-1]["payload"]["reason"] == "team disbanded"

    assert _ids(_timeline(engine, as_recorded_at="2000-01-01T00:00:00Z")) == []


def test_valid_at_answers_what_held_in_the_world(engine: Engine) -> None:
    a, b, _ = _history(engine)
    assert _ids(_timeline(engine, valid_at="2024-03-01T00:00:00Z")) == [a["judgment_id"]]
    assert _ids(_timeline(engine, valid_at="2024-07-01T00:00:00Z")) == [b["judgment_id"]]
    assert _ids(_timeline(engine, valid_at="2023-01-01T00:00:00Z")) == []
    # valid_until is exclusive: at the successor's start only the successor held.
    assert _ids(_timeline(engine, valid_at="2024-06-01T00:00:00Z")) == [b["judgment_id"]]


def test_both_axes_together(engine: Engine) -> None:
    a, b, _ = _history(engine)
    # At A's recording the store did not yet know A would end on June 1st.
    then = _timeline(engine, as_recorded_at=a["at"], valid_at="2024-07-01T00:00:00Z")
    assert _ids(then) == [a["judgment_id"]]
    assert then["records"][0]["valid_until_then"] is None
    now = _timeline(engine, valid_at="2024-07-01T00:00:00Z")
    assert _ids(now) == [b["judgment_id"]]


def test_proposals_are_not_beliefs_until_approved(engine: Engine) -> None:
    proposal = save(
        engine, "Prefer short standups", "preference", session=AGENT, grant=agent_grant()
    )
    approved = engine.dispatch(
        "review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT
    )
    assert _ids(_timeline(engine, as_recorded_at=proposal["at"])) == []
    assert _ids(_timeline(engine, as_recorded_at=approved["at"])) == [proposal["judgment_id"]]


def test_timeline_is_scoped(engine: Engine) -> None:
    hidden = save(engine, "Private plan", scopes=["user:ann"])
    shown = save(engine, "Public plan", scopes=["global"])
    result = engine.dispatch(
        "memory.timeline", {"as_recorded_at": shown["at"]}, AGENT, agent_grant("global")
    )
    assert _ids(result) == [shown["judgment_id"]]
    assert set(_ids(_timeline(engine, as_recorded_at=shown["at"]))) == {
        hidden["judgment_id"],
        shown["judgment_id"],
    }
