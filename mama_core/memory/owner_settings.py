"""The owner's settings that steer scheduled work: their timezone and the daily brief.

Stored append-only in ``owner_settings`` (one row per change, written by the one
writer with its event); the latest row per key is in force. Changing them is the
owner's: the owner's own action, or an agent in a turn the owner started. Any
other turn (a source delta, a schedule, a coding agent over MCP) is refused with
``owner_turn_required`` — outside content must not move the owner's schedule. In
an owner's turn that carried or read words the owner did not write (taint), the
agent's change waits for the owner as a proposed change (``proposed_changes``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from mama_core.errors import OwnerTurnRequiredError
from mama_core.json_types import JsonObject
from mama_core.memory.inputs import ActionInput, MutationInput, Reason
from mama_core.session import SessionFacts
from mama_core.store.connection import Connection

TIMEZONE_KEY = "timezone"
BRIEF_KEY = "brief"

Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Cover = Literal["observations", "commitments", "proposals"]

DAYS: tuple[Day, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Weekday names in ``datetime.weekday()`` order."""
COVERS: tuple[Cover, ...] = ("observations", "commitments", "proposals")
"""What a brief may cover, in the order it shows them."""

_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def check_timezone(name: str) -> str:
    """``name`` if it is an IANA timezone zoneinfo knows (``Europe/Berlin``), else ValueError."""
    if not name or name != name.strip() or name.startswith("/") or ".." in name:
        raise ValueError("not an IANA timezone name such as Europe/Berlin")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"unknown timezone {name!r} (use an IANA name such as Europe/Berlin)"
        ) from None
    return name


def _hhmm(value: str) -> str:
    if not _HHMM.match(value):
        raise ValueError("the time must be HH:MM on a 24-hour clock, such as 08:30")
    return value


def _ordered_days(days: list[Day]) -> list[Day]:
    return sorted(set(days), key=DAYS.index)


def _ordered_covers(covers: list[Cover]) -> list[Cover]:
    return sorted(set(covers), key=COVERS.index)


TimezoneName = Annotated[
    str,
    Field(min_length=1, max_length=64, description="An IANA timezone, e.g. Europe/Berlin."),
    AfterValidator(check_timezone),
]
ClockTime = Annotated[
    str, Field(description="Local time of day, HH:MM (24-hour)."), AfterValidator(_hhmm)
]


class BriefSettings(BaseModel):
    """When the daily brief is due (in the owner's timezone) and what it covers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(default=False, description="Whether the brief is sent at all.")
    days: Annotated[list[Day], AfterValidator(_ordered_days)] = Field(
        default_factory=lambda: list(DAYS[:5]),
        max_length=7,
        description="Weekdays it is due on (mon … sun).",
    )
    time: ClockTime = "08:30"
    covers: Annotated[list[Cover], AfterValidator(_ordered_covers)] = Field(
        default_factory=lambda: list(COVERS),
        max_length=3,
        description="What it covers: observations, commitments, proposals.",
    )


class OwnerSettingsInput(ActionInput):
    """owner.settings: the owner's timezone and daily brief settings."""


_REASON = Field(
    None,
    description="Why you change it; the owner reads it if the change waits for approval.",
)


class SetTimezoneInput(MutationInput):
    """owner.set_timezone: the owner's timezone (only the owner, or in an owner turn)."""

    timezone: TimezoneName
    reason: Reason | None = _REASON


class SetBriefInput(MutationInput):
    """owner.set_brief: the daily brief's schedule and what it covers (only the owner,
    or in an owner turn). A field left out keeps its current value."""

    enabled: bool | None = Field(None, description="Send the brief at all.")
    days: list[Day] | None = Field(None, max_length=7, description="Weekdays (mon … sun).")
    time: ClockTime | None = None
    covers: list[Cover] | None = Field(
        None, max_length=3, description="Any of: observations, commitments, proposals."
    )
    reason: Reason | None = _REASON

    def applied_to(self, current: BriefSettings) -> BriefSettings:
        """``current`` with the fields this input gives."""
        given = self.model_dump(exclude={"command_id", "reason"}, exclude_none=True)
        return BriefSettings.model_validate({**current.model_dump(), **given})


DEFAULT_BRIEF = BriefSettings()
"""Until the owner turns it on: off, weekdays at 08:30, covering everything."""

SETTINGS_ACTIONS: frozenset[str] = frozenset({"owner.set_timezone", "owner.set_brief"})
SETTING_OF_ACTION: dict[str, str] = {
    "owner.set_timezone": TIMEZONE_KEY,
    "owner.set_brief": BRIEF_KEY,
}
"""The setting each settings action changes (a proposed change names it)."""


def require_owner_turn(action: str, session: SessionFacts) -> None:
    """Refuse a settings change from a turn the owner did not start: a source delta, a
    schedule or a coding agent must not move the owner's timezone or switch the brief
    off. (In an owner's turn that read outside words the change is only proposed.)"""
    if not session.is_owner_turn:
        raise OwnerTurnRequiredError(
            f"The owner's settings can only be changed by the owner or in a turn the owner "
            f"started; this {session.turn.value} turn cannot change them.",
            details={"action": action, "turn": session.turn.value},
        )


def latest_values(conn: Connection) -> JsonObject:
    """The value in force for each key (the latest row), parsed from JSON."""
    rows = conn.execute(
        "SELECT key, value FROM owner_settings WHERE id IN "
        "(SELECT max(id) FROM owner_settings GROUP BY key)"
    ).fetchall()
    return {str(key): json.loads(str(value)) for key, value in rows}


def read_settings(conn: Connection) -> tuple[str | None, BriefSettings]:
    """The owner's timezone (None: not set) and daily brief settings (defaults filled in)."""
    values = latest_values(conn)
    timezone = values.get(TIMEZONE_KEY)
    brief = BriefSettings.model_validate(values.get(BRIEF_KEY) or {})
    return (None if timezone is None else str(timezone)), brief


def append_setting(conn: Connection, key: str, value: Any, event_id: int, at: str) -> int:
    """Append one setting row (inside the writer's transaction); its id."""
    cursor = conn.execute(
        "INSERT INTO owner_settings (key, value, event_id, at) VALUES (?, ?, ?, ?)",
        (key, json.dumps(value, sort_keys=True), event_id, at),
    )
    return int(cursor.lastrowid or 0)


def local_zone() -> ZoneInfo:
    """The machine's own timezone, for an owner who has not set one: ``TZ``, else the zone
    ``/etc/localtime`` names, else UTC."""
    candidates: list[str] = []
    env = os.environ.get("TZ", "").lstrip(":")
    if env:
        candidates.append(env)
    with contextlib.suppress(OSError):
        target = str(Path("/etc/localtime").resolve())
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    for name in candidates:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError, OSError):
            return ZoneInfo(name)
    return ZoneInfo("UTC")


def zone_for(name: str | None) -> ZoneInfo:
    """The owner's timezone, or the machine's when unset (or no longer known)."""
    if name:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError, OSError):
            return ZoneInfo(name)
    return local_zone()
