"""Gathering the daily brief: catalog reads in, ``BriefInputs`` out, and the mark of what
each brief covered so the next one says what is new since.

The reads are made for the owner (the brief goes only to the owner's own chat) in
a scheduled turn: every scope, nothing written through the catalog. What a
brief covered is kept in ``briefs`` (the app's series) against its scheduled
input; the next brief counts from the last one whose input was answered, so a
brief that was never sent does not swallow what it would have said.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.transaction import RuntimeDb
from app.runtime.brief import BriefInputs, build_brief
from app.runtime.meetings import read_meetings, today_answer
from app.runtime.schedule import schedule_facts
from mama_core.errors import MamaError
from mama_core.memory import Engine, Grant
from mama_core.memory.owner_settings import zone_for
from mama_core.model import KINDS

COMMITMENT_LIMIT = 1000
"""Open commitments read per brief (sorted by due time, so the overdue come first)."""
PROPOSAL_LIMIT = 50


class BriefWriter:
    """Writes the command-mode brief from the store as it is now."""

    def __init__(
        self, engine: Engine, db: RuntimeDb, clock: Clock | None = None, owner_name: str = "owner"
    ) -> None:
        self.engine = engine
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.facts = schedule_facts(owner_name)
        self.grant = Grant.owner()

    def compose(self, input_id: int | None = None) -> str:
        """The brief's text (blocking). With ``input_id`` (a scheduled input), what it
        covered is recorded against it; without, it is a preview (``mama brief now``)."""
        inputs, newest = self.gather(input_id)
        text = build_brief(inputs)
        if input_id is not None:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO briefs (input_id, built_at, through_obs_id) VALUES (?, ?, ?) "
                    "ON CONFLICT (input_id) DO UPDATE SET built_at = excluded.built_at, "
                    "through_obs_id = excluded.through_obs_id",
                    (input_id, stamp(inputs.now), newest),
                )
        return text

    def previous(self, input_id: int | None = None) -> tuple[int, datetime] | None:
        """What the last answered brief covered (newest observation id, when written)."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT b.through_obs_id, b.built_at FROM briefs b "
                "JOIN mailbox m ON m.id = b.input_id WHERE m.state = 'done' AND b.input_id != ? "
                "ORDER BY b.built_at DESC LIMIT 1",
                (input_id or 0,),
            ).fetchone()
        return None if row is None else (int(row[0]), unstamp(str(row[1])))

    def gather(self, input_id: int | None = None) -> tuple[BriefInputs, int]:
        """The brief's inputs and the newest observation id they cover."""
        now = self.clock.now()
        settings = self._read("owner.settings", {})
        brief = settings["brief"]
        covers = tuple(str(c) for c in brief["covers"])
        previous = self.previous(input_id)
        after_id, since = (0, None) if previous is None else previous
        counts = self._read("observation.counts", {"after_id": after_id})
        newest = int(counts["newest_id"] or after_id)
        commitments: list[dict[str, Any]] = []
        commitments_error: str | None = None
        if "commitments" in covers:
            try:
                listed = self._read(
                    "commitment.list",
                    {"include_proposed": True, "state": "open", "limit": COMMITMENT_LIMIT},
                )
                commitments = list(listed["commitments"])
            except MamaError as exc:
                commitments_error = exc.message
        proposals: list[dict[str, Any]] = []
        if "proposals" in covers:
            found = self._read(
                "memory.search",
                {
                    "query": "",
                    "statuses": ["proposed"],
                    "kinds": [k for k in KINDS if k != "commitment"],
                    "limit": PROPOSAL_LIMIT,
                },
            )
            proposals = list(found["results"])
        zone = zone_for(settings["timezone"])
        inputs = BriefInputs(
            now=now,
            timezone=zone.key,
            since=since,
            covers=covers,
            observation_counts=counts["counts"],
            commitments=commitments,
            proposals=proposals,
            proposals_more=len(proposals) >= PROPOSAL_LIMIT,
            commitments_error=commitments_error,
            meetings=read_meetings(self._read, zone),
        )
        return inputs, newest

    def today(self) -> str:
        """The ``/today`` answer (blocking): the day's meetings in the owner's zone."""
        zone = zone_for(self._read("owner.settings", {})["timezone"])
        return today_answer(self._read, self.clock.now(), zone)

    def _read(self, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.engine.dispatch(action, payload, self.facts, self.grant)
