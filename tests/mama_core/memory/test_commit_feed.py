"""Commits of another process reach this process's subscribers and recall.

The other process is real (``commit_elsewhere`` runs the engine in a new Python
process over the same file); this engine learns of its commits only through
the commit feed (``PRAGMA data_version`` polled on its own connection).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from mama_core.memory import Engine
from mama_core.memory.commit_feed import changes_of_event
from mama_core.model import ChangeSet
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save, search_ids
from tests.other_process import commit_elsewhere

WAIT = 30.0


class Seen:
    """Change-sets as delivered, with a wait for one that matches."""

    def __init__(self) -> None:
        self.changes: list[ChangeSet] = []
        self._cond = threading.Condition()

    def __call__(self, changes: ChangeSet) -> None:
        with self._cond:
            self.changes.append(changes)
            self._cond.notify_all()

    def wait_for(self, match: Callable[[ChangeSet], bool]) -> ChangeSet:
        with self._cond:
            found = self._cond.wait_for(
                lambda: next((c for c in self.changes if match(c)), None), timeout=WAIT
            )
        assert found is not None, f"no matching change-set in {self.changes}"
        return found

    @property
    def event_ids(self) -> list[int]:
        return [i for c in self.changes for i in c.event_ids]


def test_a_save_in_another_process_reaches_subscribers_and_recall(
    engine: Engine, model_cache_dir: Path
) -> None:
    save(engine, "Release notes go out on Thursdays")
    assert search_ids(engine, "release notes Thursdays")  # recall is loaded and works
    seen = Seen()
    engine.subscribe(seen)

    receipt = commit_elsewhere(
        engine.store.path,
        model_cache_dir,
        "memory.save",
        {"kind": "fact", "summary": "The staging database lives in Frankfurt"},
    )

    changes = seen.wait_for(lambda c: receipt["event_id"] in c.event_ids)
    assert changes.added == (receipt["judgment_id"],)
    assert changes.action == "memory.save"
    assert changes.command_id == receipt["command_id"]
    cache = engine.vector_cache
    assert cache is not None and receipt["judgment_id"] in cache.matrix()[0]
    assert receipt["judgment_id"] in search_ids(engine, "where is the staging database")


def test_a_retire_in_another_process_stops_recall_returning_it_as_active(
    engine: Engine, model_cache_dir: Path
) -> None:
    rule = save(engine, "Deploy the web app only from the release branch", "constraint")
    sibling = save(engine, "Deploy the worker only after the web app", "constraint")
    query = "how do we deploy the web app"
    before = search_ids(engine, query)
    assert rule["judgment_id"] in before and sibling["judgment_id"] in before
    seen = Seen()
    engine.subscribe(seen)

    retired = commit_elsewhere(
        engine.store.path,
        model_cache_dir,
        "memory.retire",
        {"id": rule["judgment_id"], "reason": "we deploy from main now"},
    )

    changes = seen.wait_for(lambda c: retired["event_id"] in c.event_ids)
    assert changes.status_changed == (rule["judgment_id"],) and not changes.added
    after = search_ids(engine, query)
    assert rule["judgment_id"] not in after
    assert sibling["judgment_id"] in after  # control: the same query still finds the other


def test_a_purge_in_another_process_is_a_purge_here(engine: Engine, model_cache_dir: Path) -> None:
    secret = save(engine, "The door code of the office is on the blue card")
    kept = save(engine, "The office door opens at eight")
    seen = Seen()
    engine.subscribe(seen)
    assert secret["judgment_id"] in search_ids(engine, "office door")

    purged = commit_elsewhere(
        engine.store.path,
        model_cache_dir,
        "memory.purge",
        {"id": secret["judgment_id"], "reason": "forget"},
    )

    changes = seen.wait_for(lambda c: purged["event_id"] in c.event_ids)
    assert changes.purged == (secret["judgment_id"],) and not changes.status_changed
    found = search_ids(engine, "office door")
    assert secret["judgment_id"] not in found and kept["judgment_id"] in found


def test_own_commits_are_delivered_once_and_in_event_order(
    engine: Engine, model_cache_dir: Path
) -> None:
    seen = Seen()
    engine.subscribe(seen)
    mine = [save(engine, f"Local note number {n}") for n in range(3)]
    proposal = save(
        engine, "Prefer short stand-ups", "preference", session=AGENT, grant=agent_grant()
    )
    engine.dispatch("review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)

    theirs = commit_elsewhere(
        engine.store.path,
        model_cache_dir,
        "memory.save",
        {"kind": "fact", "summary": "A note from the other process"},
    )
    # The foreign commit arrives through a poll that also saw every local commit:
    # none of those came a second time.
    seen.wait_for(lambda c: theirs["event_id"] in c.event_ids)
    latest = int(engine.store.conn.execute("SELECT max(id) FROM events").fetchone()[0])
    assert seen.event_ids == list(range(mine[0]["event_id"], latest + 1))
    assert len(set(seen.event_ids)) == len(seen.event_ids)

    mine_after = save(engine, "Local note after the other process")
    seen.wait_for(lambda c: mine_after["event_id"] in c.event_ids)
    assert seen.event_ids.count(mine_after["event_id"]) == 1
    assert seen.event_ids[-2:] == [theirs["event_id"], mine_after["event_id"]]


def test_the_writer_and_the_log_give_the_same_change_sets(engine: Engine) -> None:
    """What a process reads back from an event equals what its writer delivered."""
    seen = Seen()
    engine.subscribe(seen)
    proposal = save(engine, "Prefer dark mode", "preference", session=AGENT, grant=agent_grant())
    engine.dispatch("review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT)
    old = save(engine, "Lunch is at noon")
    new = save(engine, "Lunch is at one", replaces=[old["judgment_id"]])
    engine.dispatch("memory.purge", {"id": new["judgment_id"], "reason": "x"}, OWNER, OWNER_GRANT)
    rows = engine.store.conn.execute(
        "SELECT id, action, command_id, payload FROM events ORDER BY id"
    ).fetchall()
    from_log = [changes_of_event(row) for row in rows]
    assert [c.action for c in seen.changes] == [
        "memory.save",
        "review.approve",
        "memory.save",
        "memory.save",
        "memory.purge",
    ]
    assert seen.changes[3].added == (new["judgment_id"],)
    assert seen.changes[3].status_changed == (old["judgment_id"],)  # control: both kinds
    assert from_log[-len(seen.changes) :] == seen.changes
