"""memory.retire: stale, superseded (with its successor) or contradicted, with a
required reason; the text never changes and validity closes where it should."""

from __future__ import annotations

import pytest

from mama_core.memory import (
    Engine,
    InvalidInputError,
    InvalidTransitionError,
    NotFoundError,
    ScopeDeniedError,
)
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    save,
    search_ids,
)


def _record(engine: Engine, judgment_id: int) -> dict:
    return engine.dispatch("memory.read", {"id": judgment_id}, OWNER, OWNER_GRANT)["record"]


def test_stale_needs_a_reason_and_closes_validity(engine: Engine) -> None:
    jid = save(engine, "The CI runs on Jenkins")["judgment_id"]
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch("memory.retire", {"id": jid, "reason": "  "}, OWNER, OWNER_GRANT)
    assert info.value.details["fields"] == ["reason"]
    assert search_ids(engine, "Jenkins") == [jid]
    receipt = engine.dispatch(
        "memory.retire", {"id": jid, "reason": "moved to GitHub Actions"}, OWNER, OWNER_GRANT
    )
    assert receipt["status"] == "stale"
    record = _record(engine, jid)
    assert record["summary"] == "The CI runs on Jenkins"
    assert record["valid_until"] == receipt["at"]
    assert search_ids(engine, "Jenkins") == []


def test_superseded_needs_its_successor_and_closes_at_its_start(engine: Engine) -> None:
    old = save(engine, "Standup at 9", valid_from="2024-01-01T00:00:00Z")["judgment_id"]
    new = save(engine, "Standup at 10", valid_from="2024-06-01T00:00:00Z")["judgment_id"]
    with pytest.raises(InvalidInputError):
        engine.dispatch(
            "memory.retire",
            {"id": old, "reason": "moved", "status": "superseded"},
            OWNER,
            OWNER_GRANT,
        )
    engine.dispatch(
        "memory.retire",
        {"id": old, "reason": "moved", "status": "superseded", "by": new},
        OWNER,
        OWNER_GRANT,
    )
    record = _record(engine, old)
    assert record["status"] == "superseded"
    assert record["superseded_by"] == new
    assert record["valid_until"] == "2024-06-01T00:00:00.000000Z"
    history = engine.dispatch("memory.read", {"id": new}, OWNER, OWNER_GRANT)["history"]
    assert [(h["id"], h["relation"]) for h in history] == [(old, "replaced")]


def test_save_with_replaces_supersedes_at_once_for_the_owner(engine: Engine) -> None:
    old = save(engine, "Coffee at the corner shop", valid_from="2024-01-01T00:00:00Z")
    new = save(
        engine,
        "Coffee at the new place",
        replaces=[old["judgment_id"]],
        valid_from="2024-03-01T00:00:00Z",
    )
    assert sorted(new["touched"]) == sorted([old["judgment_id"], new["judgment_id"]])
    record = _record(engine, old["judgment_id"])
    assert record["status"] == "superseded"
    assert record["valid_until"] == "2024-03-01T00:00:00.000000Z"
    assert search_ids(engine, "coffee") == [new["judgment_id"]]


def test_contradicted_keeps_validity_and_links_the_contradiction(engine: Engine) -> None:
    claim = save(engine, "The API limit is 100 per minute")["judgment_id"]
    evidence = save(engine, "Measured limit is 60 per minute")["judgment_id"]
    engine.dispatch(
        "memory.retire",
        {"id": claim, "reason": "measured", "status": "contradicted", "by": evidence},
        OWNER,
        OWNER_GRANT,
    )
    record = _record(engine, claim)
    assert record["status"] == "contradicted"
    assert record["valid_until"] is None
    assert search_ids(engine, "limit") == [evidence]


def test_only_active_records_can_be_retired(engine: Engine) -> None:
    jid = save(engine, "Something once true")["judgment_id"]
    engine.dispatch("memory.retire", {"id": jid, "reason": "old"}, OWNER, OWNER_GRANT)
    with pytest.raises(InvalidTransitionError) as info:
        engine.dispatch("memory.retire", {"id": jid, "reason": "again"}, OWNER, OWNER_GRANT)
    assert info.value.details["status"] == "stale"
    proposal = save(engine, "Prefer X", "preference", session=AGENT, grant=agent_grant())
    with pytest.raises(InvalidTransitionError):
        engine.dispatch(
            "memory.retire", {"id": proposal["judgment_id"], "reason": "x"}, OWNER, OWNER_GRANT
        )


def test_unknown_or_foreign_targets_are_not_found(engine: Engine) -> None:
    foreign = save(engine, "Project beta secret plan", scopes=["project:beta"])["judgment_id"]
    alpha = agent_grant("project:alpha")
    mine = save(engine, "Project alpha plan", session=AGENT, grant=alpha)["judgment_id"]
    for target in (foreign, 10_000):
        with pytest.raises(NotFoundError) as info:
            engine.dispatch("memory.retire", {"id": target, "reason": "x"}, AGENT, alpha)
        assert info.value.message == f"No judgment {target} in your scopes."
    assert (
        engine.dispatch("memory.retire", {"id": mine, "reason": "x"}, AGENT, alpha)["status"]
        == "stale"
    )


def test_retiring_a_record_bound_to_foreign_scopes_is_refused(engine: Engine) -> None:
    both = agent_grant("project:alpha", "project:beta")
    shared = save(
        engine,
        "Shared note",
        scopes=["project:alpha", "project:beta"],
        session=AGENT,
        grant=both,
    )["judgment_id"]
    with pytest.raises(ScopeDeniedError) as info:
        engine.dispatch(
            "memory.retire", {"id": shared, "reason": "x"}, AGENT, agent_grant("project:alpha")
        )
    assert info.value.details["scopes"] == ["project:beta"]
    assert (
        engine.dispatch("memory.retire", {"id": shared, "reason": "x"}, AGENT, both)["status"]
        == "stale"
    )
