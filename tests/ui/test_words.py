"""The owner reads words, not internals: statuses, actions, actors and times as a person
says them, in the review window over a real store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.ui import test_review_window as review
from tests.ui.conftest import agent_propose, owner_save, status_of, wait_until
from ui.qt import Qt
from ui.review.window import TAB_AUDIT, TAB_RETIRED, ReviewWindow
from ui.words import action_word, actor_word, local_time, status_word

bridge = review.bridge  # the review window's fixtures, over a real store
window = review.window
drive = review.drive
ids_in = review.ids_in


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The owner lives in Berlin for this test (the process's local zone)."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


def shown(window: ReviewWindow, tab: int, column: int) -> list[str]:
    model = window.lists[tab].model
    return [str(model.index(r, column).data()) for r in range(model.rowCount())]


def test_words_for_internal_names() -> None:
    assert status_word("stale") == "retired" and status_word("superseded") == "replaced"
    assert status_word("active") == "active"  # control: a plain word stays as it is
    assert action_word("memory.save") == "saved" and action_word("review.approve") == "approved"
    assert "." not in action_word("memory.something_new")  # an unknown action, still no dot
    assert actor_word("owner", "owner") == "you"
    assert actor_word("agent", "claude-code") == "agent claude-code"
    assert actor_word("mcp_client", "codex") == "coding agent (MCP) codex"


def test_local_time_shows_the_zone(berlin: None) -> None:
    assert local_time("2026-11-30T17:04:00Z") == "2026-11-30 18:04 CET"
    assert local_time("2026-07-01T17:04:00.123Z") == "2026-07-01 19:04 CEST"
    assert local_time(None) == ""


def test_retired_and_replaced_records_read_as_words(
    berlin: None,
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    loop: asyncio.AbstractEventLoop,
) -> None:
    owner = SessionFacts.owner_cli(), Grant.owner()
    old_rule = owner_save(engine, "Standup is at 9:30")
    engine.dispatch("memory.retire", {"id": old_rule, "reason": "moved"}, *owner)
    first = owner_save(engine, "The staging server is called kestrel")
    engine.dispatch(
        "memory.save",
        {"summary": "The staging server is called osprey", "kind": "fact", "replaces": [first]},
        *owner,
    )
    agent_propose(engine, "Answer in short paragraphs")
    assert status_of(store, old_rule) == "stale" and status_of(store, first) == "superseded"
    details: dict[int, str] = {}

    async def scenario() -> None:
        window.show_tab(TAB_RETIRED)
        view = window.views[TAB_RETIRED]
        for judgment_id in (old_rule, first):
            row = window.lists[TAB_RETIRED].model.row_of(judgment_id)
            assert row is not None
            view.selectRow(row)
            await wait_until(
                lambda j=judgment_id: (window.current_record() or {}).get("id") == j,
                window.detail_shown,
            )
            details[judgment_id] = window.detail.toPlainText()

    drive(loop, window, scenario)

    # The list: both records are shown (control), each with the word, not the stored value.
    assert set(ids_in(window, TAB_RETIRED)) == {old_rule, first}
    statuses = shown(window, TAB_RETIRED, 4)
    assert sorted(statuses) == ["replaced", "retired"]
    # The detail pane of each.
    assert "Standup is at 9:30" in details[old_rule] and "retired" in details[old_rule]
    assert "kestrel" in details[first] and "replaced" in details[first]
    for text in details.values():
        assert "stale" not in text and "superseded" not in text
        assert "Valid from" in text and "Held from" not in text
    # Times are local with the zone shown.
    assert " CET" in details[old_rule] or " CEST" in details[old_rule]
    recorded = shown(window, TAB_RETIRED, 5)
    assert all(t.endswith((" CET", " CEST")) for t in recorded)

    # The audit log: actions and actors as words, no dotted names.
    audit = window.audit.model
    assert audit.rowCount() >= 5  # control: the events are listed
    rows = [
        [str(audit.index(r, c).data(Qt.ItemDataRole.DisplayRole)) for c in range(6)]
        for r in range(audit.rowCount())
    ]
    actions = {row[2] for row in rows}
    assert {"saved", "retired"} <= actions
    assert not any("." in action for action in actions)
    actors = {row[3] for row in rows}
    assert "you" in actors and "agent claude-code" in actors
    assert not any("owner" in a or "mcp_client" in a for a in actors)
    assert all(row[1].endswith((" CET", " CEST")) for row in rows)
    assert not any("stale" in row[5] or "superseded" in row[5] for row in rows)
    assert window.tabs.tabText(TAB_AUDIT).startswith("Audit log")


def test_every_catalog_action_has_a_word() -> None:
    """The audit log and the detail pane name every action in words: "close" and
    "reschedule" were the fallback's bare verbs."""
    import mama_core.memory  # noqa: F401  (registers the catalog)
    from mama_core.memory.dispatcher import REGISTRY
    from ui.words import ACTION_WORDS

    assert "memory.save" in REGISTRY and len(REGISTRY) > 20  # the control: it was read
    assert sorted(set(REGISTRY) - set(ACTION_WORDS)) == []
    assert action_word("commitment.close") == "marked done or dropped"
    assert action_word("commitment.reschedule") == "due time changed"


def test_an_undo_reads_as_one_in_the_record_history() -> None:
    from ui.review.undo_bar import UNDO_REASON

    assert "owner" not in UNDO_REASON and "Undo" in UNDO_REASON
