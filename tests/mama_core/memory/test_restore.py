"""memory.restore: the owner takes back a reject, an approve or a retire. Each is one
appended owner action (one event) whose new record keeps the original's words and
provenance and lands in the state the original had before: a proposal stays the
agent's and waits for review again; a retired record is believed again."""

from __future__ import annotations

from typing import Any

import pytest

from mama_core.memory import (
    Engine,
    Grant,
    InvalidTransitionError,
    NotGrantedError,
    TombstonedError,
    verify_store,
)
from tests.mama_core.memory.helpers import (
    AGENT,
    MCP_CLIENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    event_count,
    save,
    search_ids,
)

REASON = "undone by the owner"


def restore(engine: Engine, judgment_id: int, **fields: Any) -> dict[str, Any]:
    session = fields.pop("session", OWNER)
    grant = fields.pop("grant", OWNER_GRANT)
    payload = {"id": judgment_id, "reason": REASON, **fields}
    return engine.dispatch("memory.restore", payload, session, grant)


def record(engine: Engine, judgment_id: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": judgment_id}, OWNER, OWNER_GRANT)["record"]


def last_event(engine: Engine) -> tuple[str, str, int]:
    action, actor, judgment_id = engine.store.conn.execute(
        "SELECT action, json_extract(actor, '$.kind'), judgment_id FROM events "
        "ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return str(action), str(actor), int(judgment_id)


def proposed_ids(engine: Engine, query: str) -> list[int]:
    return search_ids(engine, query, statuses=["proposed"])


def assert_verifies(engine: Engine) -> None:
    report = verify_store(engine.store.conn, engine.store.secret)
    assert report.ok, report.problems


def agent_proposal(engine: Engine, summary: str) -> int:
    receipt = save(engine, summary, "preference", session=AGENT, grant=agent_grant())
    assert receipt["status"] == "proposed"
    return int(receipt["judgment_id"])


def test_undoing_a_reject_brings_the_agents_proposal_back_to_review(engine: Engine) -> None:
    proposal = agent_proposal(engine, "Answer in short paragraphs")
    rejected = engine.dispatch(
        "review.reject",
        {"id": proposal, "reason": "too terse", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    assert proposed_ids(engine, "short paragraphs") == []
    events = event_count(engine)

    receipt = restore(engine, proposal)

    copy = int(receipt["judgment_id"])
    assert copy != proposal and receipt["status"] == "proposed"
    assert event_count(engine) == events + 1
    assert last_event(engine) == ("memory.restore", "owner", copy)
    assert receipt["restored_from"] == proposal
    assert receipt["lifted_tombstones"] == [rejected["tombstone_id"]]
    original, restored = record(engine, proposal), record(engine, copy)
    assert original["status"] == "rejected"  # the reject stays in the history
    # Still the agent's proposal: same words, same provenance, not the owner's.
    assert restored["provenance"] == original["provenance"]
    assert restored["provenance"]["actor_kind"] == "agent"
    assert restored["involvement"] == "agent_inferred"
    assert (restored["summary"], restored["applies_when"]) == (
        original["summary"],
        original["applies_when"],
    )
    assert proposed_ids(engine, "short paragraphs") == [copy]
    assert search_ids(engine, "short paragraphs") == []  # not believed before review
    assert_verifies(engine)
    # The owner's review of it works as for any proposal.
    approved = engine.dispatch("review.approve", {"id": copy}, OWNER, OWNER_GRANT)
    assert approved["status"] == "active"
    assert record(engine, copy)["involvement"] == "owner_approved"
    assert_verifies(engine)


def test_undoing_an_approve_takes_it_out_of_belief_and_back_to_review(engine: Engine) -> None:
    proposal = agent_proposal(engine, "Use metric units in reports")
    other = agent_proposal(engine, "Prefer tables over lists")
    engine.dispatch("review.approve", {"id": proposal}, OWNER, OWNER_GRANT)
    assert search_ids(engine, "metric units") == [proposal]
    events = event_count(engine)

    receipt = restore(engine, proposal)

    copy = int(receipt["judgment_id"])
    assert receipt["status"] == "proposed"
    assert event_count(engine) == events + 1
    assert last_event(engine) == ("memory.restore", "owner", copy)
    original, restored = record(engine, proposal), record(engine, copy)
    assert original["status"] == "superseded" and original["superseded_by"] == copy
    assert original["valid_until"] == original["valid_from"]  # it never held
    assert restored["involvement"] == "agent_inferred"  # the approval is taken back
    assert restored["provenance"] == original["provenance"]
    assert restored["valid_from"] == original["valid_from"]
    assert search_ids(engine, "metric units") == []
    assert proposed_ids(engine, "metric units") == [copy]
    assert record(engine, other)["status"] == "proposed"  # control: untouched
    assert_verifies(engine)


def test_undoing_a_retire_makes_it_active_again_with_its_provenance(engine: Engine) -> None:
    fact = int(
        save(engine, "The staging host is build-02", session=AGENT, grant=agent_grant())[
            "judgment_id"
        ]
    )
    rule = int(save(engine, "Never deploy on Fridays", "constraint")["judgment_id"])
    engine.dispatch(
        "memory.retire",
        {"id": fact, "reason": "moved", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    engine.dispatch("memory.retire", {"id": rule, "reason": "we deploy daily"}, OWNER, OWNER_GRANT)
    events = event_count(engine)

    receipt = restore(engine, fact)

    copy = int(receipt["judgment_id"])
    assert receipt["status"] == "active" and len(receipt["lifted_tombstones"]) == 1
    assert event_count(engine) == events + 1
    assert last_event(engine) == ("memory.restore", "owner", copy)
    original, restored = record(engine, fact), record(engine, copy)
    assert original["status"] == "stale"
    # Who said it, in which turn and message, is kept: not turned into the owner's.
    assert restored["provenance"] == original["provenance"]
    assert restored["provenance"]["message_ref"] == "tg:42"
    assert restored["involvement"] == original["involvement"] == "agent_inferred"
    assert restored["valid_from"] == original["valid_until"]  # holds on from there
    assert search_ids(engine, "staging host") == [copy]
    # The owner's own rule comes back as the owner's.
    restored_rule = restore(engine, rule)
    assert restored_rule["status"] == "active" and restored_rule["lifted_tombstones"] == []
    assert record(engine, restored_rule["judgment_id"])["involvement"] == "owner_stated"
    assert_verifies(engine)


def test_only_the_owner_restores(engine: Engine) -> None:
    proposal = agent_proposal(engine, "Answer in short paragraphs")
    engine.dispatch("review.reject", {"id": proposal, "reason": "no"}, OWNER, OWNER_GRANT)
    events = event_count(engine)

    with pytest.raises(NotGrantedError) as by_agent:
        restore(engine, proposal, session=AGENT, grant=agent_grant())
    with pytest.raises(NotGrantedError) as by_mcp:  # even holding every verb
        restore(engine, proposal, session=MCP_CLIENT, grant=Grant.owner())
    assert by_agent.value.code == by_mcp.value.code == "not_granted"
    assert "owner's alone" in str(by_mcp.value)
    assert event_count(engine) == events  # nothing written
    assert "memory.restore" not in agent_grant().actions

    receipt = restore(engine, proposal)  # control: the owner's own call succeeds
    assert receipt["status"] == "proposed"


def test_what_cannot_be_restored_is_refused_with_a_reason(engine: Engine) -> None:
    stated = int(save(engine, "We ship on Tuesdays", "decision")["judgment_id"])
    waiting = agent_proposal(engine, "Answer in short paragraphs")
    rejected = agent_proposal(engine, "Write longer commit messages")
    engine.dispatch("review.reject", {"id": rejected, "reason": "no"}, OWNER, OWNER_GRANT)
    events = event_count(engine)

    for judgment_id, status in ((stated, "active"), (waiting, "proposed")):
        with pytest.raises(InvalidTransitionError) as refused:
            restore(engine, judgment_id)
        assert refused.value.code == "invalid_transition"
        assert refused.value.details["status"] == status
        assert "only a rejected, approved or retired record" in str(refused.value)
    assert event_count(engine) == events

    copy = restore(engine, rejected)["judgment_id"]  # control: restorable once
    with pytest.raises(InvalidTransitionError) as again:
        restore(engine, rejected)
    assert again.value.details["restored_as"] == copy
    assert f"already restored as #{copy}" in str(again.value)


def test_undoing_an_approve_that_replaced_the_owners_rule_brings_the_rule_back(
    engine: Engine,
) -> None:
    rule = int(save(engine, "Use tabs", "preference")["judgment_id"])
    revision = save(
        engine, "Use four spaces", "preference", session=AGENT, grant=agent_grant(), replaces=[rule]
    )["judgment_id"]
    engine.dispatch("review.approve", {"id": revision}, OWNER, OWNER_GRANT)
    assert record(engine, rule)["status"] == "superseded"
    events = event_count(engine)

    receipt = restore(engine, revision)

    copy = int(receipt["judgment_id"])
    (rule_copy,) = (int(k) for k in receipt["also_restored"])
    assert receipt["also_restored"] == {str(rule_copy): rule}
    assert event_count(engine) == events + 1  # one owner action for both
    assert record(engine, copy)["status"] == "proposed"
    # The owner's rule is believed again, still the owner's, holding on from where it
    # was replaced; the agent's revision waits for review again.
    restored_rule, old_rule = record(engine, rule_copy), record(engine, rule)
    assert restored_rule["status"] == "active"
    assert restored_rule["involvement"] == "owner_stated"
    assert restored_rule["provenance"] == old_rule["provenance"]
    assert restored_rule["valid_from"] == old_rule["valid_until"]
    assert search_ids(engine, "tabs") == [rule_copy]
    assert proposed_ids(engine, "four spaces") == [copy]
    assert_verifies(engine)
    # Approving the revision again replaces the rule again, as the first approval did.
    approved = engine.dispatch("review.approve", {"id": copy}, OWNER, OWNER_GRANT)
    assert approved["status"] == "active"
    assert record(engine, rule_copy)["status"] == "superseded"
    assert record(engine, rule_copy)["superseded_by"] == copy
    assert search_ids(engine, "four spaces") == [copy]
    assert_verifies(engine)


def test_verify_still_finds_a_record_no_event_created(engine: Engine) -> None:
    """The restore's second new record is vouched for by its event's ``created`` list;
    a record injected behind the log is still found (a tamper beside the control)."""
    rule = int(save(engine, "Use tabs", "preference")["judgment_id"])
    revision = save(
        engine, "Use four spaces", "preference", session=AGENT, grant=agent_grant(), replaces=[rule]
    )["judgment_id"]
    engine.dispatch("review.approve", {"id": revision}, OWNER, OWNER_GRANT)
    restore(engine, revision)
    assert_verifies(engine)  # control
    conn = engine.store.conn
    conn.execute(
        "INSERT INTO judgments (kind, topic, summary, details, applies_when, steps, confidence, "
        "status, valid_from, recorded_at, provenance, involvement, command_id, content_hash) "
        "SELECT kind, topic, summary, details, applies_when, steps, confidence, status, "
        "valid_from, recorded_at, provenance, involvement, command_id, content_hash "
        "FROM judgments WHERE id = ?",
        (rule,),
    )
    injected = int(conn.execute("SELECT max(id) FROM judgments").fetchone()[0])
    report = verify_store(conn, engine.store.secret)
    assert f"judgment {injected} has no event that created it" in report.problems


def test_another_records_tombstone_still_refuses_it(engine: Engine) -> None:
    proposal = agent_proposal(engine, "Deploy from the release branch")
    engine.dispatch("review.reject", {"id": proposal, "reason": "no"}, OWNER, OWNER_GRANT)
    twin = int(save(engine, "Deploy from the release branch", "preference")["judgment_id"])
    block = engine.dispatch(
        "memory.retire",
        {"id": twin, "reason": "we deploy from main", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    events = event_count(engine)

    with pytest.raises(TombstonedError) as refused:
        restore(engine, proposal)
    assert refused.value.details["tombstone_id"] == block["tombstone_id"]
    assert event_count(engine) == events

    lift = {"tombstone_id": block["tombstone_id"], "reason": "allowed again"}
    engine.dispatch("tombstone.lift", lift, OWNER, OWNER_GRANT)
    assert restore(engine, proposal)["status"] == "proposed"  # control
