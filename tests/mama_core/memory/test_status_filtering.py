"""Only active judgments come back as beliefs; superseded, stale, contradicted,
rejected and proposed ones do not, each beside an active one that does."""

from __future__ import annotations

import pytest

from mama_core.memory import Engine, NotGrantedError
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    save,
    search_ids,
)


def test_each_retired_status_is_hidden_beside_an_active_control(engine: Engine) -> None:
    control = save(engine, "walrus control record stays active")["judgment_id"]

    old = save(engine, "walrus old version")["judgment_id"]
    save(engine, "newer statement", replaces=[old])
    stale = save(engine, "walrus stale note")["judgment_id"]
    engine.dispatch("memory.retire", {"id": stale, "reason": "outdated"}, OWNER, OWNER_GRANT)
    wrong = save(engine, "walrus wrong claim")["judgment_id"]
    engine.dispatch(
        "memory.retire",
        {"id": wrong, "reason": "was never true", "status": "contradicted"},
        OWNER,
        OWNER_GRANT,
    )
    proposed = save(engine, "walrus proposal", "lesson", session=AGENT, grant=agent_grant())
    assert proposed["status"] == "proposed"
    rejected = save(engine, "walrus rejected idea", "lesson", session=AGENT, grant=agent_grant())
    engine.dispatch(
        "review.reject", {"id": rejected["judgment_id"], "reason": "no"}, OWNER, OWNER_GRANT
    )

    assert search_ids(engine, "walrus") == [control]
    assert search_ids(engine, "walrus", AGENT, agent_grant()) == [control]

    # The owner can ask for them explicitly: proves they were there to find.
    statuses = ["superseded", "stale", "contradicted", "rejected", "proposed"]
    found = engine.dispatch(
        "memory.search", {"query": "walrus", "statuses": statuses}, OWNER, OWNER_GRANT
    )
    by_status = {r["status"]: r["id"] for r in found["results"]}
    assert by_status == {
        "superseded": old,
        "stale": stale,
        "contradicted": wrong,
        "rejected": rejected["judgment_id"],
        "proposed": proposed["judgment_id"],
    }


def test_only_the_owner_may_search_other_statuses(engine: Engine) -> None:
    save(engine, "a proposal", "lesson", session=AGENT, grant=agent_grant())
    with pytest.raises(NotGrantedError):
        engine.dispatch(
            "memory.search", {"query": "proposal", "statuses": ["proposed"]}, AGENT, agent_grant()
        )
    active_only = engine.dispatch(
        "memory.search", {"query": "proposal", "statuses": ["active"]}, AGENT, agent_grant()
    )
    assert active_only["results"] == []
    assert search_ids(engine, "proposal", statuses=["proposed"]) != []


def test_kind_filter_and_limit_apply_before_results(engine: Engine) -> None:
    for n in range(5):
        save(engine, f"heron fact number {n}")
    decision = save(engine, "heron decision", "decision")["judgment_id"]
    assert search_ids(engine, "heron", kinds=["decision"]) == [decision]
    assert len(search_ids(engine, "heron", kinds=["fact"], limit=3)) == 3
    assert len(search_ids(engine, "heron")) == 6


def test_retired_rows_never_crowd_out_active_ones_under_a_limit(engine: Engine) -> None:
    for n in range(8):
        stale = save(engine, f"ibis retired {n}")["judgment_id"]
        engine.dispatch("memory.retire", {"id": stale, "reason": "old"}, OWNER, OWNER_GRANT)
    active = save(engine, "ibis the one active")["judgment_id"]
    assert search_ids(engine, "ibis", limit=1) == [active]
