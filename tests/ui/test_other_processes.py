"""The review window follows what other processes commit: a proposal saved by
``mama mcp`` appears in the Proposed tab and its count, an approval from the CLI
takes it out — with no restart and no polling of the lists."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.local.paths import Paths
from mama_core.memory import Engine
from mama_core.store import Store
from tests.conftest import TEST_KEY_HEX
from tests.other_process import commit_elsewhere
from tests.ui.conftest import agent_propose, wait_until
from ui.bridge import EngineBridge
from ui.review.window import TAB_GUIDANCE, TAB_PROPOSED, ReviewWindow

MAMA = Path(sys.executable).with_name("mama")


@pytest.fixture
def window(engine: Engine, store: Store, loop: asyncio.AbstractEventLoop) -> Iterator[ReviewWindow]:
    bridge = EngineBridge(engine)
    made = ReviewWindow(bridge)
    made.show()
    try:
        yield made
    finally:
        loop.run_until_complete(made.aclose())
        made.close()
        made.deleteLater()
        bridge.close()


def test_the_proposed_count_follows_other_processes(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    paths: Paths,
    loop: asyncio.AbstractEventLoop,
) -> None:
    def ids(tab: int) -> list[int]:
        return window.lists[tab].model.ids()

    def mama_approve(judgment_id: int) -> None:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MAMA_")},
            "MAMA_HOME": str(paths.home),
            "MAMA_CACHE_DIR": str(paths.cache),
            "MAMA_DB_KEY": TEST_KEY_HEX,
        }
        done = subprocess.run(
            [str(MAMA), "approve", str(judgment_id)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    mine = agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> int:
        try:
            return await steps()
        finally:
            await window.aclose()

    async def steps() -> int:
        await window.load()
        assert ids(TAB_PROPOSED) == [mine]  # the control: this process's proposal
        assert window.tabs.tabText(TAB_PROPOSED) == "Proposed (1)"
        theirs = await asyncio.to_thread(
            commit_elsewhere,
            store.path,
            paths.cache,
            "memory.save",
            {
                "kind": "preference",
                "summary": "Prefer tables for comparisons",
                "applies_when": "comparing options",
            },
            as_agent=True,
        )
        jid = int(theirs["judgment_id"])
        await wait_until(
            lambda: window.tabs.tabText(TAB_PROPOSED) == "Proposed (2)",
            window.lists_updated,
            timeout=30,
        )
        assert set(ids(TAB_PROPOSED)) == {mine, jid}
        await asyncio.to_thread(mama_approve, jid)
        await wait_until(
            lambda: window.tabs.tabText(TAB_PROPOSED) == "Proposed (1)",
            window.lists_updated,
            timeout=30,
        )
        await wait_until(lambda: window.settled, window.lists_updated)
        return jid

    theirs = loop.run_until_complete(scenario())
    assert ids(TAB_PROPOSED) == [mine]
    assert theirs in ids(TAB_GUIDANCE)
