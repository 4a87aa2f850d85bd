"""The event history an agent reads (memory.read's events, memory.timeline) names
nothing outside its scopes: no foreign scope names, ids or reasons. The owner,
reading the same events, sees them whole (the positive control)."""

from __future__ import annotations

import json
from typing import Any

from mama_core.memory import Engine, Grant, SessionFacts
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save

FOREIGN_WORDS = ("project:beta", "merger with Initech")


def _setup(engine: Engine) -> dict[str, int]:
    ids: dict[str, int] = {}
    ids["rule"] = save(engine, "Ship on Tuesdays", scopes=["project:alpha"])["judgment_id"]
    ids["shared"] = save(
        engine, "The CI runner is shared", scopes=["project:alpha", "project:beta"]
    )["judgment_id"]
    ids["beta"] = save(
        engine, "Beta ships on Mondays", scopes=["project:beta"], replaces=[ids["rule"]]
    )["judgment_id"]
    ids["beta_note"] = save(engine, "Beta runner notes", scopes=["project:beta"])["judgment_id"]
    engine.dispatch(
        "memory.link",
        {
            "src": ids["beta_note"],
            "dst": ids["shared"],
            "kind": "relates_to",
            "reason": "merger with Initech",
        },
        OWNER,
        OWNER_GRANT,
    )
    ids["alpha_note"] = save(engine, "Alpha runner notes", scopes=["project:alpha"])["judgment_id"]
    engine.dispatch(
        "memory.link",
        {
            "src": ids["alpha_note"],
            "dst": ids["shared"],
            "kind": "relates_to",
            "reason": "alpha uses it nightly",
        },
        OWNER,
        OWNER_GRANT,
    )
    return ids


def _named_ids(events: list[dict[str, Any]]) -> set[int]:
    """Every judgment id the events name (their own event ids left out)."""
    found: set[int] = set()
    for event in events:
        if event["judgment_id"] is not None:
            found.add(event["judgment_id"])
        payload = event["payload"]
        found |= set(payload.get("touched", [])) | set(payload.get("replaces", []))
        for key in ("src", "dst", "by"):
            if isinstance(payload.get(key), int):
                found.add(payload[key])
        for change in payload.get("transitions", []):
            found |= {change[k] for k in ("id", "superseded_by") if change.get(k) is not None}
    return found


def _events(engine: Engine, jid: int, session: SessionFacts, grant: Grant) -> list[dict[str, Any]]:
    return engine.dispatch("memory.read", {"id": jid}, session, grant)["events"]


def test_read_events_name_nothing_foreign(engine: Engine) -> None:
    ids = _setup(engine)
    alpha = agent_grant("project:alpha")
    for jid in (ids["rule"], ids["shared"]):
        owner_view = json.dumps(_events(engine, jid, OWNER, OWNER_GRANT))
        agent_view = json.dumps(_events(engine, jid, AGENT, alpha))
        # Positive control: the owner sees the foreign names in the same events.
        assert "project:beta" in owner_view
        for word in FOREIGN_WORDS:
            assert word not in agent_view
        assert _named_ids(_events(engine, jid, AGENT, alpha)).isdisjoint(
            {ids["beta"], ids["beta_note"]}
        )
        assert ids["beta"] in _named_ids(_events(engine, jid, OWNER, OWNER_GRANT)) or (
            ids["beta_note"] in _named_ids(_events(engine, jid, OWNER, OWNER_GRANT))
        )
    shared = _events(engine, ids["shared"], AGENT, alpha)
    # The save of the shared record keeps the alpha scope, not the beta one.
    assert shared[0]["payload"]["scopes"] == ["project:alpha"]
    # The foreign link is shown, redacted; the alpha link keeps its reason.
    actions = [(e["action"], e["payload"].get("redacted", False)) for e in shared]
    assert ("memory.link", True) in actions and ("memory.link", False) in actions
    alpha_link = next(
        e for e in shared if e["action"] == "memory.link" and "reason" in e["payload"]
    )
    assert alpha_link["payload"]["reason"] == "alpha uses it nightly"
    # The rule's supersession by a beta record shows as a change without its successor.
    rule_events = _events(engine, ids["rule"], AGENT, alpha)
    redacted = [e for e in rule_events if e["payload"].get("redacted")]
    assert redacted and redacted[0]["judgment_id"] is None
    assert redacted[0]["payload"]["transitions"] == [
        {**redacted[0]["payload"]["transitions"][0], "superseded_by": None}
    ]
    assert redacted[0]["payload"]["transitions"][0]["to"] == "superseded"


def test_timeline_events_name_nothing_foreign(engine: Engine) -> None:
    ids = _setup(engine)
    alpha = agent_grant("project:alpha")
    agent_view = engine.dispatch("memory.timeline", {"id": ids["shared"]}, AGENT, alpha)
    owner_view = engine.dispatch("memory.timeline", {"id": ids["shared"]}, OWNER, OWNER_GRANT)
    assert "merger with Initech" in json.dumps(owner_view["events"])
    assert len(agent_view["events"]) == len(owner_view["events"])
    for word in FOREIGN_WORDS:
        assert word not in json.dumps(agent_view)
