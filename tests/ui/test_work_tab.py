"""The review window's Work tab over a real store: open commitments by due time, overdue
marked in words and colour at an injected clock, Done / Drop / Edit due through the
catalog (each checked in the store), the source message one click away, and the empty
state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.connectors.base import Batch, Item
from app.durable.connector_store import ConnectorStore
from app.durable.schema import open_runtime_db
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import Store
from tests.ui.conftest import save_artifact, wait_signal, wait_until
from ui.bridge import EngineBridge
from ui.palette import ATTENTION, DANGER
from ui.qt import QtWidgets
from ui.review.empty_state import EMPTY_WORK
from ui.review.window import TAB_ALL, TAB_MESSAGES, TAB_RETIRED, TAB_WORK, ReviewWindow
from ui.review.work_panel import DueDialog

OWNER = SessionFacts.owner_cli()
OWNER_GRANT = Grant.owner()
DEC_3 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


class Clock:
    """The time the Work tab sees, moved by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(DEC_3)


@pytest.fixture
def bridge(engine: Engine, store: Store, loop: asyncio.AbstractEventLoop) -> Iterator[EngineBridge]:
    made = EngineBridge(engine)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def window(
    bridge: EngineBridge, qtbot: QtBot, loop: asyncio.AbstractEventLoop, clock: Clock
) -> Iterator[ReviewWindow]:
    made = ReviewWindow(bridge, clock=clock)
    made.show()
    try:
        yield made
    finally:
        loop.run_until_complete(made.aclose())
        made.close()
        made.deleteLater()


def drive(loop: asyncio.AbstractEventLoop, window: ReviewWindow, scenario: Any) -> Any:
    async def whole() -> Any:
        try:
            await window.load()
            return await scenario()
        finally:
            await window.aclose()

    return loop.run_until_complete(whole())


def slack_message(store: Store, text: str) -> int:
    """A message stored the way a connector stores it; its observation id."""
    db = open_runtime_db(store)
    try:
        item = Item(
            source="slack:T1",
            external_id="C1/1700000000.000100",
            channel="#launch",
            scope="channel:slack/#launch",
            author="Dana",
            at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
            text=text,
        )
        stored = ConnectorStore(db).store_batch("team", "slack", Batch((item,), "{}"))
    finally:
        db.close()
    return stored.new_ids[0]


def commit(engine: Engine, summary: str, **terms: Any) -> int:
    payload: dict[str, Any] = {"kind": "commitment", "summary": summary, "commitment": terms}
    return int(engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)["judgment_id"])


def listed(engine: Engine, state: str = "open") -> list[dict[str, Any]]:
    """What the store holds, read as the owner's CLI would (not from the widgets)."""
    found = engine.dispatch("commitment.list", {"state": state}, OWNER, OWNER_GRANT)
    return list(found["commitments"])


@pytest.fixture
def seeded(engine: Engine, store: Store) -> dict[str, int]:
    obs = slack_message(store, "Can you send me the deck by Tuesday? — Dana")
    return {
        "obs": obs,
        "late": commit(
            engine,
            "Send Dana the deck",
            owed_to="Dana",
            due="2026-12-01T09:00:00+00:00",
            source_observations=[obs],
        ),
        "soon": commit(engine, "Review the budget", due="2026-12-05T17:00:00+01:00"),
        "owed": commit(engine, "Sam sends the contract", owed_by="Sam", owed_to="owner"),
    }


async def open_work(window: ReviewWindow) -> None:
    loaded = asyncio.ensure_future(wait_signal(window.work.loaded))
    window.show_tab(TAB_WORK)
    await loaded


async def answer(
    window: ReviewWindow, button: str, fill: Callable[[DueDialog], None], accept: bool = True
) -> tuple[str, Any] | None:
    """Click a Work button, let ``fill`` edit its dialog, accept (or cancel) it."""
    opened = asyncio.ensure_future(wait_signal(window.dialog_opened))
    finished = asyncio.ensure_future(wait_signal(window.action_finished, 30))
    done = asyncio.ensure_future(wait_signal(window.action_done, 30))
    window.work.buttons[button].click()
    (dialog,) = await opened
    assert isinstance(dialog, DueDialog)
    fill(dialog)
    if accept:
        dialog.ok_button.click()
    else:
        dialog.reject()
    await finished
    if not accept:
        done.cancel()
        return None
    return await done


def test_open_commitments_by_due_time_with_overdue_marked_at_the_clock(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, seeded: dict[str, int], clock: Clock
) -> None:
    work = window.work

    async def scenario() -> None:
        await open_work(window)
        assert work.ids() == [seeded["late"], seeded["soon"], seeded["owed"]]
        assert not window.right.isVisible()  # the tab has its own pane
        danger = DANGER.on(work.view.palette()).lower()
        # Dec 3: the deck (due Dec 1) is overdue, in words and in colour; the rest not.
        assert work.state_text(seeded["late"]) == "Overdue"
        assert work.state_colour(seeded["late"]) == danger
        assert work.state_text(seeded["soon"]) == "Open"
        assert work.state_colour(seeded["soon"]) is None
        assert work.state_text(seeded["owed"]) == "Open"  # no due time: never overdue
        row = work.model.item(2, 4)
        assert row is not None and row.text() == "Sam → you"

        # Another row, then the overdue one: each selection draws the pane afresh.
        def pane_says(text: str) -> Callable[[], bool]:
            return lambda: text in work.detail.toPlainText()

        assert work.select(seeded["soon"])
        await wait_until(pane_says("Review the budget"), work.detail_shown)
        assert work.select(seeded["late"])
        await wait_until(pane_says("deck by Tuesday"), work.detail_shown)
        save_artifact(window, "review-work.png")
        # Dec 6: the budget review (due Dec 5) is overdue too, at the next tick, and the
        # selected row stays selected.
        assert work.select(seeded["soon"])
        clock.now = datetime(2026, 12, 6, tzinfo=UTC)
        assert work.state_text(seeded["soon"]) == "Open"  # not before the tick
        work.tick()
        assert work.state_text(seeded["soon"]) == "Overdue"
        assert work.state_colour(seeded["soon"]) == danger
        current = work.current()
        assert current is not None and current["id"] == seeded["soon"]
        # Nov 1: nothing is.
        clock.now = datetime(2026, 11, 1, tzinfo=UTC)
        work.tick()
        assert [work.state_text(i) for i in work.ids()] == ["Open", "Open", "Open"]

    drive(loop, window, scenario)


def test_done_drop_and_edit_due_each_land_in_the_store(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, engine: Engine, seeded: dict[str, int]
) -> None:
    work = window.work

    async def scenario() -> None:
        await open_work(window)
        # Cancel changes nothing (the control for the three below).
        assert work.select(seeded["late"])
        await answer(window, "done", lambda d: d.reason.setText("sent"), accept=False)
        assert [c["id"] for c in listed(engine)] == work.ids()
        assert listed(engine, "done") == []

        # Done, with a reason.
        assert work.select(seeded["late"])
        got = await answer(window, "done", lambda d: d.reason.setText("sent it on Monday"))
        assert got is not None and got[0] == "commitment.close"
        [done] = listed(engine, "done")
        assert done["summary"] == "Send Dana the deck" and done["owed_to"] == "Dana"
        assert done["source_observations"] == [seeded["obs"]]
        assert seeded["late"] not in [c["id"] for c in listed(engine)]
        assert work.ids() == [seeded["soon"], seeded["owed"]]
        assert window.message.text().startswith("Done: #")

        # Drop needs a reason: OK stays off until one is written.
        assert work.select(seeded["soon"])

        def drop(dialog: DueDialog) -> None:
            assert not dialog.ok_button.isEnabled()
            dialog.reason.setText("the budget moved to Q1")
            assert dialog.ok_button.isEnabled()

        await answer(window, "drop", drop)
        [dropped] = listed(engine, "dropped")
        assert dropped["summary"] == "Review the budget"
        assert work.ids() == [seeded["owed"]]

        # Edit due: a new due time, kept in UTC, the new record selected.
        assert work.select(seeded["owed"])

        def move(dialog: DueDialog) -> None:
            assert dialog.due.isVisible()
            dialog.set_due(datetime(2026, 12, 10, 9, 0, tzinfo=UTC))
            dialog.reason.setText("Sam is away")

        got = await answer(window, "due", move)
        assert got is not None and got[0] == "commitment.reschedule"
        [moved] = listed(engine)
        assert moved["id"] == got[1].judgment_id != seeded["owed"]
        assert moved["due_at"] == "2026-12-10T09:00:00.000000Z"
        assert moved["owed_by"] == "Sam" and moved["summary"] == "Sam sends the contract"
        current = work.current()
        assert current is not None and current["id"] == moved["id"]

        # ... and back to no due time.
        await answer(window, "due", lambda d: d.no_due.setChecked(True))
        [undated] = listed(engine)
        assert undated["due_at"] is None

    drive(loop, window, scenario)


def test_the_source_message_is_one_click_away(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, seeded: dict[str, int]
) -> None:
    work = window.work

    async def scenario() -> None:
        await open_work(window)
        assert work.select(seeded["owed"])
        assert not work.buttons["source"].isEnabled()  # the control: found in no message
        shown = asyncio.ensure_future(wait_signal(work.detail_shown))
        assert work.select(seeded["late"])
        assert await shown == (seeded["late"],)
        pane = work.detail.toPlainText()
        assert "deck by Tuesday" in pane and "Overdue" in pane and "you → Dana" in pane
        assert work.buttons["source"].isEnabled()
        shown = asyncio.ensure_future(wait_signal(window.observation_shown))
        work.buttons["source"].click()
        assert await shown == (seeded["obs"],)
        assert window.tabs.currentIndex() == TAB_MESSAGES
        current = window.messages.current()
        assert current is not None and current["id"] == seeded["obs"]
        assert "deck by Tuesday" in window.messages.text.toPlainText()

    drive(loop, window, scenario)


def test_an_empty_work_tab_says_what_will_appear_there(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, engine: Engine
) -> None:
    async def scenario() -> None:
        await open_work(window)
        state = window.empty_states[TAB_WORK]
        assert state.shown and state.text() == EMPTY_WORK
        # The control: a new commitment appears without a reload, and the note goes.
        loaded = asyncio.ensure_future(wait_signal(window.work.loaded, 30))
        await asyncio.to_thread(commit, engine, "Call the bank", due="2026-12-04T10:00:00Z")
        await loaded
        assert len(window.work.ids()) == 1
        assert not state.shown

    drive(loop, window, scenario)


def test_a_commitment_the_agent_found_is_confirmed_before_it_can_be_closed(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, engine: Engine, store: Store
) -> None:
    obs = slack_message(store, "Can you send me the deck by Tuesday? — Dana")
    scope = "channel:slack/#launch"
    agent = SessionFacts(
        actor_kind=ActorKind.AGENT,
        actor_name="claude-code",
        turn=TurnKind.SOURCE_DELTA,
        source_refs=("slack:C1/1700000000.000100",),
    )
    payload = {
        "kind": "commitment",
        "summary": "Send Dana the deck",
        "scopes": [scope],
        "commitment": {"owed_to": "Dana", "source_observations": [obs]},
    }
    found = engine.dispatch("memory.save", payload, agent, Grant.agent((scope,)))
    proposed = int(found["judgment_id"])
    mine = commit(engine, "Book the room", due="2026-12-09T10:00:00Z")
    work = window.work

    async def scenario() -> None:
        await open_work(window)
        assert work.state_text(proposed) == "Proposed"
        assert work.state_colour(proposed) == ATTENTION.on(work.view.palette()).lower()
        assert work.select(proposed)
        enabled = {name: b.isEnabled() for name, b in work.buttons.items()}
        assert enabled == {
            "done": False,
            "drop": False,
            "due": False,
            "confirm": True,
            "source": True,
        }
        assert work.select(mine)  # the control: an open one of the owner's acts at once
        assert work.buttons["done"].isEnabled() and not work.buttons["confirm"].isEnabled()

        assert work.select(proposed)
        done = asyncio.ensure_future(wait_signal(window.action_done, 30))
        work.buttons["confirm"].click()
        action, _receipt = await done
        assert action == "review.approve"
        [row] = [c for c in listed(engine) if c["id"] == proposed]
        assert row["status"] == "active"  # in the store, not only on screen
        assert work.state_text(proposed) == "Open"
        assert work.buttons["done"].isEnabled()

    drive(loop, window, scenario)


def test_buttons_wait_for_a_selection(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, window: ReviewWindow
) -> None:
    buttons: dict[str, QtWidgets.QPushButton] = window.work.buttons
    assert not any(b.isEnabled() for b in buttons.values())
    assert buttons["done"].toolTip() == "Select a commitment first"


def test_a_closed_commitment_is_one_row_saying_done_and_retires_nothing(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, engine: Engine, seeded: dict[str, int]
) -> None:
    """Edit due then Done append two records and supersede two: the owner still has one
    commitment, now done. All memories lists it once, reading "done" (not "active"), and
    the Retired count does not move."""
    work = window.work
    everything = window.lists[TAB_ALL]
    retired = window.lists[TAB_RETIRED]

    def rows_for(summary: str) -> list[tuple[int, str]]:
        model = everything.model
        return [
            (int(model.record(r)["id"]), model.data(model.index(r, 4)))
            for r in range(model.rowCount())
            if summary in str(model.data(model.index(r, 2)))
        ]

    async def scenario() -> None:
        await open_work(window)
        assert rows_for("Send Dana the deck") == [(seeded["late"], "open")]
        retired_before = retired.model.rowCount()
        assert window.tabs.tabText(TAB_RETIRED) == f"Retired ({retired_before})"

        assert work.select(seeded["late"])
        moved = await answer(window, "due", lambda d: d.no_due.setChecked(True))
        assert moved is not None
        assert work.select(int(moved[1].judgment_id))
        closed = await answer(window, "done", lambda d: d.reason.setText("sent"))
        assert closed is not None
        done_id = int(closed[1].judgment_id)
        await wait_until(lambda: window.data.settled, window.lists_updated)

        # The control: the store does hold the two earlier states, superseded.
        found = engine.dispatch(
            "memory.search",
            {"query": "", "statuses": ["superseded"], "kinds": ["commitment"]},
            OWNER,
            OWNER_GRANT,
        )
        assert {r["id"] for r in found["results"]} == {
            seeded["late"],
            int(moved[1].judgment_id),
        }
        assert rows_for("Send Dana the deck") == [(done_id, "done")]
        assert retired.model.rowCount() == retired_before
        assert window.tabs.tabText(TAB_RETIRED) == f"Retired ({retired_before})"

        # After a reload too (not only when patched from the change-sets).
        reloaded = asyncio.ensure_future(wait_signal(window.refreshed, 30))
        window.refresh()
        await reloaded
        assert rows_for("Send Dana the deck") == [(done_id, "done")]
        assert retired.model.rowCount() == retired_before

        # The detail pane says it too.
        window.show_tab(TAB_ALL)
        shown = asyncio.ensure_future(wait_signal(window.detail_shown, 30))
        assert window.select_id(done_id)
        await shown
        assert "commitment · done" in window.detail.toPlainText()

    drive(loop, window, scenario)


def test_after_done_the_next_commitment_is_selected_and_highlighted(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, seeded: dict[str, int]
) -> None:
    work = window.work

    def highlighted() -> list[int]:
        rows = work.view.selectionModel().selectedRows()
        return [int(work.model.item(i.row(), 0).text()) for i in rows]

    async def scenario() -> None:
        await open_work(window)
        assert work.ids() == [seeded["late"], seeded["soon"], seeded["owed"]]
        assert work.select(seeded["soon"])
        assert highlighted() == [seeded["soon"]]
        await answer(window, "done", lambda d: d.reason.setText("reviewed"))
        current = work.current()
        # The one after it, not the first of the list.
        assert current is not None and current["id"] == seeded["owed"]
        assert highlighted() == [seeded["owed"]]

    drive(loop, window, scenario)


def test_the_due_dialog_shows_its_whole_hint_and_names_its_time_zone(qtbot: Any) -> None:
    from zoneinfo import ZoneInfo

    from ui.review.work_panel import local_zone, zone_name

    for required, edit_due in ((False, False), (True, False), (False, True)):
        dialog = DueDialog(
            None,
            title="Edit due",
            prompt="Move it",
            ok_text="Move",
            reason_required=required,
            edit_due=edit_due,
        )
        qtbot.addWidget(dialog)
        dialog.show()
        hint = dialog.reason.placeholderText()
        assert hint.startswith("Reason")
        metrics = dialog.reason.fontMetrics()
        assert dialog.reason.width() > metrics.horizontalAdvance(hint), hint
        # The picker's zone is named where the picker shows (and only there).
        assert dialog.zone.isVisible() == edit_due
        assert dialog.zone.text().startswith("Time zone: ")
        assert str(getattr(local_zone(), "key", "")) in dialog.zone.text()
    berlin = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    assert zone_name(ZoneInfo("Europe/Berlin"), berlin) == "Europe/Berlin (CET)"
    assert zone_name(UTC, berlin) == "UTC"


def test_a_due_given_in_a_zone_is_listed_in_that_zone_as_the_cli_lists_it(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, engine: Engine
) -> None:
    from zoneinfo import ZoneInfo

    from app.cli.work import due_text as cli_due_text

    new_york = datetime(2026, 12, 4, 9, 30, tzinfo=ZoneInfo("America/New_York"))
    zoned = commit(engine, "Call the New York office", due=new_york)
    plain = commit(engine, "Pay the invoice", due="2026-12-04T10:00:00Z")
    work = window.work

    async def scenario() -> None:
        await open_work(window)
        shown = {
            int(work.model.item(r, 0).text()): work.model.item(r, 2).text()
            for r in range(work.model.rowCount())
        }
        [row] = [c for c in listed(engine) if c["id"] == zoned]
        assert shown[zoned] == "2026-12-04 09:30 America/New_York"
        assert shown[zoned] == cli_due_text(row["due_at"], row["due_tz"])
        # The control: no zone given, the desktop's, named.
        local = datetime(2026, 12, 4, 10, 0, tzinfo=UTC).astimezone()
        assert shown[plain] == local.strftime("%Y-%m-%d %H:%M %Z")

    drive(loop, window, scenario)


def test_the_work_tab_counts_what_is_open(
    loop: asyncio.AbstractEventLoop, window: ReviewWindow, seeded: dict[str, int]
) -> None:
    async def scenario() -> None:
        await open_work(window)
        assert window.tabs.tabText(TAB_WORK) == "Work (3)"
        assert window.work.select(seeded["late"])
        await answer(window, "done", lambda d: d.reason.setText("sent"))
        assert window.tabs.tabText(TAB_WORK) == "Work (2)"

    drive(loop, window, scenario)
