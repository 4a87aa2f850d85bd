"""The review window over a real store: the tabs, the detail pane, and each owner
action — with the store's state and the event it wrote checked after every click."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from mama_core.memory import Engine, Receipt
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
from ui.bridge import EngineBridge
from ui.qt import Qt, QtWidgets
from ui.review.dialogs import EditDialog, PurgeDialog, ReasonDialog
from ui.review.window import (
    TAB_ALL,
    TAB_AUDIT,
    TAB_GUIDANCE,
    TAB_PROPOSED,
    TAB_RETIRED,
    ReviewWindow,
)


@pytest.fixture
def bridge(engine: Engine, store: Store, loop: asyncio.AbstractEventLoop) -> Iterator[EngineBridge]:
    made = EngineBridge(engine)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def window(
    bridge: EngineBridge, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> Iterator[ReviewWindow]:
    made = ReviewWindow(bridge)
    made.show()
    try:
        yield made
    finally:
        loop.run_until_complete(made.aclose())
        made.close()
        made.deleteLater()


def drive(loop: asyncio.AbstractEventLoop, window: ReviewWindow, scenario: Any) -> Any:
    """Load the window, run ``scenario()`` and stop the window's work, all in one loop run
    (a task must never take a step outside the running loop)."""

    async def whole() -> Any:
        try:
            await window.load()
            return await scenario()
        finally:
            await window.aclose()

    return loop.run_until_complete(whole())


def ids_in(window: ReviewWindow, tab: int) -> list[int]:
    return window.lists[tab].model.ids() if tab in window.lists else []


async def act(window: ReviewWindow, trigger: Any) -> tuple[str, Receipt]:
    """Start an action (a click or a key) and wait for its receipt and the lists to follow."""
    done = asyncio.ensure_future(wait_signal(window.action_done))
    trigger()
    action, receipt = await done
    await wait_until(lambda: window.settled, window.lists_updated)
    return action, receipt


async def fill_dialog(window: ReviewWindow, trigger: Any) -> QtWidgets.QDialog:
    opened = asyncio.ensure_future(wait_signal(window.dialog_opened))
    trigger()
    (dialog,) = await opened
    return dialog


def owner_grant() -> tuple[Any, Any]:
    from mama_core.memory import Grant, SessionFacts

    return SessionFacts.owner_cli(), Grant.owner()


def test_tabs_show_proposals_guidance_and_retired(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    proposal = agent_propose(engine, "Answer in short paragraphs")
    guidance = owner_save(
        engine, "Never deploy on Fridays", kind="constraint", applies_when="planning a release"
    )
    fact = owner_save(engine, "The staging server is called kestrel")
    old = owner_save(engine, "Standup is at 9:30")
    engine.dispatch("memory.retire", {"id": old, "reason": "moved to 10:00"}, *owner_grant())

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)

    drive(loop, window, scenario)

    assert ids_in(window, TAB_PROPOSED) == [proposal]
    assert ids_in(window, TAB_GUIDANCE) == [guidance]  # the fact is not guidance
    assert set(ids_in(window, TAB_ALL)) == {proposal, guidance, fact, old}
    assert ids_in(window, TAB_RETIRED) == [old]
    assert window.tabs.tabText(TAB_PROPOSED) == "Proposed (1)"
    assert window.audit.model.rowCount() == 5
    # The first proposal is selected and shown, with who wrote it and how.
    assert window.current_record()["id"] == proposal  # type: ignore[index]
    text = window.detail.toPlainText()
    assert "Answer in short paragraphs" in text
    assert "claude-code" in text and "a turn you started with a message" in text
    assert "the agent inferred it" in text
    assert window.buttons["approve"].isEnabled()
    assert not window.buttons["retire"].isEnabled()


def test_approve_by_button_then_the_next_proposal_by_key(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    first = agent_propose(engine, "Answer in short paragraphs")
    second = agent_propose(engine, "Use metric units", applies_when="giving measurements")

    async def scenario() -> None:
        assert ids_in(window, TAB_PROPOSED) == [second, first]
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        assert window.current_record()["id"] == second  # type: ignore[index]
        action, receipt = await act(
            window,
            lambda: qtbot.mouseClick(window.buttons["approve"], Qt.MouseButton.LeftButton),
        )
        assert (action, receipt.judgment_id, receipt.status) == (
            "review.approve",
            second,
            "active",
        )
        # The approved one left the queue and joined the active guidance.
        assert ids_in(window, TAB_PROPOSED) == [first]
        assert second in ids_in(window, TAB_GUIDANCE)
        await wait_until(lambda: window.current_status() == "proposed", window.detail_shown)
        assert window.current_record()["id"] == first  # type: ignore[index]
        window.current_view().setFocus()
        action, receipt = await act(window, lambda: qtbot.keyClick(window, Qt.Key.Key_A))
        assert receipt.judgment_id == first

    drive(loop, window, scenario)

    for judgment_id in (first, second):
        assert status_of(store, judgment_id) == "active"
        last = events_of(store, judgment_id)[-1]
        assert last["action"] == "review.approve"
        assert last["actor"]["kind"] == "owner" and last["actor"]["turn"] == "ui"
    assert ids_in(window, TAB_PROPOSED) == []
    assert window.tabs.tabText(TAB_PROPOSED) == "Proposed (0)"
    assert "Approved #" in window.message.text()


def test_keys_j_and_k_move_through_the_queue(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    ids = [agent_propose(engine, f"Proposal number {n}") for n in range(3)]

    async def scenario() -> list[int]:
        seen: list[int] = []
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        seen.append(window.current_record()["id"])  # type: ignore[index]
        for key in (Qt.Key.Key_J, Qt.Key.Key_J, Qt.Key.Key_J, Qt.Key.Key_K):
            shown = asyncio.ensure_future(wait_signal(window.detail_shown))
            before = window.current_view().currentIndex().row()
            qtbot.keyClick(window, key)
            if window.current_view().currentIndex().row() != before:
                (judgment_id,) = await shown
                seen.append(judgment_id)
            else:
                shown.cancel()
        return seen

    newest_first = list(reversed(ids))
    assert drive(loop, window, scenario) == [*newest_first, newest_first[1]]


def test_reject_with_reason_and_tombstone(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    proposal = agent_propose(engine, "Always answer in French")

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        dialog = await fill_dialog(window, lambda: qtbot.keyClick(window, Qt.Key.Key_R))
        assert isinstance(dialog, ReasonDialog)
        assert not dialog.ok_button.isEnabled()  # a reason is required
        dialog.reason.setText("I write in English")
        dialog.forbid.setChecked(True)
        done = asyncio.ensure_future(wait_signal(window.action_done))
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
        action, receipt = await done
        assert action == "review.reject" and receipt.status == "rejected"
        await wait_until(lambda: proposal in ids_in(window, TAB_RETIRED), window.lists_updated)

    drive(loop, window, scenario)

    assert status_of(store, proposal) == "rejected"
    event = events_of(store, proposal)[-1]
    assert event["action"] == "review.reject"
    assert event["payload"]["reason"] == "I write in English"
    assert event["payload"].get("tombstone_id")
    assert ids_in(window, TAB_PROPOSED) == []
    # The tombstone holds: the agent cannot save it again.
    from mama_core.memory import TombstonedError

    with pytest.raises(TombstonedError):
        agent_propose(engine, "Always answer in French")


def test_cancelled_dialog_changes_nothing(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    loop: asyncio.AbstractEventLoop,
) -> None:
    proposal = agent_propose(engine, "Always answer in French")

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["reject"].click)
        assert not window.buttons["approve"].isEnabled()  # one action at a time
        dialog.reason.setText("no")  # type: ignore[attr-defined]
        finished = asyncio.ensure_future(wait_signal(window.action_finished))
        dialog.reject()
        assert await finished == ("review.reject",)
        assert window.buttons["reject"].isEnabled()

    drive(loop, window, scenario)
    assert status_of(store, proposal) == "proposed"
    assert [e["action"] for e in events_of(store, proposal)] == ["memory.save"]


def test_edit_and_approve_saves_a_replacement(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    loop: asyncio.AbstractEventLoop,
) -> None:
    proposal = agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> dict[str, Any]:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["edit"].click)
        assert isinstance(dialog, EditDialog)
        dialog.summary.setPlainText("Answer in two short paragraphs at most")
        done = asyncio.ensure_future(wait_signal(window.action_done))
        dialog.ok_button.click()
        _action, receipt = await done
        await wait_until(lambda: window.settled, window.lists_updated)
        new_id = int(receipt.judgment_id)
        window.show_tab(TAB_GUIDANCE)
        shown = asyncio.ensure_future(wait_signal(window.detail_shown))
        assert window.select_id(new_id)
        await shown
        return receipt

    receipt = drive(loop, window, scenario)
    new_id = int(receipt.judgment_id)
    assert receipt.action == "memory.save" and receipt.status == "active"
    assert status_of(store, new_id) == "active"
    assert status_of(store, proposal) == "superseded"
    saved = events_of(store, new_id)[-1]
    assert saved["action"] == "memory.save" and saved["payload"]["replaces"] == [proposal]
    assert new_id in ids_in(window, TAB_GUIDANCE)
    assert proposal in ids_in(window, TAB_RETIRED)
    assert proposal not in ids_in(window, TAB_PROPOSED)
    # The detail of the new record names the one it replaced.
    assert f"replaced: #{proposal}" in window.detail.toPlainText()


def test_retire_with_dont_come_back(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    loop: asyncio.AbstractEventLoop,
) -> None:
    guidance = owner_save(
        engine, "Never deploy on Fridays", kind="constraint", applies_when="planning a release"
    )

    async def scenario() -> None:
        window.show_tab(TAB_GUIDANCE)
        await wait_until(lambda: window.current_status() == "active", window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["retire"].click)
        dialog.reason.setText("we deploy continuously now")  # type: ignore[attr-defined]
        dialog.forbid.setChecked(True)  # type: ignore[attr-defined]
        done = asyncio.ensure_future(wait_signal(window.action_done))
        dialog.ok_button.click()  # type: ignore[attr-defined]
        await done
        await wait_until(lambda: guidance in ids_in(window, TAB_RETIRED), window.lists_updated)

    drive(loop, window, scenario)
    assert status_of(store, guidance) == "stale"
    event = events_of(store, guidance)[-1]
    assert event["action"] == "memory.retire"
    assert event["payload"]["reason"] == "we deploy continuously now"
    assert ids_in(window, TAB_GUIDANCE) == []


def test_retired_tab_marks_tombstones_and_the_owner_lifts_one(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    blocked = owner_save(engine, "Deploy on Fridays", kind="constraint", applies_when="releasing")
    engine.dispatch(
        "memory.retire",
        {"id": blocked, "reason": "two incidents", "forbid_resave": True},
        *owner_grant(),
    )
    plain = owner_save(engine, "Standup is at 9:30")
    engine.dispatch("memory.retire", {"id": plain, "reason": "moved"}, *owner_grant())
    model = window.lists[TAB_RETIRED].model
    column = model.columnCount() - 1

    def mark(judgment_id: int) -> str:
        row = model.row_of(judgment_id)
        assert row is not None
        return str(model.index(row, column).data())

    async def select(judgment_id: int) -> None:
        shown = asyncio.ensure_future(wait_signal(window.detail_shown))
        assert window.select_id(judgment_id)
        await shown

    async def scenario() -> None:
        window.show_tab(TAB_RETIRED)
        await wait_until(lambda: bool(mark(blocked)), window.lists_updated)
        assert model.headerData(column, Qt.Orientation.Horizontal) == "Tombstone"
        # Positive control: a record retired without a tombstone shows none, lifts none.
        await select(plain)
        assert mark(plain) == "" and not window.buttons["lift"].isEnabled()
        await select(blocked)
        assert mark(blocked).startswith("blocks resaving")
        tooltip = model.index(model.row_of(blocked) or 0, column).data(Qt.ItemDataRole.ToolTipRole)
        assert "made by the owner" in tooltip and "two incidents" in tooltip
        assert window.buttons["lift"].isEnabled()

        cancelled = await fill_dialog(window, window.buttons["lift"].click)
        finished = asyncio.ensure_future(wait_signal(window.action_finished))
        cancelled.reject()
        await finished
        assert mark(blocked).startswith("blocks resaving")  # cancelling lifts nothing

        dialog = await fill_dialog(window, window.buttons["lift"].click)
        assert isinstance(dialog, ReasonDialog)
        assert "Deploy on Fridays" in dialog.findChild(QtWidgets.QLabel).text()
        assert not dialog.ok_button.isEnabled()  # a reason is required
        dialog.reason.setText("incidents fixed")
        action, receipt = await act(window, dialog.ok_button.click)
        assert action == "tombstone.lift" and receipt.judgment_id == blocked
        await wait_until(lambda: mark(blocked).startswith("lifted"), window.lists_updated)
        assert not window.buttons["lift"].isEnabled()

    drive(loop, window, scenario)

    reader = store.new_connection()
    try:
        lifted = reader.execute(
            "SELECT lifted_at FROM tombstones WHERE judgment_id = ?", (blocked,)
        ).fetchone()
    finally:
        reader.close()
    assert lifted[0] is not None
    # The text may come back now.
    assert owner_save(engine, "Deploy on Fridays", kind="constraint", applies_when="releasing")


def test_purge_names_what_it_erases(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    loop: asyncio.AbstractEventLoop,
) -> None:
    fact = owner_save(engine, "My bank PIN hint is the birthday of the cat")

    async def scenario() -> None:
        window.show_tab(TAB_ALL)
        await wait_until(lambda: window.current_status() == "active", window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["purge"].click)
        assert isinstance(dialog, PurgeDialog)
        what = dialog.findChild(QtWidgets.QLabel, "purge_what").text()
        assert f"#{fact}" in what and "birthday of the cat" in what
        assert "cannot be undone" in what
        done = asyncio.ensure_future(wait_signal(window.action_done))
        dialog.erase_button.click()
        await done
        await wait_until(lambda: fact in ids_in(window, TAB_RETIRED), window.lists_updated)

    drive(loop, window, scenario)
    assert status_of(store, fact) == "purged"
    assert events_of(store, fact)[-1]["action"] == "memory.purge"
    reader = store.new_connection()
    try:
        summary = reader.execute("SELECT summary FROM judgments WHERE id = ?", (fact,)).fetchone()
    finally:
        reader.close()
    assert "birthday" not in summary[0]


def test_refusal_shows_a_line_not_a_traceback(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    loop: asyncio.AbstractEventLoop,
) -> None:
    proposal = agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> str:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        # Someone else (the CLI, Telegram) approves it first: the window has not caught
        # up (its change-set waits behind this coroutine) when the owner presses Approve.
        engine.dispatch("review.approve", {"id": proposal}, *owner_grant())
        assert window.current_status() == "proposed"
        failed = asyncio.ensure_future(wait_signal(window.action_failed))
        window.verbs.approve()
        _action, message = await failed
        return str(message)

    message = drive(loop, window, scenario)
    assert message and "Traceback" not in message
    assert window.message.text() == message
    assert [e["action"] for e in events_of(store, proposal)] == ["memory.save", "review.approve"]


def test_agent_saves_elsewhere_appear_without_polling(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    saved: list[int] = []

    async def scenario() -> None:
        assert ids_in(window, TAB_PROPOSED) == []
        # The agent writes from another thread, as the owner runtime will.
        worker = threading.Thread(
            target=lambda: saved.append(agent_propose(engine, "Prefer tables for comparisons"))
        )
        worker.start()
        await asyncio.to_thread(worker.join)
        await wait_until(
            lambda: bool(saved) and ids_in(window, TAB_PROPOSED) == saved, window.lists_updated
        )
        await wait_until(lambda: window.settled, window.lists_updated)

    drive(loop, window, scenario)
    assert window.audit.model.entry(0).action == "memory.save"  # type: ignore[union-attr]
    assert window.tabs.tabText(TAB_PROPOSED) == "Proposed (1)"


def test_words_no_memory_has_are_noted_as_no_close_match(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    """Nonsense still finds the nearest memory in meaning; the page says it is no close
    match. Words a memory does have (the control) show no such note."""
    owner_save(engine, "Releases ship on Thursday afternoons", topic="releases")
    owner_save(engine, "The office plant needs water on Mondays")
    owner_save(engine, "The school band plays marimba and percussion")  # near in meaning

    async def search(text: str) -> list[int]:
        window.search_bar.search.setText(text)
        searched = asyncio.ensure_future(wait_signal(window.searched))
        window.search_now()
        await searched
        return ids_in(window, TAB_ALL)

    async def scenario() -> None:
        window.show_tab(TAB_ALL)
        assert await search("release")
        assert window.search_note.isHidden()
        assert await search("xylophone quantum")  # something is shown…
        assert not window.search_note.isHidden()  # …and said to be no close match
        assert "No close match" in window.search_note.text()
        assert await search("plant water")
        assert window.search_note.isHidden()
        await search("")  # the whole list, not a search: no note
        assert window.search_note.isHidden()

    drive(loop, window, scenario)


def test_search_with_filters(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    release = owner_save(engine, "Releases ship on Thursday afternoons", topic="releases")
    owner_save(engine, "The office plant needs water on Mondays")
    proposal = agent_propose(engine, "Mention the release train when asked about releases")

    async def search(text: str, status: str = "Any status") -> list[int]:
        window.search_bar.status_filter.setCurrentText(status)
        window.search_bar.search.setText(text)
        searched = asyncio.ensure_future(wait_signal(window.searched))
        window.search_now()
        await searched
        return ids_in(window, TAB_ALL)

    async def scenario() -> None:
        window.show_tab(TAB_ALL)
        found = await search("release")
        assert release in found and proposal in found
        assert len(found) == 2
        assert await search("release", "Proposed") == [proposal]
        assert await search("release", "Active") == [release]

    drive(loop, window, scenario)


def test_audit_log_lists_events_newest_first(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    proposal = agent_propose(engine, "Answer in short paragraphs")
    engine.dispatch("review.approve", {"id": proposal}, *owner_grant())

    async def scenario() -> None:
        window.show_tab(TAB_AUDIT)

    drive(loop, window, scenario)
    model = window.audit.model
    assert [model.entry(i).action for i in range(model.rowCount())] == [  # type: ignore[union-attr]
        "review.approve",
        "memory.save",
    ]
    assert "proposed → active" in model.entry(0).summary  # type: ignore[union-attr]


def test_screenshot_of_the_review_window(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    agent_propose(engine, "Answer in short paragraphs unless asked for detail")
    agent_propose(
        engine,
        "Run the linters before every commit",
        kind="workflow",
        applies_when="committing code",
        steps=["ruff check .", "ruff format --check .", "pyright"],
    )
    agent_propose(engine, "Prefer tables when comparing options", topic="formatting")
    owner_save(
        engine, "Never deploy on Fridays", kind="constraint", applies_when="planning a release"
    )
    owner_save(engine, "Reply in English", kind="preference", applies_when="writing to anyone")
    owner_save(engine, "The staging server is called kestrel", topic="infrastructure")
    window.resize(1200, 720)

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        shown = asyncio.ensure_future(wait_signal(window.detail_shown))
        window.select_next()
        await shown
        path = save_artifact(window, "review-window.png")
        assert path.stat().st_size > 10_000
        shown = asyncio.ensure_future(wait_signal(window.detail_shown))
        window.show_tab(TAB_GUIDANCE)
        await shown
        save_artifact(window, "review-window-guidance.png")

    drive(loop, window, scenario)


def _agent_retires(engine: Engine, judgment_id: int) -> dict[str, Any]:
    from mama_core.memory import Grant
    from tests.ui.conftest import AGENT

    receipt = engine.dispatch(
        "memory.retire",
        {"id": judgment_id, "reason": "we ship every day now"},
        AGENT,
        Grant.agent(["global"]),
    )
    assert receipt["proposed"] is True, receipt
    return receipt


def test_an_agents_proposal_to_retire_the_owners_rule_is_approved_here(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    rule = owner_save(
        engine, "Never deploy on Fridays", kind="constraint", applies_when="planning a release"
    )
    other = owner_save(engine, "Tag every release", kind="constraint", applies_when="releasing")
    _agent_retires(engine, rule)

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        assert ids_in(window, TAB_PROPOSED) == [rule]  # the other rule waits on nothing
        assert window.current_record()["id"] == rule  # type: ignore[index]
        text = window.detail.toPlainText()
        assert "Waiting for you: agent claude-code proposes to retire" in text
        assert "we ship every day now" in text
        assert window.buttons["approve"].isEnabled()
        assert not window.buttons["edit"].isEnabled()
        action, receipt = await act(
            window,
            lambda: qtbot.mouseClick(window.buttons["approve"], Qt.MouseButton.LeftButton),
        )
        assert (action, receipt.judgment_id, receipt.status) == (
            "review.approve",
            rule,
            "stale",
        )
        assert ids_in(window, TAB_PROPOSED) == []
        assert rule in ids_in(window, TAB_RETIRED)

        # A proposal made while the window is open appears (the change-set names the
        # record), and rejecting it leaves the rule in force.
        worker = threading.Thread(target=lambda: _agent_retires(engine, other))
        worker.start()
        await asyncio.to_thread(worker.join)
        await wait_until(lambda: ids_in(window, TAB_PROPOSED) == [other], window.lists_updated)
        await wait_until(
            lambda: (window.current_record() or {}).get("id") == other, window.detail_shown
        )
        dialog = await fill_dialog(window, lambda: qtbot.keyClick(window, Qt.Key.Key_R))
        assert isinstance(dialog, ReasonDialog)
        assert not dialog.forbid.isVisible()  # rejecting a change leaves no tombstone
        dialog.reason.setText("Tags stay")
        done = asyncio.ensure_future(wait_signal(window.action_done))
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
        action, receipt = await done
        assert action == "review.reject" and receipt.status == "active"
        await wait_until(lambda: ids_in(window, TAB_PROPOSED) == [], window.lists_updated)

    drive(loop, window, scenario)

    assert status_of(store, rule) == "stale"
    last = events_of(store, rule)[-1]
    assert last["action"] == "review.approve"
    assert last["actor"]["kind"] == "owner" and last["actor"]["turn"] == "ui"
    assert status_of(store, other) == "active"
    assert events_of(store, other)[-1]["action"] == "review.reject"


def test_the_detail_follows_the_filter_and_no_action_reaches_a_hidden_record(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    """Select #B, filter so only #A is listed: the pane (and Purge…) move to #A; a
    filter that lists nothing empties the pane and no button acts."""
    printer = owner_save(engine, "The printer is on floor 3")
    plant = owner_save(engine, "The office plant needs water on Mondays")

    def shown_id() -> int | None:
        record = window.current_record()
        return None if record is None else int(record["id"])

    async def search(text: str, status: str = "Any status") -> list[int]:
        window.search_bar.status_filter.setCurrentText(status)
        window.search_bar.search.setText(text)
        searched = asyncio.ensure_future(wait_signal(window.searched))
        window.search_now()
        await searched
        return ids_in(window, TAB_ALL)

    async def scenario() -> None:
        window.show_tab(TAB_ALL)
        await wait_until(lambda: shown_id() is not None, window.detail_shown)
        assert window.select_id(plant)
        await wait_until(lambda: shown_id() == plant, window.detail_shown)

        assert await search("printer floor", "Active") == [printer]
        await wait_until(lambda: shown_id() == printer, window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["purge"].click)
        assert isinstance(dialog, PurgeDialog)
        what = dialog.findChild(QtWidgets.QLabel, "purge_what").text()
        assert f"#{printer}" in what and f"#{plant}" not in what
        dialog.reject()
        await wait_until(window.buttons["purge"].isEnabled, window.lists_updated, 5)

        # Nothing listed: nothing shown, nothing to act on.
        assert await search("", "Proposed") == []
        assert window.current_record() is None
        assert not window.buttons["purge"].isEnabled()
        assert not window.buttons["retire"].isEnabled()
        opened: list[object] = []
        window.dialog_opened.connect(opened.append)
        window.verbs.purge()
        window.verbs.retire()
        assert opened == []

        # Back to everything: the pane follows again (positive control).
        found = await search("", "Any status")
        assert set(found) == {printer, plant}
        await wait_until(lambda: shown_id() in found, window.detail_shown)

    drive(loop, window, scenario)


def _agent_proposes_timezone(engine: Engine, zone: str) -> int:
    """A tainted agent turn's timezone change: it waits for the owner (no record)."""
    from mama_core.memory import ActorKind, Grant, SessionFacts

    agent = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="claude-code").with_taint()
    payload = {"timezone": zone, "reason": "the mail says so"}
    receipt = engine.dispatch("owner.set_timezone", payload, agent, Grant.agent(["global"]))
    return int(receipt["change_id"])


def test_a_settings_change_an_agent_proposed_is_decided_above_the_proposed_list(
    window: ReviewWindow,
    engine: Engine,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    session, grant = owner_grant()
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, session, grant)
    first = _agent_proposes_timezone(engine, "Pacific/Kiritimati")
    panel = window.settings_changes

    def timezone() -> str:
        return str(engine.dispatch("owner.settings", {}, session, grant)["timezone"])

    async def scenario() -> None:
        assert panel.isVisible() and [c.id for c in panel.changes] == [first]
        assert window.tabs.tabText(TAB_PROPOSED) == "Proposed (1)"
        label = panel.findChildren(QtWidgets.QLabel)[-1].text()
        assert label == (
            "claude-code proposes to set your timezone to Pacific/Kiritimati: the mail says so"
        )
        assert timezone() == "Europe/Berlin"
        done = asyncio.ensure_future(wait_signal(window.action_done))
        qtbot.mouseClick(panel.rows[first]["approve"], Qt.MouseButton.LeftButton)
        action, receipt = await done
        assert (action, receipt.change_id) == ("review.approve", first)
        await wait_until(lambda: not panel.changes, panel.updated)
        assert timezone() == "Pacific/Kiritimati" and not panel.isVisible()

        # One proposed while the window is open appears; Reject leaves the setting.
        worker = threading.Thread(target=lambda: _agent_proposes_timezone(engine, "UTC"))
        worker.start()
        await asyncio.to_thread(worker.join)
        await wait_until(lambda: len(panel.changes) == 1, panel.updated)
        second = panel.changes[0].id
        opened = asyncio.ensure_future(wait_signal(window.dialog_opened))
        qtbot.mouseClick(panel.rows[second]["reject"], Qt.MouseButton.LeftButton)
        (dialog,) = await opened
        assert isinstance(dialog, ReasonDialog) and not dialog.forbid.isVisible()
        dialog.reason.setText("I did not move")
        done = asyncio.ensure_future(wait_signal(window.action_done))
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
        action, receipt = await done
        assert (action, receipt.change_id) == ("review.reject", second)
        await wait_until(lambda: not panel.changes, panel.updated)
        assert timezone() == "Pacific/Kiritimati"

    drive(loop, window, scenario)
