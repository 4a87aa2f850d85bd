"""A running runtime follows what other processes commit, long before its periodic
pass (set to ten minutes here, so only the engine's commit feed can be the cause):
a proposal saved by ``mama mcp`` gets its card, a rule retired from the CLI leaves
the next turn's guidance delta, and ``mama agent pause`` pauses it."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from app.durable.mailbox import InputKind, NewInput
from app.local.paths import Paths
from app.local.settings import Settings
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.serve.host import RuntimeHost
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import Store
from tests.app.runtime.support import MAMA, RecordingChannel, ScriptedAgent, Signal, mama_env
from tests.other_process import commit_elsewhere

NO_PERIODIC_PASS = RuntimeSettings(poll_seconds=600.0, send_retry_delays=(0.01,))
MCP_CLIENT = SessionFacts(actor_kind=ActorKind.MCP_CLIENT, actor_name="codex", turn=TurnKind.MCP)
RULE = {"kind": "constraint", "summary": "Never deploy on Fridays", "applies_when": "deploying"}


def owner_says(n: int, text: str) -> NewInput:
    return NewInput(InputKind.OWNER_MESSAGE, "telegram", f"42:{n}", text, author="owner")


def test_a_proposal_saved_by_another_process_gets_its_card(
    engine: Engine, store: Store, model_cache_dir: Path
) -> None:
    async def main() -> RecordingChannel:
        runtime = OwnerRuntime(engine, store, ScriptedAgent([]), NO_PERIODIC_PASS)
        channel = RecordingChannel()
        runtime.attach_channel(channel)
        await runtime.start()
        try:
            # The control: a proposal of this process is carded.
            mine = engine.dispatch(
                "memory.save",
                {**RULE, "summary": "Answer in short paragraphs"},
                MCP_CLIENT,
                Grant.agent(("global",)),
            )
            await channel.signal.until(lambda: _carded(channel, mine["judgment_id"]))
            theirs = await asyncio.to_thread(
                commit_elsewhere,
                store.path,
                model_cache_dir,
                "memory.save",
                {**RULE, "summary": "Prefer tables for comparisons"},
                as_agent=True,
            )
            assert theirs["status"] == "proposed"
            await channel.signal.until(lambda: _carded(channel, theirs["judgment_id"]))
        finally:
            await runtime.stop()
        return channel

    channel = asyncio.run(main())
    cards = [m for m in channel.sent if m.review_id is not None]
    assert len(cards) == 2  # each once
    assert "Prefer tables for comparisons" in cards[1].text


def test_a_rule_retired_by_another_process_leaves_the_next_turns_delta(
    engine: Engine, store: Store, model_cache_dir: Path
) -> None:
    rule = engine.dispatch("memory.save", RULE, SessionFacts.owner_cli(), Grant.owner())
    agent = ScriptedAgent([[], []], reply="ok")

    async def main() -> None:
        runtime = OwnerRuntime(engine, store, agent, NO_PERIODIC_PASS)
        channel = RecordingChannel()
        turns = Signal()
        runtime.turn_listeners.append(lambda claimed, reply: turns.notify())
        runtime.attach_channel(channel)
        await runtime.start()
        try:
            await runtime.post(owner_says(1, "Can we ship today?"))
            await turns.until(lambda: len(agent.prompts) == 1)
            await asyncio.to_thread(
                commit_elsewhere,
                store.path,
                model_cache_dir,
                "memory.retire",
                {"id": rule["judgment_id"], "reason": "we deploy any day now"},
            )
            await runtime.post(owner_says(2, "And on Friday?"))
            await turns.until(lambda: len(agent.prompts) == 2)
        finally:
            await runtime.stop()

    asyncio.run(main())
    assert "Never deploy on Fridays" in agent.prompts[0]  # the control: it steered turn 1
    assert f"- [#{rule['judgment_id']}] constraint no longer applies (stale)" in agent.prompts[1]


def test_mama_agent_pause_reaches_a_running_agent_at_once(
    tmp_path: Path,
    engine: Engine,
    store: Store,
    model_cache_dir: Path,
    clean_env: pytest.MonkeyPatch,
) -> None:
    home = store.path.parent
    env = mama_env(home, model_cache_dir)

    def mama(*args: str) -> None:
        done = subprocess.run(
            [str(MAMA), *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr

    async def main() -> list[bool]:
        paths = Paths(home=home, cache=tmp_path / "cache")
        host = RuntimeHost(
            paths, Settings(), engine, store, token="", runtime_settings=NO_PERIODIC_PASS
        )
        seen: list[bool] = []
        changed = asyncio.Event()

        def on_pause(paused: bool) -> None:
            seen.append(paused)
            changed.set()

        host.pause_listeners.append(on_pause)
        await host.start()
        try:
            assert host.runtime is not None and not host.runtime.paused
            await asyncio.to_thread(mama, "agent", "pause")
            await asyncio.wait_for(changed.wait(), 30)
            assert host.runtime.paused
            changed.clear()
            await asyncio.to_thread(mama, "agent", "resume")
            await asyncio.wait_for(changed.wait(), 30)
            assert not host.runtime.paused
        finally:
            await host.stop()
        return seen

    assert asyncio.run(main()) == [True, False]


def _carded(channel: RecordingChannel, judgment_id: int) -> bool:
    return any(m.review_id == judgment_id for m in channel.sent)
