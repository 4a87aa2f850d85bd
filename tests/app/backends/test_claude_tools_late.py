"""A turn in which Claude Code could not reach MAMA's tools is not done.

The REAL ``claude`` CLI against the fake Anthropic API; MAMA's MCP bridge is held
at its start by a gate file (``MAMA_BRIDGE_START_GATE``) until the test releases
it, as a slow start under load. The source delta's turn is retried through the
mailbox and its items reach the model with the tools up. Control: with a bridge
that starts at once, the first turn has its tools.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.backends.claude_code import ClaudeCodeBackend
from app.backends.claude_relay_process import START_GATE_ENV
from app.durable.mailbox import RETRY_DELAYS, InputKind, InputState, NewInput
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.backends.fake_anthropic import FakeAnthropic, last_user_text, text
from tests.app.backends.test_claude_code import make_backend
from tests.app.runtime.support import ManualClock

pytestmark = pytest.mark.slow

ITEMS = "ITEM-7731 the vendor invoice is due Friday"


def model(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    return [text("noted")], "end_turn"


def delta_requests(fake: FakeAnthropic) -> list[dict[str, Any]]:
    """The model requests that carried the source delta's items."""
    return [r for r in fake.requests if ITEMS in last_user_text(r)]


def has_tools(body: dict[str, Any]) -> bool:
    return any(str(t.get("name", "")).startswith("mcp__mama__") for t in body.get("tools") or [])


def run_delta(
    engine: Engine, store: Store, claude_bin: Path, tmp_path: Path, gated: bool
) -> tuple[FakeAnthropic, list[tuple[InputState, int]], ClaudeCodeBackend, list[str]]:
    fake = FakeAnthropic(model).start()
    gate = tmp_path / "bridge-may-start"
    backend = make_backend(claude_bin, fake, tmp_path, None)
    if gated:
        backend.settings.env[START_GATE_ENV] = str(gate)
        # The CLI waits MCP_TIMEOUT for a server before a turn (MAMA asks for 120 s); a
        # short wait here plays a machine so loaded that the bridge starts later still.
        backend.settings.env["MCP_TIMEOUT"] = "20000"
    clock = ManualClock()
    states: list[tuple[InputState, int]] = []
    problems: list[str] = []

    async def scenario() -> None:
        runtime = OwnerRuntime(
            engine, store, backend, RuntimeSettings(poll_seconds=3600.0), clock=clock
        )
        done = asyncio.Event()
        runtime.turn_listeners.append(lambda _c, _r: done.set())
        await runtime.start()
        try:
            posted = await runtime.post(
                NewInput(InputKind.SOURCE_DELTA, "slack:T1", "C1:1.1", ITEMS, author="ana")
            )
            await asyncio.wait_for(done.wait(), 180)
            states.append(await runtime.run_db(runtime.mailbox.state_of, posted.input_id))
            problems.append(runtime.tools_problem or "")
            if gated:
                gate.touch()  # the tools come up
                for delay in RETRY_DELAYS:  # the mailbox's retries, as they fall due
                    if states[-1][0] is not InputState.PENDING:
                        break
                    done.clear()
                    clock.advance(delay + timedelta(seconds=1))
                    runtime.wake()
                    await asyncio.wait_for(done.wait(), 180)
                    state = await runtime.run_db(runtime.mailbox.state_of, posted.input_id)
                    states.append(state)
                    problems.append(runtime.tools_problem or "")
        finally:
            gate.touch()
            await runtime.stop()

    try:
        asyncio.run(scenario())
    finally:
        fake.stop()
    return fake, states, backend, problems


def test_a_turn_without_the_tools_is_retried_and_its_items_reach_the_model(
    engine: Engine, store: Store, claude_bin: Path, tmp_path: Path
) -> None:
    fake, states, backend, problems = run_delta(engine, store, claude_bin, tmp_path, True)
    offered = [has_tools(r) for r in delta_requests(fake)]
    # The first turn ran before the bridge was up (the CLI says "pending" or, once
    # its MCP_TIMEOUT is over, "failed"): the model had no tools...
    assert offered[0] is False
    # ...so the turn did not count: the input went back to the mailbox for a retry,
    # and the tray's line says why.
    assert states[0] == (InputState.PENDING, 1)
    assert "could not reach MAMA's tools" in problems[0]
    # Retried until the tools were up: then the same items reach the model, with its
    # tools, once, and the input is done (each tool-less turn was one attempt).
    assert offered[-1] is True and offered.count(True) == 1
    assert states[-1] == (InputState.DONE, len(offered))
    assert problems[-1] == ""
    assert backend.init_event is not None


def test_control_a_prompt_bridge_gives_the_first_turn_its_tools(
    engine: Engine, store: Store, claude_bin: Path, tmp_path: Path
) -> None:
    fake, states, backend, problems = run_delta(engine, store, claude_bin, tmp_path, False)
    assert backend._env()["MCP_TIMEOUT"] == "120000"  # pyright: ignore[reportPrivateUsage]
    assert backend._env()["MCP_CONNECT_TIMEOUT_MS"] == "120000"  # pyright: ignore[reportPrivateUsage]
    assert [has_tools(r) for r in delta_requests(fake)] == [True]
    assert states == [(InputState.DONE, 1)]
    assert problems == [""]
