"""An input whose message the owner purged before the agent took it never reaches
the agent: the mailbox closes it unseen, and the next input is handed over."""

from __future__ import annotations

from app.runtime.mailbox import InputKind, InputState, Mailbox, NewInput
from app.runtime.transaction import RuntimeDb
from mama_core.memory import Engine, Grant, SessionFacts
from tests.app.runtime.support import ManualClock


def test_a_purged_pending_message_is_not_handed_to_the_agent(
    engine: Engine, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    gone = box.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "my pin is 4417"))
    kept = box.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:2", "good morning"))
    engine.dispatch(
        "memory.purge",
        {"observation_ids": [gone.observation_id], "reason": "sent by mistake"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    claimed = box.claim()
    assert claimed is not None and claimed.id == kept.input_id  # the control goes on
    assert claimed.text == "good morning"
    assert box.state_of(gone.input_id) == (InputState.DONE, 0)
    assert box.claim() is None
