"""A running ``mama mcp`` server follows what other processes commit: a decision
saved elsewhere joins its recall (the vector cache included), one retired from
the CLI stops coming back as active."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from app.mcp.project_scope import ProjectBinding
from mama_core.memory import Engine
from mama_core.model import ChangeSet
from tests.app.mcp.conftest import mcp_client, structured
from tests.other_process import commit_elsewhere

pytestmark = pytest.mark.anyio

STORAGE = {"kind": "decision", "topic": "storage", "summary": "We keep the store in SQLCipher."}
BACKUPS = {
    "kind": "decision",
    "topic": "storage",
    "summary": "The store is backed up to the NAS every night.",
    "scopes": ["project:alpha"],
}


async def test_the_servers_recall_follows_other_processes(
    engine: Engine, alpha: ProjectBinding, dev_db: Path, model_cache_dir: Path
) -> None:
    seen: set[int] = set()
    arrived = threading.Condition()

    def on_change(changes: ChangeSet) -> None:
        with arrived:
            seen.update(changes.event_ids)
            arrived.notify_all()

    def wait_for_event(event_id: int) -> bool:
        with arrived:
            return arrived.wait_for(lambda: event_id in seen, timeout=30)

    async with mcp_client(engine, alpha) as client:
        saved = structured(await client.call_tool("save", STORAGE))
        query = {"query": "how is the store kept"}
        before = structured(await client.call_tool("search", query))
        assert [r["id"] for r in before["results"]] == [saved["judgment_id"]]  # control
        engine.subscribe(on_change)

        retired = await anyio.to_thread.run_sync(
            lambda: commit_elsewhere(
                dev_db,
                model_cache_dir,
                "memory.retire",
                {"id": saved["judgment_id"], "reason": "moved to plain files"},
            )
        )
        added = await anyio.to_thread.run_sync(
            lambda: commit_elsewhere(dev_db, model_cache_dir, "memory.save", BACKUPS)
        )
        assert await anyio.to_thread.run_sync(wait_for_event, retired["event_id"])
        assert await anyio.to_thread.run_sync(wait_for_event, added["event_id"])

        cache = engine.vector_cache
        assert cache is not None and added["judgment_id"] in cache.matrix()[0]
        after = structured(await client.call_tool("search", query))
    found = [r["id"] for r in after["results"]]
    assert saved["judgment_id"] not in found
    assert added["judgment_id"] in found
