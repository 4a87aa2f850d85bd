"""The two time axes: what the store believed as recorded at T (rebuilt from the
events) and what held in the world at V (valid_from <= V < valid_until)."""

from __future__ import annotations

from typing import Any

import pytest

from mama_core import clock
from mama_core.errors import InvalidInputError
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


def test_a_range_lists_what_held_in_it_or_changed_in_it(engine: Engine) -> None:
    a, b, retired = _history(engine)
    a_id, b_id = a["judgment_id"], b["judgment_id"]
    spring = _timeline(engine, from_time="2024-02-01T00:00:00Z", to_time="2024-03-01T00:00:00Z")
    assert _ids(spring) == [a_id]
    assert spring["records"][0]["held_in_range"] is True
    assert spring["records"][0]["changed_in_range"] is False
    assert spring["events"] == []  # every event was recorded today, not in 2024
    across = _timeline(engine, from_time="2024-05-01T00:00:00Z", to_time="2024-07-01T00:00:00Z")
    assert set(_ids(across)) == {a_id, b_id}
    assert (
        _ids(_timeline(engine, from_time="2023-01-01T00:00:00Z", to_time="2023-12-31T00:00:00Z"))
        == []
    )

    # Record time: a fact about 2019, saved and replaced today, is in today's range
    # (changed in it) though it held only in 2019; the range keeps only its events.
    office = save(engine, "The office is in Bonn", valid_from="2019-01-01T00:00:00Z")
    moved = save(
        engine,
        "The office is in Berlin",
        replaces=[office["judgment_id"]],
        valid_from="2020-01-01T00:00:00Z",
    )
    today = _timeline(engine, from_time=office["at"], to_time=clock.after(moved["at"]))
    rows = {r["id"]: r for r in today["records"]}
    assert set(rows) == {office["judgment_id"], moved["judgment_id"]}
    assert rows[office["judgment_id"]]["changed_in_range"] is True
    assert rows[office["judgment_id"]]["held_in_range"] is False
    assert [e["id"] for e in today["events"]] == [office["event_id"], moved["event_id"]]
    assert retired["event_id"] not in [e["id"] for e in today["events"]]
    in_2019 = _timeline(engine, from_time="2019-06-01T00:00:00Z", to_time="2019-07-01T00:00:00Z")
    assert _ids(in_2019) == [office["judgment_id"]] and in_2019["events"] == []


def test_a_range_needs_both_ends_in_order(engine: Engine) -> None:
    save(engine, "Standups are at 9:30", valid_from="2024-01-01T00:00:00Z")
    for bad in (
        {"from_time": "2024-01-01T00:00:00Z"},
        {"to_time": "2024-01-01T00:00:00Z"},
        {"from_time": "2024-02-01T00:00:00Z", "to_time": "2024-01-01T00:00:00Z"},
        {
            "from_time": "2024-01-01T00:00:00Z",
            "to_time": "2024-02-01T00:00:00Z",
            "valid_at": "2024-01-15T00:00:00Z",
        },
    ):
        with pytest.raises(InvalidInputError):
            _timeline(engine, **bad)
    ok = _timeline(engine, from_time="2024-01-01T00:00:00Z", to_time="2024-02-01T00:00:00Z")
    assert len(ok["records"]) == 1
