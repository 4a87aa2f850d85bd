"""The runtime host: one runtime per data folder (a lock file), and a pause that
holds across restarts and processes."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock

from app.local.paths import Paths
from app.local.settings import Settings
from app.serve.host import LOCK_FILE_NAME, RuntimeBusyError, RuntimeHost
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.runtime.support import MAMA, mama_env


def host(tmp_path: Path, engine: Engine, store: Store) -> RuntimeHost:
    paths = Paths(home=tmp_path / "home", cache=tmp_path / "cache")
    return RuntimeHost(paths, Settings(), engine, store, token="")


def test_a_second_host_on_the_same_folder_is_refused_until_the_first_stops(
    tmp_path: Path, engine: Engine, store: Store
) -> None:
    async def main() -> None:
        first, second = host(tmp_path, engine, store), host(tmp_path, engine, store)
        await first.start()
        try:
            assert first.running
            with pytest.raises(RuntimeBusyError) as refused:
                await second.start()
            assert refused.value.exit_code == 53
            assert "already runs the agent" in refused.value.message
            assert not second.running
        finally:
            await first.stop()
        # Control: with the first one gone, the same second host starts.
        await second.start()
        try:
            status = await second.status()
            assert status.backend == "command-mode"
            assert status.telegram == "off (no bot token)"
            assert status.owner is None and not status.paused
        finally:
            await second.stop()

    asyncio.run(main())


def test_pause_is_kept_in_the_store_across_restarts(
    tmp_path: Path, engine: Engine, store: Store
) -> None:
    async def main() -> None:
        first = host(tmp_path, engine, store)
        await first.start()
        await first.set_paused(True)
        assert first.runtime is not None and first.runtime.paused
        await first.stop()

        second = host(tmp_path, engine, store)
        await second.start()
        try:
            assert (await second.status()).paused
            await second.set_paused(False)
            assert not (await second.status()).paused
        finally:
            await second.stop()

        third = host(tmp_path, engine, store)
        await third.start()
        try:
            assert not (await third.status()).paused
        finally:
            await third.stop()

    asyncio.run(main())


def test_the_daemon_refuses_to_start_beside_another_runtime(
    tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = mama_env(home, model_cache_dir)
    # Another process (the tray, say) holds the runtime lock of this folder.
    with FileLock(home / LOCK_FILE_NAME, thread_local=False):
        done = subprocess.run(
            [str(MAMA), "daemon"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
    assert done.returncode == 53, done.stderr
    assert done.stderr.startswith("mama: runtime_busy: Another MAMA"), done.stderr
    assert "Traceback" not in done.stderr


def test_doctor_tells_whether_a_runtime_serves_the_folder_and_how_telegram_is_set(
    tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = mama_env(home, model_cache_dir, MAMA_TELEGRAM_TOKEN="123456:SECRET-token-value")

    def doctor() -> str:
        done = subprocess.run(
            [str(MAMA), "doctor"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    idle = doctor()  # the control: nobody serves the folder
    assert "agent: command; runtime not running" in idle
    with FileLock(home / LOCK_FILE_NAME, thread_local=False):
        busy = doctor()
    assert "agent: command; runtime running (the tray app or mama daemon)" in busy
    assert "telegram: bot token from MAMA_TELEGRAM_TOKEN, not paired" in busy
    assert "SECRET-token-value" not in busy + idle


def test_the_agents_scopes_come_from_the_settings(
    tmp_path: Path, engine: Engine, store: Store
) -> None:
    from app.backends.toolbox import ToolBox
    from mama_core.memory import ActorKind, SessionFacts, TurnKind

    facts = SessionFacts(ActorKind.AGENT, "test-agent", turn=TurnKind.OWNER_MESSAGE)
    fact = {
        "kind": "fact",
        "summary": "Phoenix deploys on Thursdays",
        "scopes": ["project:phoenix"],
    }

    async def save_with(settings: Settings) -> tuple[bool, str]:
        paths = Paths(home=tmp_path / "home", cache=tmp_path / "cache")
        running = RuntimeHost(paths, settings, engine, store, token="")
        await running.start()
        try:
            assert running.runtime is not None
            grant = running.runtime.grant
            outcome = await ToolBox(engine, grant, facts, 1).call("memory_save", dict(fact))
            return outcome.is_error, str(grant.default_scope)
        finally:
            await running.stop()

    # By default the owner's agent works in global only: a project save is refused.
    refused, default = asyncio.run(save_with(Settings()))
    assert refused and default == "global"
    # Widened in the settings, the same save lands; saves default to the first scope.
    wider = Settings(agent_scopes=("project:phoenix", "global"))
    refused, default = asyncio.run(save_with(wider))
    assert not refused and default == "project:phoenix"


def test_a_pause_set_elsewhere_reaches_the_running_agent(
    tmp_path: Path, engine: Engine, store: Store
) -> None:
    """`mama agent pause` beside a running daemon: the flag in the store is followed."""
    from app.durable.state import PAUSED_KEY, delete_state, set_state
    from app.durable.transaction import RuntimeDb
    from app.runtime.owner_runtime import RuntimeSettings

    async def main() -> list[bool]:
        paths = Paths(home=tmp_path / "home", cache=tmp_path / "cache")
        fast = RuntimeSettings(poll_seconds=0.05)
        host = RuntimeHost(paths, Settings(), engine, store, token="", runtime_settings=fast)
        seen: list[bool] = []
        changed = asyncio.Event()

        def on_pause(paused: bool) -> None:
            seen.append(paused)
            changed.set()

        host.pause_listeners.append(on_pause)
        await host.start()
        other = RuntimeDb(store.new_connection(), store.path)  # another process's connection
        try:
            assert host.runtime is not None and not host.runtime.paused
            await asyncio.to_thread(set_state, other, PAUSED_KEY, "1")
            await asyncio.wait_for(changed.wait(), 10)
            assert host.runtime.paused
            changed.clear()
            await asyncio.to_thread(delete_state, other, PAUSED_KEY)
            await asyncio.wait_for(changed.wait(), 10)
            assert not host.runtime.paused
        finally:
            other.close()
            await host.stop()
        return seen

    assert asyncio.run(main()) == [True, False]


def test_mama_agent_pause_and_resume_are_kept_and_shown_by_doctor(
    tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch
) -> None:
    env = mama_env(tmp_path / "home", model_cache_dir)

    def mama(*args: str) -> str:
        done = subprocess.run(
            [str(MAMA), *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "agent: command; runtime not running" in mama("doctor")  # the control
    assert mama("agent", "pause").strip() == "Agent paused; MAMA will start that way."
    assert "agent: command (paused); runtime not running" in mama("doctor")
    assert mama("agent", "resume").strip() == "Agent resumed; MAMA will start that way."
    assert "agent: command; runtime not running" in mama("doctor")


def test_a_source_that_needs_the_owner_reaches_the_listeners_and_the_status(
    tmp_path: Path, engine: Engine, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.connectors import kinds
    from app.connectors.base import ConnectorError, Problem
    from app.local.settings import ConnectorConfig
    from tests.app.connectors import scripted

    monkeypatch.setitem(kinds.KINDS, "scripted", "tests.app.connectors.scripted")
    monkeypatch.setitem(
        scripted.SCRIPTS, "ops", [ConnectorError(Problem.AUTH, "Slack refused the token.")]
    )
    monkeypatch.setitem(scripted.SCRIPTS, "roadmap", [])
    feeds = tuple(
        ConnectorConfig(name=n, kind="scripted", interval_s=3600) for n in ("roadmap", "ops")
    )
    paths = Paths(home=tmp_path / "home", cache=tmp_path / "cache")

    async def main() -> None:
        runtime_host = RuntimeHost(paths, Settings(connectors=feeds), engine, store, token="")
        heard = asyncio.Event()
        runtime_host.connector_listeners.append(lambda name: name == "ops" and heard.set())
        await runtime_host.start()
        try:
            await asyncio.wait_for(heard.wait(), 30)
            status = await runtime_host.status()
            assert status.problem == "The source ops needs you: Slack refused the token."
            by_name = {h.name: h.state for h in status.connectors}
            assert by_name["ops"] == "blocked"
            assert by_name["roadmap"] in ("idle", "ok")  # control: the other source is fine
        finally:
            await runtime_host.stop()

    asyncio.run(main())
