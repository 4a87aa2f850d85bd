"""``mama daemon`` killed mid-turn and started again: the owner's message is
delivered again once and answered once. Real daemon process, real claude CLI,
fake Telegram and fake model servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from app.durable.transaction import RuntimeDb
from app.telegram.pairing import Pairing
from mama_core.store import DbKey, Store
from tests.app.backends.fake_anthropic import FakeAnthropic, text
from tests.app.telegram.fake_bot_api import FakeBotApi
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER
from tests.conftest import TEST_KEY_HEX

pytestmark = pytest.mark.slow

MAMA = Path(sys.executable).with_name("mama")


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc), to stop the CLI the daemon started."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


async def start_daemon(env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as err:
        proc = await asyncio.create_subprocess_exec(
            str(MAMA),
            "daemon",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 90)
    assert b"ready" in line, (line, log.read_text()[-3000:])
    return proc


def test_daemon_killed_mid_turn_redelivers_once_and_replies_once(
    claude_bin: Path, model_cache_dir: Path, tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"agent_backend": "claude"}))
    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        db = RuntimeDb(store.new_connection(), store.path)
        pairing = Pairing(db)
        assert pairing.redeem(
            pairing.new_code(), OWNER_CHAT, OWNER_USER, "owner", private=True
        ).paired
        db.close()

    def model(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        return [text("All systems nominal.")], "end_turn"

    fake = FakeAnthropic(model, hold=threading.Event()).start()
    claude_home = tmp_path / "claude-home"
    claude_home.mkdir()
    log = tmp_path / "daemon.err"

    async def scenario() -> None:
        api = FakeBotApi()
        url = await api.start()
        env = {
            **os.environ,
            "MAMA_HOME": str(home),
            "MAMA_DB_KEY": TEST_KEY_HEX,
            "MAMA_CACHE_DIR": str(model_cache_dir),
            "MAMA_CLAUDE_BIN": str(claude_bin),
            "MAMA_TELEGRAM_TOKEN": api.token,
            "MAMA_TELEGRAM_API_URL": url,
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "test-key-not-real",
            "HOME": str(claude_home),
            "CLAUDE_CONFIG_DIR": str(claude_home / ".claude"),
        }
        daemon = await start_daemon(env, log)
        try:
            api.push_message(OWNER_CHAT, OWNER_USER, "Status?")
            await asyncio.to_thread(fake.holding.wait, 120)  # the turn is in flight
            victims = [daemon.pid, *children_of(daemon.pid)]
            for pid in victims:  # the daemon and the CLI it started, by their ids
                os.killpg(pid, signal.SIGKILL)
            await daemon.wait()
            assert fake.hold is not None
            fake.hold.set()
            fake.hold = None
            assert api.texts_to(OWNER_CHAT) == []

            daemon = await start_daemon(env, log)
            await api.signal.until(lambda: len(api.texts_to(OWNER_CHAT)) >= 1, timeout=120)
            daemon.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(daemon.wait(), 60) == 0
        finally:
            if daemon.returncode is None:
                for pid in [daemon.pid, *children_of(daemon.pid)]:
                    os.killpg(pid, signal.SIGKILL)
                await daemon.wait()
            if daemon.stdout is not None:
                daemon.stdout.feed_eof()
            await api.stop()
        assert api.texts_to(OWNER_CHAT) == ["All systems nominal."], log.read_text()[-3000:]

    try:
        asyncio.run(scenario())
    finally:
        fake.stop()
    prompts = [r for r in fake.turn_requests() if "Status?" in json.dumps(r["messages"])]
    assert len(prompts) == 2  # the interrupted attempt and the one redelivery
    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        rows = store.conn.execute("SELECT state, attempts FROM mailbox").fetchall()
        sent = store.conn.execute(
            "SELECT kind, state FROM deliveries WHERE kind = 'reply'"
        ).fetchall()
    assert [tuple(r) for r in rows] == [("done", 2)]
    assert [tuple(r) for r in sent] == [("reply", "sent")]
