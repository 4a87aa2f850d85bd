"""The brief's schedule on the runtime's loop: a ``scheduled`` input in the mailbox at each
due time, durable across restarts.

Due times are the owner's local days and time (``owner.settings``), turned into
instants with zoneinfo, so a daylight-saving change moves nothing the owner sees:
a time that does not exist that day (clocks jump forward) fires at the same
instant as the hour before the jump would (an hour later on the wall clock), and
a time that occurs twice fires once, at its first occurrence.

The last due time posted is kept in ``schedules`` (the app's migration series).
At start, and whenever the loop wakes, the latest due time at or before now is
posted unless it was already: a brief missed while the app was closed is sent
once on the next start, never once per missed day. A change of the settings
re-arms the schedule from that moment, so moving the brief to an earlier hour
does not fire at once for a time that was never set. The mailbox de-duplicates
by due time, so a crash between posting and recording posts nothing twice.

Time is injected (``clock`` and ``wait``); tests move it by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.mailbox import InputKind, Mailbox, NewInput, Posted
from app.durable.transaction import RuntimeDb
from mama_core.errors import MamaError
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.memory.owner_settings import DAYS, SETTINGS_ACTIONS, BriefSettings, zone_for
from mama_core.model import ChangeSet

log = logging.getLogger(__name__)

BRIEF = "brief"
SCHEDULE_SOURCE = "mama:schedule"
"""The observation source of scheduled inputs (``mama:schedule:brief:<due>``)."""

RunDb = Callable[..., Awaitable[Any]]
Wait = Callable[[float], Awaitable[None]]


def _instants(around: datetime, brief: BriefSettings, zone: ZoneInfo) -> list[datetime]:
    """The due instants (UTC) on the local days from a week before ``around`` to a week
    after, in order."""
    hour, minute = (int(p) for p in brief.time.split(":"))
    wanted = {DAYS.index(d) for d in brief.days}
    center = around.astimezone(zone).date()
    found: list[datetime] = []
    for offset in range(-8, 9):
        day: date = center + timedelta(days=offset)
        if day.weekday() in wanted:
            local = datetime.combine(day, time(hour, minute), tzinfo=zone)  # fold=0
            found.append(local.astimezone(UTC))
    return found


def latest_due(now: datetime, brief: BriefSettings, zone: ZoneInfo) -> datetime | None:
    """The latest due instant at or before ``now`` (None: no days chosen, or off)."""
    if not brief.enabled:
        return None
    past = [t for t in _instants(now, brief, zone) if t <= now]
    return past[-1] if past else None


def next_due(after: datetime, brief: BriefSettings, zone: ZoneInfo) -> datetime | None:
    """The first due instant strictly after ``after``."""
    if not brief.enabled:
        return None
    future = [t for t in _instants(after, brief, zone) if t > after]
    return future[0] if future else None


def settings_fingerprint(brief: BriefSettings, zone: ZoneInfo) -> str:
    """What identifies the schedule (a change re-arms it)."""
    data = {"days": brief.days, "time": brief.time, "zone": zone.key, "on": brief.enabled}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ScheduleRow:
    fingerprint: str
    armed_at: datetime
    last_due_at: datetime | None


@dataclass(frozen=True)
class OwnerSchedule:
    """The brief's settings and the zone they are read in."""

    brief: BriefSettings
    zone: ZoneInfo

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> OwnerSchedule:
        """From an ``owner.settings`` result."""
        brief = BriefSettings.model_validate(settings.get("brief") or {})
        return cls(brief, zone_for(settings.get("timezone")))


class BriefSchedule:
    """The durable half: when the brief was last posted, and posting the next one."""

    def __init__(self, db: RuntimeDb, mailbox: Mailbox, clock: Clock | None = None) -> None:
        self.db = db
        self.mailbox = mailbox
        self.clock: Clock = clock or SystemClock()

    def row(self) -> ScheduleRow | None:
        with self.db.read() as conn:
            found = conn.execute(
                "SELECT fingerprint, armed_at, last_due_at FROM schedules WHERE name = ?",
                (BRIEF,),
            ).fetchone()
        if found is None:
            return None
        return ScheduleRow(
            str(found[0]), unstamp(str(found[1])), None if found[2] is None else unstamp(found[2])
        )

    def tick(self, schedule: OwnerSchedule) -> Posted | None:
        """Post the brief if a due time has come that was not posted yet; None otherwise.

        The first tick under new settings arms the schedule at now (nothing before it
        is missed)."""
        now = self.clock.now()
        if not schedule.brief.enabled:
            return None
        fingerprint = settings_fingerprint(schedule.brief, schedule.zone)
        row = self.row()
        if row is None or row.fingerprint != fingerprint:
            self._arm(fingerprint, now, None if row is None else row.last_due_at)
            return None
        floor = max(row.armed_at, row.last_due_at or row.armed_at)
        due = latest_due(now, schedule.brief, schedule.zone)
        if due is None or due <= floor:
            return None
        local = due.astimezone(schedule.zone)
        day = DAYS[local.weekday()].capitalize()
        posted = self.mailbox.post(
            NewInput(
                kind=InputKind.SCHEDULED,
                source=SCHEDULE_SOURCE,
                external_id=f"{BRIEF}:{stamp(due)}",
                text=(
                    f"The daily brief is due ({day} {local:%Y-%m-%d %H:%M} {schedule.zone.key})."
                ),
                author="mama",
                meta={"schedule": BRIEF, "due_at": stamp(due)},
            )
        )
        with self.db.write() as conn:
            conn.execute(
                "UPDATE schedules SET last_due_at = ?, updated_at = ? WHERE name = ?",
                (stamp(due), stamp(now), BRIEF),
            )
        if (now - due) > timedelta(minutes=5):
            log.info("the brief due %s was missed (the app was closed); sent now", stamp(due))
        return posted

    def _arm(self, fingerprint: str, now: datetime, last_due: datetime | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO schedules (name, fingerprint, armed_at, last_due_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                "fingerprint = excluded.fingerprint, armed_at = excluded.armed_at, "
                "updated_at = excluded.updated_at",
                (
                    BRIEF,
                    fingerprint,
                    stamp(now),
                    None if last_due is None else stamp(last_due),
                    stamp(now),
                ),
            )


def is_brief(meta: dict[str, Any]) -> bool:
    """Whether a scheduled input's ``meta`` asks for the daily brief."""
    return meta.get("schedule") == BRIEF


def schedule_facts(owner_name: str = "owner") -> SessionFacts:
    """Who reads for the schedule and the brief: MAMA on the owner's behalf, in a
    scheduled turn (so any write from it would be refused or proposed)."""
    return SessionFacts(actor_kind=ActorKind.OWNER, actor_name=owner_name, turn=TurnKind.SCHEDULED)


class BriefScheduler:
    """The loop: read the settings, post what is due, sleep until the next due time
    (at most ``recheck_s``, and less when the owner changes the settings)."""

    def __init__(
        self,
        engine: Engine,
        schedule: BriefSchedule,
        run_db: RunDb,
        *,
        on_posted: Callable[[Posted], None] = lambda _p: None,
        clock: Clock | None = None,
        wait: Wait | None = None,
        recheck_s: float = 60.0,
    ) -> None:
        self.engine = engine
        self.schedule = schedule
        self.run_db = run_db
        self.on_posted = on_posted
        self.clock: Clock = clock or SystemClock()
        self.recheck_s = recheck_s
        self._wait = wait
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()

        def on_change(changes: ChangeSet) -> None:
            # An approve may apply a settings change an agent proposed.
            if changes.action in SETTINGS_ACTIONS or changes.action == "review.approve":
                loop.call_soon_threadsafe(self._changed.set)

        self._unsubscribe = self.engine.subscribe(on_change)
        self._task = asyncio.create_task(self._run(), name="brief-schedule")

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def step(self) -> float:
        """One pass: post what is due; the seconds until the next pass."""
        settings = await self.engine.dispatch_async(
            "owner.settings", {}, schedule_facts(), Grant.owner()
        )
        owner = OwnerSchedule.from_settings(settings)
        posted = await self.run_db(self.schedule.tick, owner)
        if posted is not None and not posted.duplicate:
            self.on_posted(posted)
        upcoming = next_due(self.clock.now(), owner.brief, owner.zone)
        if upcoming is None:
            return self.recheck_s
        return max(0.0, min(self.recheck_s, (upcoming - self.clock.now()).total_seconds()))

    async def _run(self) -> None:
        while True:
            self._changed.clear()
            try:
                delay = await self.step()
            except MamaError as exc:
                log.warning("the brief's schedule could not be read: %s", exc.message)
                delay = self.recheck_s
            await self._sleep(delay)

    async def _sleep(self, seconds: float) -> None:
        if self._wait is not None:
            await self._wait(seconds)
            return
        # Wakes early when the owner changes the settings; a sleeping laptop's clock
        # jump is caught by the recheck bound.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._changed.wait()
