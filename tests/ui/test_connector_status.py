"""The tray's status line names each connector's health, a problem first."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from app.connectors.base import PartProblem, Problem
from app.durable.connector_store import Health
from app.serve.host import HostStatus
from ui.agent_control import status_line
from ui.settings.connectors_page import _problem  # pyright: ignore[reportPrivateUsage]


def health(
    name: str, state: str, items: int = 0, code: str | None = None, error: str | None = None
) -> Health:
    return Health(
        name=name,
        kind="trello",
        state=state,
        owner_paused=state == "paused",
        last_poll_at=datetime(2026, 11, 30, tzinfo=UTC),
        last_ok_at=None,
        items_stored=items,
        failures=0,
        last_error_code=code,
        last_error=error,
        next_poll_at=None,
        blocked_settings=None,
    )


def test_the_status_line_shows_connectors_problems_first() -> None:
    base = HostStatus(backend="command", telegram="off (no bot token)", owner=None, paused=False)
    assert "Sources" not in status_line(base)  # control: no connectors, no words about them
    status = HostStatus(
        backend="command",
        telegram="off (no bot token)",
        owner=None,
        paused=False,
        connectors=(
            health("roadmap", "ok", 120),
            health("ops", "blocked", code="invalid_auth"),
            health("old", "paused"),
        ),
    )
    assert status_line(status).endswith(
        " · Sources: ops needs you (invalid_auth), roadmap 120 items, old paused"
    )


def test_a_source_the_owner_must_fix_is_trouble_one_that_retries_is_not() -> None:
    retrying = HostStatus(
        backend="command",
        telegram="off (no bot token)",
        owner=None,
        paused=False,
        connectors=(health("roadmap", "failing", code="unavailable", error="Trello 502"),),
    )
    assert retrying.problem is None  # control: a network error mends itself
    blocked = HostStatus(
        backend="command",
        telegram="off (no bot token)",
        owner=None,
        paused=False,
        connectors=(
            health("roadmap", "ok", 3),
            health("ops", "blocked", code="invalid_auth", error="Slack refused the token."),
        ),
    )
    assert blocked.problem == "The source ops needs you: Slack refused the token."
    agent_first = HostStatus(
        backend="command",
        telegram="off (no bot token)",
        owner=None,
        paused=False,
        backend_problem="Claude Code is not installed.",
        connectors=blocked.connectors,
    )
    assert agent_first.problem == "Claude Code is not installed."


def test_a_broken_channel_is_its_own_problem_beside_the_parts_that_flow() -> None:
    gone = PartProblem("#alpha", Problem.NOT_FOUND, "Slack channel #alpha not found")
    whole = health("work", "ok", 12)
    partly = dataclasses.replace(whole, kind="slack", parts=(gone,))
    base = {"backend": "command", "telegram": "off (no bot token)", "owner": None, "paused": False}
    fine = HostStatus(**base, connectors=(health("roadmap", "ok", 3), whole))
    assert fine.problem is None and _problem(whole) == ""  # control: nothing broken
    status = HostStatus(**base, connectors=(health("roadmap", "ok", 3), partly))
    assert status.problem == ("The source work cannot read #alpha: Slack channel #alpha not found")
    assert status_line(status).endswith(
        " · Sources: work cannot read #alpha (needs you), roadmap 3 items"
    )
    assert _problem(partly) == "#alpha not_found: Slack channel #alpha not found"


def test_a_turn_waiting_for_the_agents_tools_is_said_in_the_line_not_as_trouble() -> None:
    base = {"backend": "claude-code", "telegram": "off (no bot token)", "owner": None}
    fine = HostStatus(**base, paused=False)
    assert "waiting for its tools" not in status_line(fine)  # control
    waiting = HostStatus(**base, paused=False, tools_problem="Claude Code could not reach …")
    assert "(waiting for its tools; the turn will be tried again)" in status_line(waiting)
    assert waiting.problem is None  # it mends itself: not the tray's trouble state
