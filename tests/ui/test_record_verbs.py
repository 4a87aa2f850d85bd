"""The review buttons follow the core's ``allowed`` (``ui.review.record_verbs``): records
as the real engine reads them for the owner, one shown or several selected."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mama_core.embeddings import Embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import Store
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save
from ui.review.record_verbs import (
    BUSY,
    BUTTONS,
    RecordButtons,
    qualifies,
    several_states,
    single_states,
)


@pytest.fixture
def engine(store: Store, embedder: Embedder) -> Iterator[Engine]:
    with Engine(store, embedder, EngineConfig()) as opened:
        yield opened


def _read(engine: Engine, jid: int, *, owner: bool = True) -> dict[str, Any]:
    who = (OWNER, OWNER_GRANT) if owner else (AGENT, agent_grant())
    return dict(engine.dispatch("memory.read", {"id": jid}, *who)["record"])


def _enabled(states: dict[str, tuple[bool, str]]) -> set[str]:
    return {name for name, (on, _tip) in states.items() if on}


def _records(engine: Engine) -> dict[str, dict[str, Any]]:
    proposal = save(engine, "Prefer tabs", "preference", session=AGENT, grant=agent_grant())
    active = save(engine, "The build server is in Oslo")
    purged = save(engine, "The old server was in Bergen")
    engine.dispatch(
        "memory.purge", {"id": purged["judgment_id"], "reason": "x"}, OWNER, OWNER_GRANT
    )
    return {
        "proposed": _read(engine, proposal["judgment_id"]),
        "active": _read(engine, active["judgment_id"]),
        "purged": _read(engine, purged["judgment_id"]),
        "agent_view": _read(engine, proposal["judgment_id"], owner=False),
    }


def test_one_record_enables_what_its_allowed_says(engine: Engine) -> None:
    records = _records(engine)
    proposed = single_states(records["proposed"], busy=False, tombstone=False)
    assert _enabled(proposed) == {"approve", "edit", "reject", "purge"}
    assert proposed["approve"][1] == "Approve the proposal (A)"
    assert proposed["retire"] == (False, "Select an active memory to retire it")
    assert _enabled(single_states(records["active"], busy=False, tombstone=False)) == {
        "retire",
        "purge",
    }
    purged = single_states(records["purged"], busy=False, tombstone=True)
    assert _enabled(purged) == {"lift"}
    assert purged["purge"] == (False, "This memory is already purged")
    # The same proposal as an agent reads it: nothing of the owner's to press.
    assert _enabled(single_states(records["agent_view"], busy=False, tombstone=False)) == set()
    assert _enabled(single_states(None, busy=False, tombstone=False)) == set()
    busy = single_states(records["proposed"], busy=True, tombstone=True)
    assert _enabled(busy) == set() and {tip for _on, tip in busy.values()} == {BUSY}


def test_several_rows_take_a_verb_only_when_each_allows_it(engine: Engine) -> None:
    records = _records(engine)
    second = _read(
        engine,
        save(engine, "Prefer spaces", "preference", session=AGENT, grant=agent_grant())[
            "judgment_id"
        ],
    )
    both = several_states([records["proposed"], second], busy=False)
    assert _enabled(both) == {"approve", "reject"}
    assert both["approve"][1] == "Approve the 2 selected proposals, each on its own (A)"
    mixed = several_states([records["proposed"], records["active"]], busy=False)
    assert _enabled(mixed) == set()
    assert mixed["retire"] == (False, "Some of the selected memories are not active")
    assert qualifies("review.approve")(records["proposed"])
    assert not qualifies("review.approve")(records["active"])
    assert qualifies("memory.retire")(records["active"])


def test_the_buttons_show_the_states(qtbot: Any, engine: Engine) -> None:
    from ui.qt import QtWidgets

    pressed: list[str] = []
    holder = QtWidgets.QWidget()
    qtbot.addWidget(holder)
    buttons = RecordButtons(
        {name: (lambda *_checked, n=name: pressed.append(n)) for name, _ in BUTTONS}
    )
    holder.setLayout(buttons.bar)
    assert [b.isEnabled() for b in buttons.buttons.values()] == [False] * len(BUTTONS)
    buttons.show(single_states(_records(engine)["active"], busy=False, tombstone=False))
    assert {n for n, b in buttons.buttons.items() if b.isEnabled()} == {"retire", "purge"}
    assert buttons.buttons["approve"].toolTip() == "Select a proposal to approve it"
    buttons.buttons["retire"].click()
    assert pressed == ["retire"]
