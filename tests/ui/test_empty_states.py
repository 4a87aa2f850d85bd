"""Each empty list of the review window says what will appear there and how; the
placeholder goes as soon as something is listed, and never shows while loading."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from mama_core.memory import Engine
from mama_core.store import Store
from tests.ui.conftest import agent_propose, owner_save, save_artifact, wait_signal, wait_until
from ui.bridge import EngineBridge
from ui.palette import MUTED
from ui.review.empty_state import EMPTY_ALL, EMPTY_PROPOSED, EMPTY_SEARCH
from ui.review.window import (
    TAB_ALL,
    TAB_AUDIT,
    TAB_GUIDANCE,
    TAB_MESSAGES,
    TAB_PEOPLE,
    TAB_PROPOSED,
    TAB_RETIRED,
    TAB_WORK,
    ReviewWindow,
)

EXPECTED = {
    TAB_PROPOSED: ("No proposals waiting", "agent proposes", "approve"),
    TAB_GUIDANCE: ("No active guidance", "steer the agent", "approve a proposal"),
    TAB_ALL: ("Nothing remembered yet", "mama remember", "Telegram"),
    TAB_RETIRED: ("Nothing retired", "retire", "reject"),
    TAB_AUDIT: ("No events yet", "Every change"),
    TAB_MESSAGES: ("No messages kept yet", "Telegram", "connectors", "Slack, mail", "purge"),
    TAB_WORK: ("Nothing open", "soonest due", "approve one"),
    TAB_PEOPLE: ("No one known yet", "commitments", "meetings"),
}


@pytest.fixture
def window(
    engine: Engine, store: Store, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> Iterator[ReviewWindow]:
    bridge = EngineBridge(engine)
    made = ReviewWindow(bridge)
    made.show()
    try:
        yield made
    finally:
        loop.run_until_complete(made.aclose())
        made.close()
        made.deleteLater()
        bridge.close()


def run(loop: asyncio.AbstractEventLoop, window: ReviewWindow, scenario: Any) -> Any:
    async def whole() -> Any:
        try:
            return await scenario()
        finally:
            await window.aclose()

    return loop.run_until_complete(whole())


def test_every_empty_tab_says_what_will_appear_and_how(
    window: ReviewWindow, loop: asyncio.AbstractEventLoop
) -> None:
    # While loading, no list claims to be empty.
    assert not any(state.shown for state in window.empty_states.values())

    async def scenario() -> None:
        await window.load()
        await window.messages.load()
        await window.work.load()
        await window.people.load()

    run(loop, window, scenario)
    assert set(window.empty_states) == set(EXPECTED)
    for tab, words in EXPECTED.items():
        window.show_tab(tab)
        state = window.empty_states[tab]
        assert state.shown, tab
        for word in words:
            assert word in state.text(), (tab, word, state.text())
        # Drawn over the whole empty list, not squeezed into a corner.
        view = window.current_view()
        assert state.label.geometry() == view.viewport().rect()
    window.show_tab(TAB_PROPOSED)
    save_artifact(window, "review-empty.png")
    # In the muted colour, which reads on the list (WCAG AA), not in the rows' black.
    label = window.empty_states[TAB_PROPOSED].label
    drawn = label.palette().color(label.foregroundRole())
    assert drawn.name() == MUTED.on(window.views[TAB_PROPOSED].palette())
    assert window.empty_states[TAB_PROPOSED].text() == EMPTY_PROPOSED


def test_the_placeholder_goes_when_something_is_listed_and_comes_back(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    owner_save(engine, "The staging server is called kestrel")
    proposals = window.empty_states[TAB_PROPOSED]

    async def scenario() -> None:
        await window.load()
        # A memory is listed: All memories and the audit log show rows, not the text.
        assert not window.empty_states[TAB_ALL].shown
        assert not window.empty_states[TAB_AUDIT].shown
        # ... while the tabs that are still empty keep saying so (positive control).
        assert proposals.shown and window.empty_states[TAB_RETIRED].shown
        proposal = agent_propose(engine, "Answer in short paragraphs")
        await wait_until(window.lists[TAB_PROPOSED].model.ids, window.lists_updated)
        assert not proposals.shown
        window.show_tab(TAB_PROPOSED)
        window.select_id(proposal)
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        done = asyncio.ensure_future(wait_signal(window.action_done))
        window.verbs.approve()
        await done
        await wait_until(lambda: not window.lists[TAB_PROPOSED].model.ids(), window.lists_updated)
        assert proposals.shown
        assert not window.empty_states[TAB_GUIDANCE].shown  # the approved one is there

    run(loop, window, scenario)


def test_a_search_with_no_match_says_so_not_that_nothing_is_remembered(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    owner_save(engine, "Releases ship on Thursday afternoons")
    state = window.empty_states[TAB_ALL]

    async def search(text: str, status: str) -> None:
        window.search_bar.status_filter.setCurrentText(status)
        window.search_bar.search.setText(text)
        searched = asyncio.ensure_future(wait_signal(window.searched))
        window.search_now()
        await searched

    async def scenario() -> None:
        await window.load()
        window.show_tab(TAB_ALL)
        assert not state.shown
        await search("", "Retired")
        assert state.shown and state.text() == EMPTY_SEARCH
        await search("", "Any status")
        assert not state.shown  # positive control: the memory is listed again

    run(loop, window, scenario)
    assert EMPTY_ALL != EMPTY_SEARCH
