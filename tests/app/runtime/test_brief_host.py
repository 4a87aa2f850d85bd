"""The brief's schedule runs in the runtime host (the tray and ``mama daemon`` alike): a
brief missed while nothing ran is written once when the host starts."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.durable.mailbox import Mailbox
from app.durable.schema import open_runtime_db
from app.local.paths import Paths
from app.local.settings import Settings
from app.runtime.schedule import BriefSchedule, OwnerSchedule
from app.serve.host import RuntimeHost
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.runtime.support import ManualClock, Signal


def briefs_journalled(store: Store) -> list[str]:
    conn = store.new_connection()
    try:
        rows = conn.execute(
            "SELECT o.text FROM deliveries d JOIN observations o ON o.id = d.observation_id "
            "WHERE d.kind = 'reply' AND o.text LIKE 'Your brief for %' ORDER BY d.id"
        ).fetchall()
    finally:
        conn.close()
    return [str(r[0]) for r in rows]


def scheduled_inputs(store: Store) -> int:
    conn = store.new_connection()
    try:
        return int(
            conn.execute("SELECT count(*) FROM mailbox WHERE kind = 'scheduled'").fetchone()[0]
        )
    finally:
        conn.close()


def test_the_host_sends_a_brief_missed_while_closed_once(
    tmp_path: Path, engine: Engine, store: Store
) -> None:
    owner = SessionFacts.owner_cli()
    engine.dispatch("owner.set_timezone", {"timezone": "UTC"}, owner, Grant.owner())
    settings = engine.dispatch(
        "owner.set_brief",
        {"enabled": True, "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]},
        owner,
        Grant.owner(),
    )["settings"]
    # An earlier run armed the schedule three days ago, then the app was closed.
    past = ManualClock(datetime.now(UTC) - timedelta(days=3))
    db = open_runtime_db(store)
    try:
        BriefSchedule(db, Mailbox(db, past), past).tick(OwnerSchedule.from_settings(settings))
    finally:
        db.close()

    paths = Paths(home=tmp_path / "home", cache=tmp_path / "cache")
    host = RuntimeHost(paths, Settings(), engine, store, token="")
    turns = Signal()

    async def main() -> None:
        await host.start()
        try:
            assert host.briefs is not None and host.runtime is not None
            # Checked at once too: the turn may have ended before the listener is added.
            host.runtime.turn_listeners.append(lambda _claimed, _reply: turns.notify())
            await turns.until(lambda: bool(briefs_journalled(store)))
        finally:
            await host.stop()

    asyncio.run(main())
    written = briefs_journalled(store)
    assert len(written) == 1 and scheduled_inputs(store) == 1  # three missed days, one brief
    assert written[0].splitlines()[0].endswith("(UTC)")
