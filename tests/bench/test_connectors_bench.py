"""What ``bench.connectors`` takes out of its figures as the servers' time is the
servers' own: the fake Slack's thread, and every process under Dovecot's master."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from app.connectors.slack import build
from bench.slack_feed import fill_workspace
from tests.app.connectors.dovecot_server import process_tree_cpu_seconds
from tests.app.connectors.fake_slack import FakeSlack

BURN = 0.3
"""CPU seconds a helper burns (by its own CPU clock, never by the wall clock)."""
TICKS = 0.05
"""``/proc`` counts whole clock ticks (1/100 s), user and system apart: a few are lost."""

_BURNER = (
    "import sys, time\n"
    f"while time.process_time() < {BURN}: pass\n"
    "print('burnt', flush=True)\n"
    "sys.stdin.read()\n"
)


def burn_this_thread(seconds: float) -> None:
    began = time.thread_time()
    while time.thread_time() - began < seconds:
        pass


def test_the_fake_slack_on_its_own_thread_counts_only_that_threads_cpu() -> None:
    fake = FakeSlack()
    names = fill_workspace(fake, 300, 2)
    fake.start_thread()
    try:
        slack = build(
            "bench",
            {"channels": [f"#{n}" for n in names], "base_url": fake.url},
            {"token": fake.token}.get,
        )

        async def read_all() -> int:
            count, cursor = 0, None
            while True:
                batch = await slack.poll(cursor, 1000)
                count, cursor = count + len(batch.items), batch.cursor
                if not batch.more:
                    await slack.aclose()
                    return count

        assert asyncio.run(read_all()) == 300  # the client was served from the thread
        burn_this_thread(BURN)  # the client's side: must not be counted as the fake's
        served = fake.server_cpu_seconds
        assert 0.0 < served < BURN
    finally:
        fake.stop_thread()
    assert fake.server_cpu_seconds >= served  # kept as the thread ended
    assert fake.calls and all(c.status == 200 for c in fake.calls)


def test_a_process_trees_cpu_counts_live_and_ended_children() -> None:
    # A live grandchild that burnt BURN s, under a shell that waits for it.
    live = subprocess.Popen(
        ["sh", "-c", f'"{sys.executable}" -c "$0"', _BURNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    # A child that burnt BURN s and ended: the shell reaped it before saying so.
    ended = subprocess.Popen(
        ["sh", "-c", f'"{sys.executable}" -c "$0" </dev/null; echo reaped; exec cat', _BURNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    # Control: a tree that burnt nothing.
    idle = subprocess.Popen(["sh", "-c", "exec cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert live.stdout is not None and ended.stdout is not None
        assert live.stdout.readline().strip() == "burnt"
        assert ended.stdout.readline().strip() == "burnt"
        assert ended.stdout.readline().strip() == "reaped"
        assert process_tree_cpu_seconds(live.pid) >= BURN - TICKS
        assert process_tree_cpu_seconds(ended.pid) >= BURN - TICKS
        assert process_tree_cpu_seconds(idle.pid) < BURN - TICKS
    finally:
        for process in (live, ended, idle):
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=30)
            assert process.stdout is not None
            process.stdout.close()
