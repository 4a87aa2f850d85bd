"""Undo after Approve, Reject and Retire: the bar offers it for a while (the time is
injected, so no test waits for it), a click or Ctrl+Z takes the action back as one more
owner action with its own event, and nothing is deleted or edited. And a click on the
tray's notification of a new proposal opens that proposal."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.local.paths import Paths
from mama_core.memory import Engine, Receipt, verify_store
from mama_core.store import Store
from tests.ui.conftest import (
    agent_propose,
    events_of,
    owner_save,
    save_artifact,
    status_of,
    wait_signal,
    wait_until,
)
from tests.ui.test_desktop import keyed, run_desktop, seeded
from tests.ui.test_review_tables import click_row, shown_ids
from tests.ui.test_review_window import act, bridge, drive, fill_dialog
from ui.bridge import EngineBridge
from ui.desktop import Desktop
from ui.qt import Qt, QtWidgets
from ui.review.models import ID_ROLE
from ui.review.table_state import STATE_FILE
from ui.review.undo_bar import UNDO_REASON
from ui.review.window import TAB_ALL, TAB_PROPOSED, TAB_RETIRED, ReviewWindow

__all__ = ["bridge", "keyed", "seeded"]

LEFT = Qt.MouseButton.LeftButton
CTRL = Qt.KeyboardModifier.ControlModifier
NEVER_MS = 10 * 60 * 1000
"""An undo time no test reaches: the bar waits for the test's click."""


def window_with(
    bridge: EngineBridge, loop: asyncio.AbstractEventLoop, undo_ms: int
) -> Iterator[ReviewWindow]:
    made = ReviewWindow(bridge, undo_ms=undo_ms)
    made.show()
    try:
        yield made
    finally:
        loop.run_until_complete(made.aclose())
        made.close()
        made.deleteLater()


@pytest.fixture
def window(
    bridge: EngineBridge, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> Iterator[ReviewWindow]:
    yield from window_with(bridge, loop, NEVER_MS)


@pytest.fixture
def hasty_window(
    bridge: EngineBridge, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> Iterator[ReviewWindow]:
    yield from window_with(bridge, loop, 1)


async def undo_with(window: ReviewWindow, trigger: Any) -> tuple[str, list[Receipt]]:
    undone = asyncio.ensure_future(wait_signal(window.undone))
    trigger()
    action, receipts = await undone
    await wait_until(lambda: window.settled, window.lists_updated)
    return action, receipts


async def activate(window: ReviewWindow) -> None:
    """Make ``window`` the active one again (after a dialog), as the owner's click does."""
    app = QtWidgets.QApplication.instance()
    assert isinstance(app, QtWidgets.QApplication)
    window.activateWindow()
    await wait_until(window.isActiveWindow, app.focusWindowChanged)


def actions_of(store: Store, judgment_id: int) -> list[str]:
    return [event["action"] for event in events_of(store, judgment_id)]


def read(engine: Engine, judgment_id: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": judgment_id}, *owner())["record"]


def proposed_shown(window: ReviewWindow) -> list[int]:
    return shown_ids(window.views[TAB_PROPOSED])


def assert_verifies(store: Store) -> None:
    """What ``mama verify`` checks: the chain, every row it covers, the statuses."""
    reader = store.new_connection()
    try:
        report = verify_store(reader, store.secret)
    finally:
        reader.close()
    assert report.ok, report.problems


def test_undo_an_approve_puts_it_back_in_proposed(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    proposal = agent_propose(engine, "Answer in short paragraphs")
    other = agent_propose(engine, "Use metric units", applies_when="giving measurements")

    async def scenario() -> list[Receipt]:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        view = window.current_view()
        click_row(qtbot, view, shown_ids(view).index(proposal))
        await wait_until(lambda: window.current_record()["id"] == proposal, window.detail_shown)  # type: ignore[index]
        assert not window.undo_bar.isVisible()
        await act(window, lambda: qtbot.mouseClick(window.buttons["approve"], LEFT))
        assert window.undo_bar.isVisible() and window.undo_bar.offering
        assert "back in Proposed" in window.undo_bar.label.text()
        save_artifact(window, "review-undo-bar.png")
        assert status_of(store, proposal) == "active"
        assert proposal not in proposed_shown(window)
        action, receipts = await undo_with(
            window, lambda: qtbot.mouseClick(window.undo_bar.undo_button, LEFT)
        )
        assert action == "review.approve"
        assert not window.undo_bar.isVisible()
        (receipt,) = receipts
        await wait_until(
            lambda: receipt.judgment_id in proposed_shown(window), window.lists_updated
        )
        return receipts

    (receipt,) = drive(loop, window, scenario)

    # Appended, never edited: the save and the approve stay; one owner action follows
    # that takes the approved record out of belief and proposes it again, as the agent's.
    copy = int(receipt.judgment_id)
    assert receipt.get("restored_from") == proposal and receipt.status == "proposed"
    assert actions_of(store, proposal) == ["memory.save", "review.approve"]
    (undo_event,) = events_of(store, copy)
    assert undo_event["id"] == receipt.event_id
    assert undo_event["action"] == "memory.restore"
    assert undo_event["payload"]["reason"] == UNDO_REASON
    assert undo_event["actor"]["kind"] == "owner"
    assert status_of(store, proposal) == "superseded"  # no longer believed
    assert status_of(store, copy) == "proposed"
    original, restored = read(engine, proposal), read(engine, copy)
    assert restored["provenance"] == original["provenance"]
    assert restored["provenance"]["actor_kind"] == "agent"
    assert restored["involvement"] == "agent_inferred"
    assert status_of(store, other) == "proposed"  # control: untouched by the undo
    assert_verifies(store)


def test_ctrl_z_undoes_a_retire_making_it_active_again(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    rule = owner_save(
        engine, "Never deploy on Fridays", kind="constraint", applies_when="planning a release"
    )

    async def scenario() -> list[Receipt]:
        window.show_tab(TAB_ALL)
        await wait_until(lambda: window.current_status() == "active", window.detail_shown)
        view = window.current_view()
        view.setFocus()
        qtbot.keyClick(view, Qt.Key.Key_Z, CTRL)  # control: nothing to undo yet
        assert actions_of(store, rule) == ["memory.save"]
        dialog = await fill_dialog(window, window.buttons["retire"].click)
        dialog.reason.setText("we deploy every day now")  # type: ignore[attr-defined]
        dialog.forbid.setChecked(True)  # type: ignore[attr-defined]
        await act(window, dialog.accept)
        assert status_of(store, rule) == "stale"
        assert window.undo_bar.isVisible()
        assert "active again" in window.undo_bar.label.text()
        # The closed dialog was the active window; the owner clicks back into the list.
        await activate(window)
        view.setFocus()
        _, receipts = await undo_with(window, lambda: qtbot.keyClick(view, Qt.Key.Key_Z, CTRL))
        return receipts

    (restore,) = drive(loop, window, scenario)

    # The retire stays in the log; its tombstone is lifted in the same owner action; the
    # rule is believed again as a new record with the same words and provenance.
    assert status_of(store, rule) == "stale"
    assert actions_of(store, rule) == ["memory.save", "memory.retire"]
    assert len(restore.get("lifted_tombstones")) == 1
    restored = restore.judgment_id
    assert restored != rule and status_of(store, restored) == "active"
    (event,) = events_of(store, restored)
    assert event["action"] == "memory.restore" and event["actor"]["kind"] == "owner"
    original, read_back = read(engine, rule), read(engine, restored)
    assert read_back["provenance"] == original["provenance"]
    assert read_back["involvement"] == "owner_stated"
    assert (read_back["summary"], read_back["kind"], read_back["applies_when"]) == (
        "Never deploy on Fridays",
        "constraint",
        "planning a release",
    )
    assert_verifies(store)


def test_undo_a_reject_puts_the_agents_proposal_back_in_proposed(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    proposal = agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> list[Receipt]:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        dialog = await fill_dialog(window, lambda: qtbot.keyClick(window, Qt.Key.Key_R))
        dialog.reason.setText("too terse")  # type: ignore[attr-defined]
        await act(window, dialog.accept)
        assert "back in Proposed" in window.undo_bar.label.text()
        await wait_until(lambda: proposal not in proposed_shown(window), window.lists_updated)
        _, receipts = await undo_with(window, window.undo_bar.undo_button.click)
        (receipt,) = receipts
        await wait_until(
            lambda: receipt.judgment_id in proposed_shown(window), window.lists_updated
        )
        return receipts

    (restore,) = drive(loop, window, scenario)

    copy = restore.judgment_id
    assert status_of(store, proposal) == "rejected"
    assert actions_of(store, proposal) == ["memory.save", "review.reject"]
    # Not turned into the owner's own believed memory: still the agent's, to review.
    assert status_of(store, copy) == "proposed"
    original, restored = read(engine, proposal), read(engine, copy)
    assert restored["provenance"] == original["provenance"]
    assert restored["provenance"]["actor_kind"] == "agent"
    assert restored["involvement"] == "agent_inferred"
    assert_verifies(store)


def test_the_undo_names_the_restored_record_and_retires_nothing(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    """Undo writes a copy under a new number: the bar promises no number, the message
    after it names the copy, and the record it copies (superseded by the undo, or still
    rejected) is an earlier state of the same proposal, not a retired memory."""
    approved = agent_propose(engine, "Answer in short paragraphs")
    rejected = agent_propose(engine, "Use metric units", applies_when="giving measurements")
    retired_list = window.lists[TAB_RETIRED]

    async def decide_and_undo(target: int, key: Qt.Key) -> Receipt:
        await wait_until(
            lambda: (window.current_record() or {}).get("id") is not None, window.detail_shown
        )
        assert window.select_id(target)
        await wait_until(
            lambda: (window.current_record() or {}).get("id") == target, window.detail_shown
        )
        if key == Qt.Key.Key_R:
            dialog = await fill_dialog(window, lambda: qtbot.keyClick(window, key))
            dialog.reason.setText("not for this team")  # type: ignore[attr-defined]
            await act(window, dialog.accept)
            # The control: a reject does retire it until undone.
            assert target in shown_ids(window.views[TAB_RETIRED])
        else:
            await act(window, lambda: qtbot.keyClick(window, key))
        assert f"#{target}" in window.undo_bar.label.text()
        assert "#" not in window.undo_bar.label.text().split("— Undo", 1)[1]
        _, (receipt,) = await undo_with(window, window.undo_bar.trigger)
        assert receipt.judgment_id is not None
        copy = receipt.judgment_id
        await wait_until(lambda: copy in proposed_shown(window), window.lists_updated)
        assert window.message.text() == f"Undone: #{target} is back in Proposed as #{copy}"
        return receipt

    async def scenario() -> None:
        await wait_until(lambda: retired_list.loaded_once, window.lists_updated)
        assert window.tabs.tabText(TAB_RETIRED) == "Retired (0)"
        for target, key in ((approved, Qt.Key.Key_A), (rejected, Qt.Key.Key_R)):
            await decide_and_undo(target, key)
            assert retired_list.model.rowCount() == 0
            assert window.tabs.tabText(TAB_RETIRED) == "Retired (0)"
            assert target not in shown_ids(window.views[TAB_ALL])
        # Read again from the store, not only patched: the same.
        reloaded = asyncio.ensure_future(wait_signal(window.refreshed, 30))
        window.refresh()
        await reloaded
        assert window.tabs.tabText(TAB_RETIRED) == "Retired (0)"
        assert len(proposed_shown(window)) == 2

    drive(loop, window, scenario)
    # The control: the store keeps both originals, superseded and rejected.
    assert status_of(store, approved) == "superseded"
    assert status_of(store, rejected) == "rejected"


def test_undo_an_approved_revision_brings_the_owners_rule_back(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    rule = owner_save(
        engine, "Answer in long form", kind="preference", applies_when="writing to the owner"
    )
    revision = agent_propose(engine, "Answer in short paragraphs", replaces=[rule])

    async def scenario() -> list[Receipt]:
        await wait_until(
            lambda: (window.current_record() or {}).get("id") == revision, window.detail_shown
        )
        await act(window, lambda: qtbot.keyClick(window, Qt.Key.Key_A))
        assert status_of(store, rule) == "superseded"
        assert "back in Proposed" in window.undo_bar.label.text()
        _, receipts = await undo_with(window, window.undo_bar.trigger)
        (receipt,) = receipts
        await wait_until(
            lambda: receipt.judgment_id in proposed_shown(window), window.lists_updated
        )
        return receipts

    (receipt,) = drive(loop, window, scenario)

    (rule_copy,) = (int(k) for k in receipt.get("also_restored"))
    assert status_of(store, rule_copy) == "active"  # the owner's rule is believed again
    assert read(engine, rule_copy)["involvement"] == "owner_stated"
    assert status_of(store, int(receipt.judgment_id)) == "proposed"
    assert status_of(store, revision) == "superseded"
    assert_verifies(store)


def test_several_approved_at_once_are_undone_together(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    ids = [agent_propose(engine, f"Proposal number {n}") for n in range(2)]

    async def scenario() -> list[Receipt]:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        window.views[TAB_PROPOSED].selectAll()
        done = asyncio.ensure_future(wait_signal(window.batch_done))
        qtbot.keyClick(window, Qt.Key.Key_A)
        await done
        await wait_until(lambda: window.settled, window.lists_updated)
        _, receipts = await undo_with(window, window.undo_bar.trigger)
        copies = {r.judgment_id for r in receipts}
        await wait_until(lambda: copies <= set(proposed_shown(window)), window.lists_updated)
        return receipts

    receipts = drive(loop, window, scenario)

    assert sorted(r.get("restored_from") for r in receipts) == ids
    for judgment_id in ids:
        assert actions_of(store, judgment_id) == ["memory.save", "review.approve"]
        assert status_of(store, judgment_id) == "superseded"
    for receipt in receipts:
        assert receipt.action == "memory.restore"
        assert status_of(store, int(receipt.judgment_id)) == "proposed"
    assert_verifies(store)


def test_the_undo_goes_when_its_time_runs_out(
    hasty_window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    window = hasty_window
    proposal = agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        expired = asyncio.ensure_future(wait_signal(window.undo_bar.expired))
        await act(window, lambda: qtbot.keyClick(window, Qt.Key.Key_A))
        await expired
        assert not window.undo_bar.isVisible()
        await activate(window)  # so that Ctrl+Z would reach the window's shortcut
        window.current_view().setFocus()
        qtbot.keyClick(window.current_view(), Qt.Key.Key_Z, CTRL)
        await wait_until(lambda: window.settled, window.lists_updated)

    drive(loop, window, scenario)

    assert status_of(store, proposal) == "active"
    assert actions_of(store, proposal) == ["memory.save", "review.approve"]


def test_a_click_on_the_new_proposal_notification_opens_it(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)

    async def scenario() -> tuple[int | None, int]:
        assert desktop.memory is not None
        await wait_until(lambda: desktop.tray.waiting == 1, desktop.tray.changed)
        noted = asyncio.ensure_future(wait_signal(desktop.notified))
        newer = agent_propose(desktop.memory.engine, "Use metric units", applies_when="measuring")
        title, _ = await noted
        assert title == "New proposal to review"
        assert desktop.window is None
        loaded = asyncio.ensure_future(wait_signal(desktop.review_loaded))
        desktop.tray.icon.messageClicked.emit()
        await loaded
        window = desktop.window
        assert window is not None and window.isVisible()
        # Its layout is kept beside settings.json, never in the encrypted store.
        assert window.window_state is not None
        assert window.window_state.path == paths.home / STATE_FILE
        await wait_until(
            lambda: (window.current_record() or {}).get("id") == newer, window.detail_shown
        )
        return window.tabs.currentIndex(), newer

    code, (tab, newer) = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert tab == TAB_PROPOSED
    assert newer != seeded["proposal"]  # control: the older proposal was listed first


def owner() -> tuple[Any, Any]:
    from mama_core.memory import Grant, SessionFacts

    return SessionFacts.owner_cli(), Grant.owner()


def test_after_a_decision_the_next_record_is_shown_and_highlighted(
    window: ReviewWindow,
    engine: Engine,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    for n in range(3):
        agent_propose(engine, f"Proposal number {n}")

    def highlighted(view: QtWidgets.QTableView) -> list[int]:
        rows = view.selectionModel().selectedRows()
        return [int(i.siblingAtColumn(0).data(ID_ROLE)) for i in rows]

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        view = window.views[TAB_PROPOSED]
        listed = shown_ids(view)
        middle, following = listed[1], listed[2]
        assert window.select_id(middle)
        await wait_until(lambda: window.current_record()["id"] == middle, window.detail_shown)  # type: ignore[index]
        assert highlighted(view) == [middle]  # the control: selecting highlights
        await act(window, lambda: qtbot.keyClick(window, Qt.Key.Key_A))
        await wait_until(
            lambda: (window.current_record() or {}).get("id") == following, window.detail_shown
        )
        assert highlighted(view) == [following]

    drive(loop, window, scenario)
