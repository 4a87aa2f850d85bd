"""Taint, not trust, for the owner's settings: in an owner's turn that read words the
owner did not write, the agent's owner.set_timezone and owner.set_brief become proposed
changes with its reason (one waiting per setting; a newer one supersedes the older in
its own event), decided by the owner by change id: approve applies it as the owner's
own change, reject leaves the settings as they were. Controls: the same agent in the
owner's plain turn changes them at once; turns the owner did not start stay refused."""

from __future__ import annotations

import pytest

from mama_core.memory import (
    Engine,
    InvalidInputError,
    InvalidTransitionError,
    OwnerTurnRequiredError,
)
from mama_core.memory.proposed_changes import pending_after
from mama_core.memory.verify import verify_store
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    SOURCE_TURN_AGENT,
    agent_grant,
    event_count,
)

TAINTED = AGENT.with_taint("#ops (slack:T1)")


def _settings(engine: Engine) -> dict:
    return engine.dispatch("owner.settings", {}, OWNER, OWNER_GRANT)


def _verified(engine: Engine) -> None:
    reader = engine.store.new_connection()
    try:
        report = verify_store(reader, engine.store.secret)
    finally:
        reader.close()
    assert report.ok, report.problems


def test_a_tainted_turns_timezone_change_waits_and_approve_applies_it(engine: Engine) -> None:
    # Control: the agent answering the owner's plain message changes it at once.
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, AGENT, agent_grant())
    assert _settings(engine)["timezone"] == "Europe/Berlin"

    before = event_count(engine)
    receipt = engine.dispatch(
        "owner.set_timezone",
        {"timezone": "Pacific/Kiritimati", "reason": "Bob's mail says you moved"},
        TAINTED,
        agent_grant(),
    )
    assert receipt["proposed"] is True and receipt["setting"] == "timezone"
    assert event_count(engine) == before + 1  # the proposal is an event of its own
    settings = _settings(engine)
    assert settings["timezone"] == "Europe/Berlin"  # nothing moved yet
    (waiting,) = settings["pending_changes"]
    assert waiting["id"] == receipt["change_id"] and waiting["setting"] == "timezone"
    assert waiting["judgment_id"] is None
    assert waiting["description"] == (
        "set your timezone to Pacific/Kiritimati: Bob's mail says you moved"
    )
    assert waiting["proposed_by"]["tainted"] == "yes"
    # The agent sees the settings, not the owner's review queue.
    assert "pending_changes" not in engine.dispatch("owner.settings", {}, AGENT, agent_grant())
    # The one list of what waits has it, beside changes to records.
    (listed,) = pending_after(engine.store.conn)
    assert (listed.id, listed.setting_key, listed.judgment_id) == (
        receipt["change_id"],
        "timezone",
        None,
    )

    approved = engine.dispatch(
        "review.approve", {"change_id": receipt["change_id"]}, OWNER, OWNER_GRANT
    )
    assert approved["change_id"] == receipt["change_id"]
    assert _settings(engine)["timezone"] == "Pacific/Kiritimati"
    assert _settings(engine)["pending_changes"] == []
    actor = engine.store.conn.execute(
        "SELECT actor FROM events WHERE id = ?", (approved["event_id"],)
    ).fetchone()[0]
    assert '"owner"' in actor  # applied in the owner's own event
    # Decided once: a second approve finds nothing waiting.
    with pytest.raises(InvalidTransitionError):
        engine.dispatch("review.approve", {"change_id": receipt["change_id"]}, OWNER, OWNER_GRANT)
    _verified(engine)


def test_a_newer_brief_proposal_supersedes_the_older_and_reject_keeps_the_brief(
    engine: Engine,
) -> None:
    engine.dispatch("owner.set_brief", {"enabled": True, "time": "07:00"}, OWNER, OWNER_GRANT)
    first = engine.dispatch("owner.set_brief", {"enabled": False}, TAINTED, agent_grant())
    second = engine.dispatch(
        "owner.set_brief", {"time": "03:00", "reason": "the mail asks"}, TAINTED, agent_grant()
    )
    assert second["supersedes_change"] == first["change_id"]
    (waiting,) = _settings(engine)["pending_changes"]
    assert waiting["id"] == second["change_id"]
    assert waiting["description"] == "change the daily brief: at 03:00: the mail asks"
    states = dict(engine.store.conn.execute("SELECT id, state FROM change_proposals").fetchall())
    assert states == {first["change_id"]: "superseded", second["change_id"]: "pending"}
    # The superseded one can no longer be approved (an old card must not apply it) ...
    with pytest.raises(InvalidTransitionError):
        engine.dispatch("review.approve", {"change_id": first["change_id"]}, OWNER, OWNER_GRANT)
    # ... and rejecting the waiting one leaves the brief as the owner set it.
    engine.dispatch(
        "review.reject",
        {"change_id": second["change_id"], "reason": "not from a mail"},
        OWNER,
        OWNER_GRANT,
    )
    brief = _settings(engine)["brief"]
    assert (brief["enabled"], brief["time"]) == (True, "07:00")
    assert _settings(engine)["pending_changes"] == []
    # Positive control on the same path: a brief proposal approved does apply.
    third = engine.dispatch("owner.set_brief", {"enabled": False}, TAINTED, agent_grant())
    engine.dispatch("review.approve", {"change_id": third["change_id"]}, OWNER, OWNER_GRANT)
    brief = _settings(engine)["brief"]
    assert (brief["enabled"], brief["time"]) == (False, "07:00")
    _verified(engine)


def test_turns_the_owner_did_not_start_are_still_refused(engine: Engine) -> None:
    with pytest.raises(OwnerTurnRequiredError):
        engine.dispatch(
            "owner.set_timezone", {"timezone": "Asia/Tokyo"}, SOURCE_TURN_AGENT, agent_grant()
        )
    assert pending_after(engine.store.conn) == []
    # Control: the same call in a tainted owner's turn is proposed, not refused.
    engine.dispatch("owner.set_timezone", {"timezone": "Asia/Tokyo"}, TAINTED, agent_grant())
    assert len(pending_after(engine.store.conn)) == 1


def test_a_settings_decision_names_its_change_and_only_a_settings_one(engine: Engine) -> None:
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch("review.approve", {}, OWNER, OWNER_GRANT)
    assert "change_id" in info.value.message
    # A change to a record is decided with its record's id, not by change id alone.
    meeting = engine.dispatch(
        "memory.save", {"kind": "commitment", "summary": "Meet Bob"}, OWNER, OWNER_GRANT
    )["judgment_id"]
    close = engine.dispatch(
        "commitment.close",
        {"id": meeting, "outcome": "dropped", "reason": "Bob cancelled"},
        TAINTED,
        agent_grant(),
    )
    with pytest.raises(InvalidTransitionError, match=f"record {meeting}"):
        engine.dispatch("review.approve", {"change_id": close["change_id"]}, OWNER, OWNER_GRANT)
    timezone = engine.dispatch("owner.set_timezone", {"timezone": "UTC"}, TAINTED, agent_grant())
    with pytest.raises(InvalidInputError):
        engine.dispatch(
            "review.reject",
            {"change_id": timezone["change_id"], "reason": "no", "forbid_resave": True},
            OWNER,
            OWNER_GRANT,
        )
    # Both wait side by side in the one list; the record's change still decides as before.
    assert {c.id for c in pending_after(engine.store.conn)} == {
        close["change_id"],
        timezone["change_id"],
    }
    engine.dispatch(
        "review.approve", {"id": meeting, "change_id": close["change_id"]}, OWNER, OWNER_GRANT
    )
    assert [c.id for c in pending_after(engine.store.conn)] == [timezone["change_id"]]
    _verified(engine)


def test_the_actions_a_change_may_keep_are_the_ones_the_table_allows(engine: Engine) -> None:
    """The runtime cards what ``CHANGE_ACTIONS`` may leave: the list and the table's
    CHECK must not drift apart (a new proposable action would then go uncarded)."""
    import re

    from mama_core.memory.proposed_changes import CHANGE_ACTIONS

    sql = engine.store.conn.execute(
        "SELECT sql FROM sqlite_schema WHERE name = 'change_proposals'"
    ).fetchone()[0]
    check = sql[sql.index("action") : sql.index("judgment_id")]
    assert set(re.findall(r"'([a-z_]+\.[a-z_]+)'", check)) == CHANGE_ACTIONS
