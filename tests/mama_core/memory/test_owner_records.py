"""Only the owner retires, replaces, tombstones, or attaches outcomes and links to the
owner's records; anyone else proposes, and the owner's approval applies the change
as the owner's own event. Each refusal sits beside the call that is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from mama_core.guidance import render_index
from mama_core.memory import (
    Engine,
    InvalidInputError,
    InvalidTransitionError,
    NotGrantedError,
    OwnerTurnRequiredError,
    SessionFacts,
)
from tests.mama_core.memory.helpers import (
    AGENT,
    MCP_CLIENT,
    OWNER,
    OWNER_GRANT,
    SCHEDULED_AGENT,
    SOURCE_TURN_AGENT,
    agent_grant,
    event_count,
    save,
    search_ids,
)

NOT_OWNER = (AGENT, MCP_CLIENT, SOURCE_TURN_AGENT, SCHEDULED_AGENT)
NOT_OWNER_IDS = ["agent_in_owner_turn", "mcp", "source_delta", "scheduled"]
NOT_OWNER_TURNS = (MCP_CLIENT, SOURCE_TURN_AGENT, SCHEDULED_AGENT)


def _record(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, OWNER_GRANT)["record"]


def _events(engine: Engine, jid: int) -> list[dict[str, Any]]:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, OWNER_GRANT)["events"]


def _retire(engine: Engine, jid: int, session: SessionFacts, **fields: Any) -> dict[str, Any]:
    payload = {"id": jid, "reason": "the team ships daily now", **fields}
    return engine.dispatch("memory.retire", payload, session, agent_grant())


@pytest.mark.parametrize("session", NOT_OWNER, ids=NOT_OWNER_IDS)
def test_retiring_the_owners_rule_is_a_proposal_and_the_rule_stays(
    engine: Engine, session: SessionFacts
) -> None:
    rule = save(engine, "Never deploy on Fridays", "constraint")["judgment_id"]
    stated = save(engine, "The release manager is Dana")["judgment_id"]
    for target in (rule, stated):
        receipt = _retire(engine, target, session)
        assert receipt["proposed"] is True
        assert receipt["status"] == "active"
        record = _record(engine, target)
        assert record["status"] == "active"
        change = record["pending_change"]
        assert change["id"] == receipt["change_id"]
        assert change["action"] == "memory.retire"
        assert change["proposed_by"]["kind"] == session.actor_kind.value
        assert "the team ships daily now" in change["description"]
    assert search_ids(engine, "deploy Fridays")[0] == rule
    index = render_index(engine.store.conn, ["global"])
    assert f"[#{rule}]" in index.text

    # Positive control: the same caller retires a record that is not the owner's at once
    # (an agent's note; what a source turn saves itself is a claim, proposed).
    own = save(engine, "Ticket 12 is open", session=AGENT, grant=agent_grant())["judgment_id"]
    direct = _retire(engine, own, session)
    assert direct["status"] == "stale"
    assert "proposed" not in direct
    assert _record(engine, own)["pending_change"] is None


def test_owner_approval_retires_the_rule_in_the_owners_own_event(engine: Engine) -> None:
    rule = save(engine, "Never deploy on Fridays", "constraint")["judgment_id"]
    proposal = _retire(engine, rule, MCP_CLIENT)
    proposing_event = _events(engine, rule)[-1]
    assert proposing_event["action"] == "memory.retire"
    assert proposing_event["actor"]["kind"] == "mcp_client"
    assert proposing_event["payload"]["proposed_change"] == proposal["change_id"]
    assert proposing_event["payload"]["transitions"] == []  # nothing changed yet

    approved = engine.dispatch("review.approve", {"id": rule}, OWNER, OWNER_GRANT)
    assert approved["status"] == "stale"
    assert approved["change_id"] == proposal["change_id"]
    record = _record(engine, rule)
    assert record["status"] == "stale"
    assert record["pending_change"] is None
    last = _events(engine, rule)[-1]
    assert last["action"] == "review.approve"
    assert last["actor"]["kind"] == "owner"
    assert last["payload"]["change_action"] == "memory.retire"
    assert last["payload"]["transitions"][0]["to"] == "stale"
    assert rule not in search_ids(engine, "deploy Fridays")
    assert f"[#{rule}]" not in render_index(engine.store.conn, ["global"]).text
    with pytest.raises(InvalidTransitionError):  # decided: nothing waits any more
        engine.dispatch("review.approve", {"id": rule}, OWNER, OWNER_GRANT)


def test_owner_rejection_leaves_the_rule_untouched(engine: Engine) -> None:
    rule = save(engine, "Review every pull request", "constraint")["judgment_id"]
    _retire(engine, rule, AGENT)
    with pytest.raises(InvalidInputError):  # rejecting a change cannot tombstone the rule
        engine.dispatch(
            "review.reject",
            {"id": rule, "reason": "no", "forbid_resave": True},
            OWNER,
            OWNER_GRANT,
        )
    rejected = engine.dispatch(
        "review.reject", {"id": rule, "reason": "we keep reviewing"}, OWNER, OWNER_GRANT
    )
    assert rejected["status"] == "active"
    record = _record(engine, rule)
    assert record["status"] == "active" and record["pending_change"] is None
    assert _events(engine, rule)[-1]["action"] == "review.reject"
    assert search_ids(engine, "review pull request")[0] == rule
    # A rejected change can be proposed again, and the owner can still retire it.
    again = _retire(engine, rule, AGENT)
    assert again["proposed"] is True
    owner = engine.dispatch("memory.retire", {"id": rule, "reason": "done"}, OWNER, OWNER_GRANT)
    assert owner["status"] == "stale"


def test_one_change_waits_per_record_and_a_stale_card_cannot_decide_a_newer_one(
    engine: Engine,
) -> None:
    rule = save(engine, "Tabs, not spaces", "preference")["judgment_id"]
    first = _retire(engine, rule, AGENT)
    with pytest.raises(InvalidTransitionError) as info:
        _retire(engine, rule, MCP_CLIENT)
    assert info.value.details["change_id"] == first["change_id"]
    engine.dispatch("review.reject", {"id": rule, "reason": "no"}, OWNER, OWNER_GRANT)
    second = _retire(engine, rule, MCP_CLIENT)
    with pytest.raises(InvalidTransitionError):
        engine.dispatch(
            "review.approve", {"id": rule, "change_id": first["change_id"]}, OWNER, OWNER_GRANT
        )
    assert _record(engine, rule)["status"] == "active"
    done = engine.dispatch(
        "review.approve", {"id": rule, "change_id": second["change_id"]}, OWNER, OWNER_GRANT
    )
    assert done["status"] == "stale"


@pytest.mark.parametrize("session", NOT_OWNER, ids=NOT_OWNER_IDS)
def test_replacing_the_owners_record_lands_proposed_and_supersedes_only_on_approval(
    engine: Engine, session: SessionFacts
) -> None:
    rule = save(engine, "Deploy with blue green", "constraint")["judgment_id"]
    revision = save(
        engine,
        "Deploy with canary releases",
        "constraint",
        replaces=[rule],
        session=session,
        grant=agent_grant(),
    )
    assert revision["status"] == "proposed"
    assert _record(engine, rule)["status"] == "active"
    engine.dispatch("review.approve", {"id": revision["judgment_id"]}, OWNER, OWNER_GRANT)
    assert _record(engine, rule)["status"] == "superseded"
    assert _events(engine, rule)[-1]["actor"]["kind"] == "owner"

    # Positive control: replacing a fact that is not the owner's is immediate — except
    # that what a source or scheduled turn says is a claim: it waits for the owner.
    own = save(engine, "Build 7 is green", session=AGENT, grant=agent_grant())["judgment_id"]
    newer = save(engine, "Build 8 is green", replaces=[own], session=session, grant=agent_grant())
    if session.is_source_turn:
        assert newer["status"] == "proposed"
        assert _record(engine, own)["status"] == "active"
        engine.dispatch("review.approve", {"id": newer["judgment_id"]}, OWNER, OWNER_GRANT)
    else:
        assert newer["status"] == "active"
    assert _record(engine, own)["status"] == "superseded"


@pytest.mark.parametrize("session", NOT_OWNER, ids=NOT_OWNER_IDS)
def test_only_the_owner_creates_tombstones(engine: Engine, session: SessionFacts) -> None:
    own = save(engine, "Use the staging bucket", session=AGENT, grant=agent_grant())
    events = event_count(engine)
    with pytest.raises(NotGrantedError) as info:
        _retire(engine, own["judgment_id"], session, forbid_resave=True)
    assert info.value.details["field"] == "forbid_resave"
    assert event_count(engine) == events
    count = engine.store.conn.execute("SELECT count(*) FROM tombstones").fetchone()[0]
    assert count == 0
    # Positive controls: without forbid_resave it retires; the owner may leave a tombstone.
    assert _retire(engine, own["judgment_id"], session)["status"] == "stale"
    mine = save(engine, "Use the prod bucket")["judgment_id"]
    owner = engine.dispatch(
        "memory.retire",
        {"id": mine, "reason": "never again", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    assert owner["tombstone_id"] >= 1


def test_an_owner_actor_outside_an_owner_turn_cannot_tombstone(engine: Engine) -> None:
    rule = save(engine, "Keep the cache warm")["judgment_id"]
    scheduled_owner = SessionFacts(
        actor_kind=OWNER.actor_kind, actor_name="owner", turn=SCHEDULED_AGENT.turn
    )
    with pytest.raises(NotGrantedError):
        engine.dispatch(
            "memory.retire",
            {"id": rule, "reason": "x", "forbid_resave": True},
            scheduled_owner,
            OWNER_GRANT,
        )


@pytest.mark.parametrize("session", NOT_OWNER_TURNS, ids=NOT_OWNER_IDS[1:])
def test_outcomes_and_links_on_the_owners_records_need_an_owner_turn(
    engine: Engine, session: SessionFacts
) -> None:
    decision = save(engine, "Adopt SQLCipher for storage", "decision")["judgment_id"]
    own = save(engine, "SQLCipher pages are 4 KiB", session=session, grant=agent_grant())
    own_id = own["judgment_id"]
    events = event_count(engine)
    with pytest.raises(OwnerTurnRequiredError) as info:
        engine.dispatch(
            "memory.update_outcome",
            {"id": decision, "outcome": "It failed"},
            session,
            agent_grant(),
        )
    assert info.value.details["ids"] == [decision]
    for src, dst in ((own_id, decision), (decision, own_id)):
        with pytest.raises(OwnerTurnRequiredError):
            engine.dispatch(
                "memory.link",
                {"src": src, "dst": dst, "kind": "contradicts"},
                session,
                agent_grant(),
            )
    assert event_count(engine) == events
    assert _record(engine, decision)["outcome"] is None

    # Positive controls: on its own records the same turn may do both.
    other = save(engine, "Page size is configurable", session=session, grant=agent_grant())
    engine.dispatch(
        "memory.update_outcome", {"id": own_id, "outcome": "confirmed"}, session, agent_grant()
    )
    link = engine.dispatch(
        "memory.link",
        {"src": other["judgment_id"], "dst": own_id, "kind": "refines"},
        session,
        agent_grant(),
    )
    assert link["edge_id"] >= 1
    assert _record(engine, own_id)["outcome"] == "confirmed"


def test_an_agent_answering_the_owner_proposes_outcomes_and_links(engine: Engine) -> None:
    decision = save(engine, "Adopt SQLCipher for storage", "decision")["judgment_id"]
    evidence = save(engine, "Benchmarks are fine", session=AGENT, grant=agent_grant())
    outcome = engine.dispatch(
        "memory.update_outcome",
        {"id": decision, "outcome": "Worked well for a year"},
        AGENT,
        agent_grant(),
    )
    assert outcome["proposed"] is True
    assert _record(engine, decision)["outcome"] is None
    engine.dispatch("review.approve", {"id": decision}, OWNER, OWNER_GRANT)
    assert _record(engine, decision)["outcome"] == "Worked well for a year"

    link = engine.dispatch(
        "memory.link",
        {"src": evidence["judgment_id"], "dst": decision, "kind": "builds_on"},
        AGENT,
        agent_grant(),
    )
    assert link["proposed"] is True
    edges = "SELECT count(*) FROM edges WHERE kind = 'builds_on'"
    assert engine.store.conn.execute(edges).fetchone()[0] == 0
    approved = engine.dispatch("review.approve", {"id": decision}, OWNER, OWNER_GRANT)
    assert approved["edge_id"] >= 1
    assert engine.store.conn.execute(edges).fetchone()[0] == 1


def test_a_source_turn_fact_is_never_guidance_and_its_guidance_waits(engine: Engine) -> None:
    fact = save(engine, "Customers want dark mode", session=SOURCE_TURN_AGENT, grant=agent_grant())
    rule = save(
        engine,
        "Always ship dark mode first",
        "preference",
        session=SOURCE_TURN_AGENT,
        grant=agent_grant(),
    )
    assert _record(engine, fact["judgment_id"])["involvement"] == "source_derived"
    assert rule["status"] == "proposed"
    assert render_index(engine.store.conn, ["global"]).shown_ids == ()
    engine.dispatch("review.approve", {"id": rule["judgment_id"]}, OWNER, OWNER_GRANT)
    assert render_index(engine.store.conn, ["global"]).shown_ids == (rule["judgment_id"],)


def test_purging_the_record_erases_the_words_of_changes_proposed_to_it(engine: Engine) -> None:
    decision = save(engine, "Adopt SQLCipher for storage", "decision")["judgment_id"]
    kept = save(engine, "Adopt FTS5 for search", "decision")["judgment_id"]
    for target, words in ((decision, "quokkafied"), (kept, "wombatique")):
        engine.dispatch(
            "memory.update_outcome",
            {"id": target, "outcome": f"it went {words}", "reason": f"{words} review"},
            AGENT,
            agent_grant(),
        )
    engine.dispatch("memory.purge", {"id": decision, "reason": "forget it"}, OWNER, OWNER_GRANT)
    rows = engine.store.conn.execute(
        "SELECT judgment_id, payload, state FROM change_proposals ORDER BY id"
    ).fetchall()
    by_target = {r[0]: (r[1], r[2]) for r in rows}
    assert "quokkafied" not in by_target[decision][0]
    assert by_target[decision][1] == "rejected"  # nothing is left to decide on
    assert "wombatique" in by_target[kept][0]  # the control: another record's change stays
    assert by_target[kept][1] == "pending"


def test_the_owners_approval_keeps_its_reason_beside_the_event(engine: Engine) -> None:
    """An approval may say why; a change's own reason (the proposer's) stays its own."""
    rule = save(engine, "Never deploy on Fridays", "constraint")["judgment_id"]
    _retire(engine, rule, MCP_CLIENT)
    engine.dispatch(
        "review.approve", {"id": rule, "reason": "agreed at the retro"}, OWNER, OWNER_GRANT
    )
    last = _events(engine, rule)[-1]
    assert last["action"] == "review.approve"
    assert last["payload"]["reason"] == "the team ships daily now"
    assert last["payload"]["approval_reason"] == "agreed at the retro"
    proposal = save(engine, "Prefer small PRs", "preference", session=AGENT, grant=agent_grant())
    pid = proposal["judgment_id"]
    engine.dispatch("review.approve", {"id": pid, "reason": "yes, always"}, OWNER, OWNER_GRANT)
    assert _events(engine, pid)[-1]["payload"]["reason"] == "yes, always"
    # Positive control of the absence: an approval without a reason keeps none.
    other = save(engine, "Prefer rebases", "preference", session=AGENT, grant=agent_grant())
    engine.dispatch("review.approve", {"id": other["judgment_id"]}, OWNER, OWNER_GRANT)
    assert "reason" not in _events(engine, other["judgment_id"])[-1]["payload"]
