"""The owner's timezone and daily brief: read by anyone granted, changed only by the owner
or an agent in a turn the owner started, each change one appended row and one event."""

from __future__ import annotations

import pytest

from mama_core.memory import Engine, InvalidInputError, OwnerTurnRequiredError, SessionFacts
from mama_core.memory.verify import verify_store
from mama_core.store import sqlcipher
from tests.mama_core.memory.helpers import (
    AGENT,
    MCP_CLIENT,
    OWNER,
    OWNER_GRANT,
    SCHEDULED_AGENT,
    SOURCE_TURN_AGENT,
    agent_grant,
    event_count,
)

NON_OWNER_TURNS = (SOURCE_TURN_AGENT, SCHEDULED_AGENT, MCP_CLIENT)


def _settings(engine: Engine) -> dict:
    return engine.dispatch("owner.settings", {}, AGENT, agent_grant())


def test_until_set_there_is_no_timezone_and_the_brief_is_off(engine: Engine) -> None:
    assert _settings(engine) == {
        "timezone": None,
        "brief": {
            "enabled": False,
            "days": ["mon", "tue", "wed", "thu", "fri"],
            "time": "08:30",
            "covers": ["observations", "commitments", "proposals"],
        },
    }


def test_the_owner_sets_both_each_change_one_event_and_verify_passes(engine: Engine) -> None:
    before = event_count(engine)
    receipt = engine.dispatch(
        "owner.set_timezone", {"timezone": "Europe/Berlin"}, OWNER, OWNER_GRANT
    )
    assert receipt["settings"]["timezone"] == "Europe/Berlin"
    engine.dispatch(
        "owner.set_brief",
        {"enabled": True, "days": ["fri", "mon", "mon"], "time": "07:45"},
        OWNER,
        OWNER_GRANT,
    )
    assert event_count(engine) == before + 2
    settings = _settings(engine)
    assert settings["timezone"] == "Europe/Berlin"
    assert settings["brief"] == {
        "enabled": True,
        "days": ["mon", "fri"],
        "time": "07:45",
        "covers": ["observations", "commitments", "proposals"],
    }
    # A later partial change keeps what it does not name; the earlier rows stay.
    engine.dispatch("owner.set_brief", {"covers": ["commitments"]}, OWNER, OWNER_GRANT)
    assert _settings(engine)["brief"]["time"] == "07:45"
    assert _settings(engine)["brief"]["covers"] == ["commitments"]
    rows = engine.store.conn.execute("SELECT key FROM owner_settings ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["timezone", "brief", "brief"]
    reader = engine.store.new_connection()
    try:
        assert verify_store(reader, engine.store.secret).ok
    finally:
        reader.close()


@pytest.mark.parametrize("session", NON_OWNER_TURNS, ids=["source_delta", "scheduled", "mcp"])
def test_outside_an_owner_turn_settings_changes_are_refused(
    engine: Engine, session: SessionFacts
) -> None:
    # Positive control: an agent in a turn the owner started may change both.
    engine.dispatch("owner.set_timezone", {"timezone": "Asia/Tokyo"}, AGENT, agent_grant())
    engine.dispatch("owner.set_brief", {"enabled": True}, AGENT, agent_grant())
    assert _settings(engine)["timezone"] == "Asia/Tokyo"
    assert _settings(engine)["brief"]["enabled"] is True

    before = event_count(engine)
    for action, payload in (
        ("owner.set_timezone", {"timezone": "America/New_York"}),
        ("owner.set_brief", {"enabled": False, "time": "03:00"}),
    ):
        with pytest.raises(OwnerTurnRequiredError) as info:
            engine.dispatch(action, payload, session, agent_grant())
        assert info.value.code == "owner_turn_required"
        assert info.value.details == {"action": action, "turn": session.turn.value}
    assert event_count(engine) == before
    assert _settings(engine)["timezone"] == "Asia/Tokyo"
    assert _settings(engine)["brief"]["enabled"] is True
    # Reading them stays open to the same caller.
    seen = engine.dispatch("owner.settings", {}, session, agent_grant())
    assert seen["timezone"] == "Asia/Tokyo"


@pytest.mark.parametrize(
    ("action", "payload", "field"),
    [
        ("owner.set_timezone", {"timezone": "Mars/Olympus"}, "timezone"),
        ("owner.set_timezone", {"timezone": "../../etc/passwd"}, "timezone"),
        ("owner.set_brief", {"time": "25:00"}, "time"),
        ("owner.set_brief", {"time": "8:30"}, "time"),
        ("owner.set_brief", {"days": ["monday"]}, "days.0"),
        ("owner.set_brief", {"covers": ["weather"]}, "covers.0"),
    ],
)
def test_bad_settings_are_invalid_input_naming_the_field(
    engine: Engine, action: str, payload: dict, field: str
) -> None:
    before = event_count(engine)
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch(action, payload, OWNER, OWNER_GRANT)
    assert field in info.value.details["fields"]
    assert event_count(engine) == before
    # Positive control: a good value on the same path is taken.
    good = {"timezone": "UTC"} if action == "owner.set_timezone" else {"time": "06:00"}
    engine.dispatch(action, good, OWNER, OWNER_GRANT)
    assert event_count(engine) == before + 1


def test_setting_rows_are_append_only(engine: Engine) -> None:
    engine.dispatch("owner.set_timezone", {"timezone": "UTC"}, OWNER, OWNER_GRANT)
    for sql in ("UPDATE owner_settings SET value = '\"Asia/Tokyo\"'", "DELETE FROM owner_settings"):
        with pytest.raises(sqlcipher.Error):
            engine.store.conn.execute(sql)
    assert _settings(engine)["timezone"] == "UTC"
