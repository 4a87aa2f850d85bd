"""Review states and involvement follow from who wrote a judgment and in which turn:
agent guidance is proposed until the owner approves or rejects it."""

from __future__ import annotations

import pytest

from mama_core.memory import Engine, InvalidInputError, InvalidTransitionError, NotGrantedError
from tests.mama_core.memory.helpers import (
    AGENT,
    MCP_CLIENT,
    OWNER,
    OWNER_GRANT,
    SOURCE_TURN_AGENT,
    agent_grant,
    save,
    search_ids,
)

GUIDANCE = ("preference", "constraint", "lesson", "workflow")
OTHER = ("decision", "fact", "task", "schedule")


def _involvement(engine: Engine, judgment_id: int) -> str:
    read = engine.dispatch("memory.read", {"id": judgment_id}, OWNER, OWNER_GRANT)
    return read["record"]["involvement"]


@pytest.mark.parametrize("kind", GUIDANCE)
def test_agent_guidance_is_proposed_owner_guidance_active(engine: Engine, kind: str) -> None:
    by_agent = save(engine, f"agent {kind}", kind, session=AGENT, grant=agent_grant())
    by_mcp = save(engine, f"mcp {kind}", kind, session=MCP_CLIENT, grant=agent_grant())
    by_owner = save(engine, f"owner {kind}", kind)
    assert by_agent["status"] == "proposed"
    assert by_mcp["status"] == "proposed"
    assert by_owner["status"] == "active"
    assert _involvement(engine, by_agent["judgment_id"]) == "agent_inferred"
    assert _involvement(engine, by_mcp["judgment_id"]) == "agent_inferred"
    assert _involvement(engine, by_owner["judgment_id"]) == "owner_stated"


@pytest.mark.parametrize("kind", OTHER)
def test_other_kinds_by_agents_are_active(engine: Engine, kind: str) -> None:
    """An agent answering the owner records other kinds as beliefs; what a source says is a
    claim: the same save in a source-delta turn waits for the owner (``proposed``)."""
    receipt = save(engine, f"agent {kind}", kind, session=AGENT, grant=agent_grant())
    assert receipt["status"] == "active"
    source = save(engine, f"source {kind}", kind, session=SOURCE_TURN_AGENT, grant=agent_grant())
    assert source["status"] == "proposed"
    assert _involvement(engine, source["judgment_id"]) == "source_derived"


def test_approve_makes_it_active_and_owner_approved(engine: Engine) -> None:
    proposal = save(
        engine, "Prefer pytest fixtures", "preference", session=AGENT, grant=agent_grant()
    )
    assert search_ids(engine, "fixtures") == []
    approved = engine.dispatch(
        "review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT
    )
    assert approved["status"] == "active"
    assert _involvement(engine, proposal["judgment_id"]) == "owner_approved"
    assert search_ids(engine, "fixtures") == [proposal["judgment_id"]]
    with pytest.raises(InvalidTransitionError):
        engine.dispatch("review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)


def test_reject_keeps_the_reason(engine: Engine) -> None:
    proposal = save(
        engine, "Prefer mocks everywhere", "preference", session=AGENT, grant=agent_grant()
    )
    rejected = engine.dispatch(
        "review.reject",
        {"id": proposal["judgment_id"], "reason": "we test for real"},
        OWNER,
        OWNER_GRANT,
    )
    assert rejected["status"] == "rejected"
    events = engine.dispatch("memory.read", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)[
        "events"
    ]
    assert events[-1]["action"] == "review.reject"
    assert events[-1]["payload"]["reason"] == "we test for real"
    with pytest.raises(InvalidTransitionError):
        engine.dispatch("review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)


def test_agent_revision_does_not_retire_the_owner_rule_until_approved(engine: Engine) -> None:
    rule = save(engine, "Deploy with blue green", "constraint")["judgment_id"]
    revision = save(
        engine,
        "Deploy with canary releases",
        "constraint",
        replaces=[rule],
        session=AGENT,
        grant=agent_grant(),
    )
    assert revision["status"] == "proposed"
    assert search_ids(engine, "deploy") == [rule]

    def relations() -> list[tuple[int, str]]:
        read = engine.dispatch("memory.read", {"id": revision["judgment_id"]}, OWNER, OWNER_GRANT)
        return [(h["id"], h["relation"]) for h in read["history"]]

    assert relations() == [(rule, "proposed_replacement")]
    engine.dispatch("review.approve", {"id": revision["judgment_id"]}, OWNER, OWNER_GRANT)
    assert search_ids(engine, "deploy") == [revision["judgment_id"]]
    assert relations() == [(rule, "replaced")]
    old = engine.dispatch("memory.read", {"id": rule}, OWNER, OWNER_GRANT)["record"]
    assert old["status"] == "superseded"
    assert old["superseded_by"] == revision["judgment_id"]


def test_agent_fact_replacing_an_owner_record_waits_for_review(engine: Engine) -> None:
    owner_fact = save(engine, "The office is in Berlin")["judgment_id"]
    agent_fact = save(
        engine,
        "The office is in Munich",
        replaces=[owner_fact],
        session=AGENT,
        grant=agent_grant(),
    )
    assert agent_fact["status"] == "proposed"
    assert search_ids(engine, "office") == [owner_fact]


def test_rejecting_a_revision_leaves_the_rule_in_force(engine: Engine) -> None:
    rule = save(engine, "Review every pull request", "constraint")["judgment_id"]
    revision = save(
        engine,
        "Skip reviews for typos",
        "constraint",
        replaces=[rule],
        session=AGENT,
        grant=agent_grant(),
    )
    engine.dispatch(
        "review.reject", {"id": revision["judgment_id"], "reason": "no"}, OWNER, OWNER_GRANT
    )
    assert search_ids(engine, "review reviews") == [rule]


def test_review_verbs_are_the_owners(engine: Engine) -> None:
    proposal = save(engine, "Prefer tabs", "preference", session=AGENT, grant=agent_grant())
    for action, payload in (
        ("review.approve", {"id": proposal["judgment_id"]}),
        ("review.reject", {"id": proposal["judgment_id"], "reason": "no"}),
    ):
        with pytest.raises(NotGrantedError):
            engine.dispatch(action, payload, AGENT, agent_grant())
        with pytest.raises(NotGrantedError):  # even handed the owner's grant
            engine.dispatch(action, payload, AGENT, OWNER_GRANT)


def test_guidance_shape_is_required(engine: Engine) -> None:
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch(
            "memory.save", {"kind": "preference", "summary": "Use tabs"}, OWNER, OWNER_GRANT
        )
    assert "applies_when" in info.value.message
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch(
            "memory.save",
            {"kind": "workflow", "summary": "Release", "applies_when": "releasing"},
            OWNER,
            OWNER_GRANT,
        )
    assert "step" in info.value.message
    ok = engine.dispatch(
        "memory.save",
        {
            "kind": "workflow",
            "summary": "Release",
            "applies_when": "releasing",
            "steps": ["tag", "build", "upload"],
        },
        OWNER,
        OWNER_GRANT,
    )
    read = engine.dispatch("memory.read", {"id": ok["judgment_id"]}, OWNER, OWNER_GRANT)
    assert read["record"]["steps"] == ["tag", "build", "upload"]


def test_a_linked_supersedes_edge_does_not_replace_on_approval(engine: Engine) -> None:
    rule = save(engine, "Standups are daily", "constraint")["judgment_id"]
    proposal = save(
        engine, "Standups are weekly", "constraint", session=SOURCE_TURN_AGENT, grant=agent_grant()
    )
    engine.dispatch(
        "memory.link",
        {"src": proposal["judgment_id"], "dst": rule, "kind": "supersedes"},
        OWNER,
        OWNER_GRANT,
    )
    engine.dispatch("review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)
    assert set(search_ids(engine, "standups")) == {rule, proposal["judgment_id"]}
    read = engine.dispatch("memory.read", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)
    assert read["history"] == []
