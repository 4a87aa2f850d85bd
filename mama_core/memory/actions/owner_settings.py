"""owner.settings, owner.set_timezone and owner.set_brief: the owner's timezone and
daily brief, changed only by the owner or in a turn the owner started."""

from __future__ import annotations

from typing import Any

from mama_core.memory.dispatcher import Call, Env, command_for, mutation, query
from mama_core.memory.owner_settings import (
    BRIEF_KEY,
    TIMEZONE_KEY,
    BriefSettings,
    OwnerSettingsInput,
    SetBriefInput,
    SetTimezoneInput,
    append_setting,
    latest_values,
    read_settings,
    require_owner_turn,
)
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.store.connection import Connection


@query(
    "owner.settings",
    OwnerSettingsInput,
    description="The owner's timezone and daily brief settings (days, time, what it covers).",
)
def owner_settings(conn: Connection, call: Call[OwnerSettingsInput], env: Env) -> dict[str, Any]:
    return read_settings(conn)


@mutation(
    "owner.set_timezone",
    SetTimezoneInput,
    description="Set the owner's timezone (IANA name). Only when the owner asks you to, "
    "in the owner's own turn.",
)
def set_timezone_command(call: Call[SetTimezoneInput], env: Env) -> Command:
    require_owner_turn(call.spec.name, call.session)
    timezone = call.input.timezone

    def apply(tx: Tx) -> Applied:
        append_setting(tx.conn, TIMEZONE_KEY, timezone, tx.event_id, tx.at)
        return Applied(
            None,
            {"key": TIMEZONE_KEY, "value": timezone},
            {"settings": read_settings(tx.conn)},
        )

    return command_for(call, apply)


@mutation(
    "owner.set_brief",
    SetBriefInput,
    description="Change the daily brief: on/off, weekdays, time (HH:MM, owner's timezone), "
    "what it covers. Fields left out stay. Only when the owner asks you to, in their own turn.",
)
def set_brief_command(call: Call[SetBriefInput], env: Env) -> Command:
    require_owner_turn(call.spec.name, call.session)
    inp = call.input

    def apply(tx: Tx) -> Applied:
        current = BriefSettings.model_validate(latest_values(tx.conn).get(BRIEF_KEY) or {})
        value = inp.applied_to(current).model_dump(mode="json")
        append_setting(tx.conn, BRIEF_KEY, value, tx.event_id, tx.at)
        return Applied(
            None, {"key": BRIEF_KEY, "value": value}, {"settings": read_settings(tx.conn)}
        )

    return command_for(call, apply)
