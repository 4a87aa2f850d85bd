"""After a purge the agent's conversation does not bring the text back: the REAL
``claude`` and ``codex`` CLIs (pinned, from npm) against scripted fake model APIs.
The session (thread) that saw the purged message is not resumed, its transcript
file under the CLI's config folder is deleted, and the fresh session's context
carries the earlier exchanges but not the purged one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from app.backends.codex import CodexBackend, CodexSettings
from app.durable.mailbox import InputKind, NewInput
from app.durable.transaction import RuntimeDb
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.runtime.prompts import load_prompt
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.backends.fake_anthropic import FakeAnthropic, last_user_text, text
from tests.app.backends.fake_openai import FakeResponses, message, user_texts
from tests.app.backends.test_claude_code import make_backend
from tests.app.backends.test_codex import codex_env, provider
from tests.app.runtime.support import RecordingChannel

pytestmark = pytest.mark.slow

PURGED = "quagmirette"
CONTROL = "wombatique"


def files_holding(folder: Path, word: str) -> list[Path]:
    """Every file under ``folder`` whose bytes contain ``word``."""
    return [p for p in folder.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


def transcripts(tmp_path: Path, session_id: str) -> list[Path]:
    return list((tmp_path / "claude-home" / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))


def test_a_purge_ends_the_session_that_saw_the_text_and_deletes_its_transcript(
    engine: Engine, store: Store, claude_bin: Path, tmp_path: Path
) -> None:
    def model(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        said = last_user_text(body)
        if PURGED in said:
            return [text(f"Noted: the locker code is {PURGED}.")], "end_turn"
        return [text("ok")], "end_turn"

    fake = FakeAnthropic(model).start()
    channel = RecordingChannel()
    owner = SessionFacts.owner_cli()
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        state = RuntimeDb(store.new_connection(), store.path)
        backend = make_backend(claude_bin, fake, tmp_path, state)
        runtime = OwnerRuntime(engine, store, backend, RuntimeSettings(poll_seconds=5.0), db=state)
        runtime.attach_channel(channel)
        forgotten = asyncio.Event()
        runtime.forget_listeners.append(lambda _removed: forgotten.set())
        await runtime.start()
        try:
            said = [f"The {CONTROL} plan is on", f"My locker code is {PURGED}", "Hello again"]
            for n, words in enumerate(said[:2], start=1):
                await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", f"1:{n}", words))
                await channel.signal.until(lambda n=n: len(channel.sent) >= n, timeout=120)
            assert backend.session_id is not None
            seen["old"] = backend.session_id
            seen["starts_before"] = len(backend.starts)
            seen["old_files"] = transcripts(tmp_path, backend.session_id)
            seen["old_text"] = "".join(p.read_text() for p in seen["old_files"])

            kept = engine.dispatch("observation.list", {}, owner, Grant.owner())
            doomed = [o["id"] for o in kept["observations"] if PURGED in o["text"]]
            seen["doomed"] = doomed
            engine.dispatch(
                "memory.purge", {"observation_ids": doomed, "reason": "x"}, owner, Grant.owner()
            )
            # Erased at purge time, not at the next turn: no message is posted before this.
            await asyncio.wait_for(forgotten.wait(), timeout=60)
            seen["at_purge"] = files_holding(tmp_path / "claude-home", PURGED)
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:3", said[2]))
            await channel.signal.until(lambda: len(channel.sent) >= 3, timeout=120)
            seen["new"] = backend.session_id
            seen["starts"] = list(backend.starts)
        finally:
            await runtime.stop()
            state.close()

    try:
        asyncio.run(scenario())
    finally:
        fake.stop()

    # Before the purge: one session, whose transcript holds the words.
    assert seen["starts_before"] == 1
    assert len(seen["doomed"]) == 2  # the owner's message and the reply quoting it
    assert seen["old_files"] and PURGED in seen["old_text"]
    assert seen["at_purge"] == []
    # After: a new session, started fresh (never --resume of the old one) ...
    old, new = seen["old"], seen["new"]
    assert new != old
    last_start = seen["starts"][-1]
    assert "--resume" not in last_start and last_start[last_start.index("--session-id") + 1] == new
    assert all(old not in arg for start in seen["starts"][1:] for arg in start)
    # ... the old transcript is gone, and the new prompt has the history without the text.
    assert transcripts(tmp_path, old) == []
    assert files_holding(tmp_path / "claude-home", PURGED) == []
    request = fake.turn_requests()[-1]
    prompt = last_user_text(request)
    assert "# Session context" in prompt and CONTROL in prompt
    assert PURGED not in json.dumps(request)


def rollouts(tmp_path: Path, thread_id: str) -> list[Path]:
    home = Path(codex_env(tmp_path)["CODEX_HOME"])
    return list((home / "sessions").glob(f"**/rollout-*{thread_id}.jsonl"))


def test_a_purge_ends_the_codex_thread_that_saw_the_text_and_deletes_its_rollout(
    engine: Engine, store: Store, codex_bin: Path, tmp_path: Path
) -> None:
    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        said = user_texts(body)
        if said and PURGED in said[-1]:
            return [message(f"Noted: the locker code is {PURGED}.")]
        return [message("ok")]

    fake = FakeResponses(model).start()
    channel = RecordingChannel()
    owner = SessionFacts.owner_cli()
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        state = RuntimeDb(store.new_connection(), store.path)
        backend = CodexBackend(
            CodexSettings(
                executable=str(codex_bin),
                workdir=tmp_path / "agent",
                instructions=load_prompt(),
                config=provider(fake.url),
                env=codex_env(tmp_path),
                turn_timeout=120.0,
            ),
            state,
        )
        runtime = OwnerRuntime(engine, store, backend, RuntimeSettings(poll_seconds=5.0), db=state)
        runtime.attach_channel(channel)
        forgotten = asyncio.Event()
        runtime.forget_listeners.append(lambda _removed: forgotten.set())
        await runtime.start()
        try:
            said = [f"The {CONTROL} plan is on", f"My locker code is {PURGED}", "Hello again"]
            for n, words in enumerate(said[:2], start=1):
                await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", f"1:{n}", words))
                await channel.signal.until(lambda n=n: len(channel.sent) >= n, timeout=120)
            assert backend.thread_id is not None
            seen["old"] = backend.thread_id
            seen["old_files"] = rollouts(tmp_path, backend.thread_id)
            seen["old_text"] = "".join(p.read_text() for p in seen["old_files"])
            kept = engine.dispatch("observation.list", {}, owner, Grant.owner())
            doomed = [o["id"] for o in kept["observations"] if PURGED in o["text"]]
            engine.dispatch(
                "memory.purge", {"observation_ids": doomed, "reason": "x"}, owner, Grant.owner()
            )
            # Erased at purge time, not at the next turn: no message is posted before this.
            await asyncio.wait_for(forgotten.wait(), timeout=60)
            seen["at_purge"] = files_holding(Path(codex_env(tmp_path)["HOME"]), PURGED)
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:3", said[2]))
            await channel.signal.until(lambda: len(channel.sent) >= 3, timeout=120)
            seen["new"] = backend.thread_id
        finally:
            await runtime.stop()
            state.close()

    try:
        asyncio.run(scenario())
    finally:
        fake.stop()

    assert seen["old_files"] and PURGED in seen["old_text"]
    assert seen["at_purge"] == []
    assert seen["new"] != seen["old"]
    assert rollouts(tmp_path, seen["old"]) == []
    assert files_holding(Path(codex_env(tmp_path)["HOME"]), PURGED) == []
    last = fake.requests[-1]
    assert CONTROL in json.dumps(last) and PURGED not in json.dumps(last)
