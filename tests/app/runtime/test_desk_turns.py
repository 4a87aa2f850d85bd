"""Desk messages in the runtime: owner turns of the same mailbox as Telegram's, one
conversation in both directions, and what the store says about a desk turn."""

from __future__ import annotations

from app.backends.command_mode import CommandModeBackend
from app.durable.desk import conversation, desk_input, outcome
from app.durable.mailbox import InputKind, InputState, NewInput
from app.durable.transaction import RuntimeDb
from app.runtime.owner_runtime import OwnerRuntime
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.runtime.support import RecordingChannel, Signal
from tests.app.runtime.test_owner_runtime import run, texts


def test_a_desk_message_is_an_owner_turn_and_telegram_shows_it_above_the_reply(
    engine: Engine, store: Store
) -> None:
    posted: dict[str, int] = {}

    async def scenario(runtime: OwnerRuntime, channel: RecordingChannel, _: Signal) -> None:
        desk = await runtime.post(desk_input("/remember fact The boiler is serviced in May"))
        posted["desk"] = desk.input_id
        await channel.signal.until(lambda: len(channel.sent) == 1)
        telegram = NewInput(InputKind.OWNER_MESSAGE, "telegram", "42:7", "/search boiler")
        await runtime.post(telegram)
        await channel.signal.until(lambda: len(channel.sent) == 2)

    run(engine, store, CommandModeBackend(), scenario, channel := RecordingChannel())

    first, second = texts(channel)
    assert first == (
        "At the desk you wrote: “/remember fact The boiler is serviced in May”\n\n"
        "Saved #1 (fact, active)."
    )
    # Positive control: a Telegram message's reply carries no desk quote.
    assert second == "#1 fact: The boiler is serviced in May"
    # The owner typed it: the memory is the owner's, made in an owner turn from the desk.
    record = engine.dispatch("memory.read", {"id": 1}, SessionFacts.owner_cli(), Grant.owner())
    saved = record["record"]
    assert saved["involvement"] == "owner_stated"
    assert saved["provenance"]["turn"] == "owner_message"
    assert saved["provenance"]["message_ref"].startswith("desk:")


def test_the_outcome_and_the_history_follow_the_store(
    engine: Engine, store: Store, runtime_db: RuntimeDb
) -> None:
    async def scenario(runtime: OwnerRuntime, channel: RecordingChannel, _: Signal) -> None:
        await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "42:1", "/search x"))
        await channel.signal.until(lambda: len(channel.sent) == 1)
        await runtime.post(desk_input("/remember fact Invoices go out on the 3rd"))
        await channel.signal.until(lambda: len(channel.sent) == 2)

    run(engine, store, CommandModeBackend(), scenario)

    lines = conversation(runtime_db)
    said = [(line.from_owner, line.via, line.text) for line in lines]
    assert said == [
        (True, "telegram", "/search x"),
        (False, "telegram", "Nothing found."),
        (True, "desk", "/remember fact Invoices go out on the 3rd"),
        (False, "desk", "Saved #1 (fact, active)."),
    ]
    desk_turn = outcome(runtime_db, lines[2].input_id)
    assert desk_turn.state is InputState.DONE and desk_turn.reply == "Saved #1 (fact, active)."

    # The owner purges the Telegram message: it leaves the history at once; its reply and
    # the desk's exchange (the positive control) stay.
    engine.dispatch(
        "memory.purge",
        {"observation_ids": [lines[0].observation_id], "reason": "The owner forgets it."},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    after = [(line.from_owner, line.text) for line in conversation(runtime_db)]
    assert after == [
        (False, "Nothing found."),
        (True, "/remember fact Invoices go out on the 3rd"),
        (False, "Saved #1 (fact, active)."),
    ]
