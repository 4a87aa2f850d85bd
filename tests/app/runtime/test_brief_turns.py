"""The daily brief through the real runtime: posted by the schedule, written by MAMA in
command mode (and when the agent cannot run), asked of the agent otherwise — whose
scheduled turn may only propose guidance and may not touch the owner's settings."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from app.backends.base import BackendUnavailableError, TurnReply, TurnRequest
from app.backends.command_mode import CommandModeBackend
from app.backends.toolbox import ToolBox, ToolSpec
from app.durable.connector_store import ConnectorStore
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.runtime.schedule import BriefSchedule, OwnerSchedule
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.memory.owner_settings import BriefSettings
from mama_core.store import Store
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import ManualClock, RecordingChannel, ScriptedAgent

SETTINGS = RuntimeSettings(poll_seconds=5.0, send_retry_delays=(0.01,))
BERLIN = ZoneInfo("Europe/Berlin")
SCHEDULE = OwnerSchedule(BriefSettings(enabled=True, time="08:30"), BERLIN)
OWNER = SessionFacts.owner_cli()


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 12, day, hour, minute, tzinfo=BERLIN).astimezone(UTC)


def briefs(channel: RecordingChannel) -> list[str]:
    return [m.text for m in channel.sent if m.text.startswith("Your brief for")]


def run(
    engine: Engine,
    store: Store,
    backend: Any,
    clock: ManualClock,
    scenario: Callable[[OwnerRuntime, RecordingChannel, BriefSchedule], Awaitable[None]],
) -> None:
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, OWNER, Grant.owner())
    engine.dispatch("owner.set_brief", {"enabled": True}, OWNER, Grant.owner())

    async def main() -> None:
        runtime = OwnerRuntime(engine, store, backend, SETTINGS, clock)
        channel = RecordingChannel()
        runtime.attach_channel(channel)
        await runtime.start()
        schedule = BriefSchedule(runtime.db, runtime.mailbox, clock)
        try:
            await runtime.run_db(schedule.tick, SCHEDULE)  # arms
            await scenario(runtime, channel, schedule)
        finally:
            await runtime.stop()

    asyncio.run(main())


async def due(runtime: OwnerRuntime, schedule: BriefSchedule, clock: ManualClock, when: datetime):
    clock.current = when
    posted = await runtime.run_db(schedule.tick, SCHEDULE)
    assert posted is not None
    runtime.wake()


def test_command_mode_sends_the_brief_and_the_next_one_counts_from_it(
    engine: Engine, store: Store
) -> None:
    clock = ManualClock(at(1, 7, 0))

    async def scenario(
        runtime: OwnerRuntime, channel: RecordingChannel, schedule: BriefSchedule
    ) -> None:
        connector = ConnectorStore(runtime.db, clock)
        await runtime.run_db(
            connector.store_batch, "work-trello", "trello", batch(item(1), item(2), item(3))
        )
        await runtime.run_db(
            connector.store_batch,
            "work-trello",
            "trello",
            batch(item(4, channel="Hiring", scope="project:trello/Hiring")),
        )
        proposal = engine.dispatch(
            "memory.save",
            {"kind": "preference", "summary": "Brief me in English", "applies_when": "always"},
            SessionFacts(actor_kind=ActorKind.AGENT, actor_name="x", turn=TurnKind.SOURCE_DELTA),
            Grant.agent(["global"]),
        )
        assert proposal["status"] == "proposed"

        await due(runtime, schedule, clock, at(1, 8, 30))
        await channel.signal.until(lambda: len(briefs(channel)) == 1)
        assert briefs(channel)[0].splitlines() == [
            "Your brief for Tue 1 Dec 2026, 08:30 (Europe/Berlin)",
            "",
            "From your connectors so far:",
            "• trello:me: 4 new (Roadmap 3, Hiring 1)",
            "",
            "Commitments: nothing overdue, nothing due today, nothing new to confirm.",
            "",
            "Waiting for your review (1):",
            f"• #{proposal['judgment_id']} preference: Brief me in English",
        ]

        await runtime.run_db(
            connector.store_batch, "work-trello", "trello", batch(item(5), item(6))
        )
        await due(runtime, schedule, clock, at(2, 8, 30))
        await channel.signal.until(lambda: len(briefs(channel)) == 2)
        second = briefs(channel)[1].splitlines()
        assert second[:4] == [
            "Your brief for Wed 2 Dec 2026, 08:30 (Europe/Berlin)",
            "",
            "New from your connectors since the last brief (Tue 1 Dec 08:30):",
            "• trello:me: 2 new (Roadmap 2)",
        ]

    run(engine, store, CommandModeBackend(), clock, scenario)


def test_an_agent_is_asked_for_the_brief_and_its_scheduled_turn_only_proposes(
    engine: Engine, store: Store
) -> None:
    clock = ManualClock(at(1, 7, 0))
    agent = ScriptedAgent(
        [
            [
                ("owner_set_brief", {"enabled": False}),
                (
                    "memory_save",
                    {
                        "kind": "preference",
                        "summary": "Keep briefs under ten lines",
                        "applies_when": "writing the daily brief",
                    },
                ),
            ]
        ],
        reply="Good morning: nothing is overdue.",
    )

    async def scenario(
        runtime: OwnerRuntime, channel: RecordingChannel, schedule: BriefSchedule
    ) -> None:
        await due(runtime, schedule, clock, at(1, 8, 30))
        await channel.signal.until(
            lambda: "Good morning: nothing is overdue." in [m.text for m in channel.sent]
        )

    run(engine, store, agent, clock, scenario)

    prompt = agent.prompts[0]
    assert "The owner's daily brief is due" in prompt
    assert "Your brief for Tue 1 Dec 2026, 08:30 (Europe/Berlin)" in prompt  # MAMA's draft
    refused, saved = agent.outcomes[0]
    assert refused.is_error and refused.result["error"]["code"] == "owner_turn_required"
    assert not saved.is_error and saved.result["status"] == "proposed"
    record = engine.dispatch(
        "memory.read", {"id": saved.result["judgment_id"]}, OWNER, Grant.owner()
    )
    assert record["record"]["provenance"]["turn"] == "scheduled"
    assert engine.dispatch("owner.settings", {}, OWNER, Grant.owner())["brief"]["enabled"] is True


class MissingAgent:
    """An agent whose CLI is not installed."""

    name = "missing-agent"
    speaks_for_owner = False
    writes_briefs = True
    version = None
    wants_session_context = True

    async def start(self, tools: list[ToolSpec]) -> None:
        raise BackendUnavailableError("The agent CLI is not installed.")

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        raise AssertionError("never started")

    async def close(self) -> None:
        return None

    async def forget_session(self) -> list[Path]:
        return []


def test_when_the_agent_cannot_run_mama_writes_the_brief_itself(
    engine: Engine, store: Store
) -> None:
    clock = ManualClock(at(1, 7, 0))

    async def scenario(
        runtime: OwnerRuntime, channel: RecordingChannel, schedule: BriefSchedule
    ) -> None:
        await due(runtime, schedule, clock, at(1, 8, 30) + timedelta(hours=3))
        await channel.signal.until(lambda: len(briefs(channel)) == 1)
        text = briefs(channel)[0]
        assert text.startswith("Your brief for Tue 1 Dec 2026, 11:30 (Europe/Berlin)")
        assert text.endswith("(Written by MAMA itself: The agent CLI is not installed.)")

    run(engine, store, MissingAgent(), clock, scenario)


def test_command_mode_brief_over_real_commitments_line_by_line(
    engine: Engine, store: Store
) -> None:
    clock = ManualClock(at(1, 7, 0))
    agent = Grant.agent(["global"])
    source_turn = SessionFacts(
        actor_kind=ActorKind.AGENT, actor_name="x", turn=TurnKind.SOURCE_DELTA
    )

    def commit(summary: str, session: SessionFacts = OWNER, **terms: Any) -> int:
        grant = Grant.owner() if session is OWNER else agent
        payload = {"kind": "commitment", "summary": summary, "commitment": terms}
        return int(engine.dispatch("memory.save", payload, session, grant)["judgment_id"])

    overdue = commit("Send the Q3 deck", owed_to="Anna", due="2026-11-30T17:00:00+01:00")
    today = commit(
        "Review the contract", owed_by="Bob", owed_to="owner", due="2026-12-01T15:00:00+01:00"
    )
    proposed = commit(
        "Draft the offer", source_turn, owed_to="Dan", due="2026-12-03T12:00:00+01:00"
    )
    commit("Plan the offsite", owed_to="Eve", due="2026-12-09T09:00:00+01:00")  # later
    closed = commit("Call the bank", owed_to="Frank", due="2026-11-29T10:00:00+01:00")
    engine.dispatch("commitment.close", {"id": closed, "outcome": "done"}, OWNER, Grant.owner())
    assert (
        engine.dispatch("memory.read", {"id": proposed}, OWNER, Grant.owner())["record"]["status"]
        == "proposed"
    )

    async def scenario(
        runtime: OwnerRuntime, channel: RecordingChannel, schedule: BriefSchedule
    ) -> None:
        await due(runtime, schedule, clock, at(1, 8, 30))
        await channel.signal.until(lambda: len(briefs(channel)) == 1)
        assert briefs(channel)[0].splitlines() == [
            "Your brief for Tue 1 Dec 2026, 08:30 (Europe/Berlin)",
            "",
            "From your connectors so far:",
            "• nothing new",
            "",
            "Overdue (1):",
            f"• #{overdue} You owe Anna: Send the Q3 deck — was due Mon 30 Nov 17:00",
            "Due today (1):",
            f"• #{today} Bob owes you: Review the contract — at 15:00",
            "Newly proposed, to confirm or drop (1):",
            f"• #{proposed} You owe Dan: Draft the offer — due Thu 3 Dec 12:00 (proposed)",
            "",
            "Proposals: none waiting for your review.",
        ]

    run(engine, store, CommandModeBackend(), clock, scenario)
