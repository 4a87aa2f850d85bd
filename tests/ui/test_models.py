"""The table models pass Qt's own model tester through loads, upserts and removals;
list specs admit exactly their statuses, kinds and scopes; the detail pane escapes
what agents wrote."""

from __future__ import annotations

from typing import Any

from pytestqt.modeltest import ModelTester

from ui.qt import Qt
from ui.queries import AuditEntry, describe_actor, describe_payload
from ui.review.detail_html import record_html
from ui.review.lists import ACTIVE_GUIDANCE, PROPOSED, RETIRED, ListSpec
from ui.review.models import (
    ID_ROLE,
    SORT_ROLE,
    AuditLogModel,
    JudgmentTableModel,
    ProposedTableModel,
)
from ui.words import local_time


def row(judgment_id: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": judgment_id,
        "kind": "fact",
        "summary": f"memory {judgment_id}",
        "status": "active",
        "scopes": ["global"],
        "recorded_at": "2026-11-30T01:05:07.123Z",
        **fields,
    }


def test_judgment_model_under_the_model_tester(qtmodeltester: ModelTester) -> None:
    model = JudgmentTableModel()
    qtmodeltester.check(model, force_py=True)
    model.set_rows([row(3), row(2), row(1)])
    model.upsert(row(4))  # new: on top
    model.upsert(row(2, summary="changed"))  # known: in place
    assert model.remove(3)
    assert not model.remove(99)
    assert model.ids() == [4, 2, 1]
    assert model.index(1, 2).data() == "changed"
    assert model.index(0, 0).data(ID_ROLE) == 4
    assert model.index(0, 5).data() == local_time("2026-11-30T01:05:07.123Z")  # the zone shown
    assert model.headerData(2, Qt.Orientation.Horizontal) == "Summary"
    model.upsert(row(5, status="purged", summary=""))
    assert model.index(0, 2).data() == "(text erased)"
    qtmodeltester.check(model, force_py=True)


def test_audit_model_fetches_older_pages(qtmodeltester: ModelTester) -> None:
    at = "2026-11-30T01:00:00Z"
    model = AuditLogModel()
    asked: list[int] = []
    model.more_wanted.connect(asked.append)
    model.set_entries([AuditEntry(i, at, "memory.save", "owner", i, "") for i in (5, 4)], True)
    assert model.canFetchMore()
    model.fetchMore()
    assert asked == [4]
    assert not model.canFetchMore()  # one page at a time
    model.append_page([AuditEntry(3, at, "memory.save", "owner", 3, "")], False)
    model.prepend([AuditEntry(6, at, "review.approve", "owner", 5, "")])
    ids = [model.entry(i).id for i in range(model.rowCount())]  # type: ignore[union-attr]
    assert ids == [6, 5, 4, 3]
    assert model.newest_id == 6 and not model.canFetchMore()
    qtmodeltester.check(model, force_py=True)


def test_list_specs_admit_their_own() -> None:
    assert PROPOSED.admits(row(1, status="proposed"))
    assert not PROPOSED.admits(row(1, status="active"))
    assert ACTIVE_GUIDANCE.admits(row(1, kind="constraint"))
    assert not ACTIVE_GUIDANCE.admits(row(1, kind="fact"))  # active, but not guidance
    assert RETIRED.admits(row(1, status="superseded")) and RETIRED.admits(row(1, status="purged"))
    web = ListSpec(statuses=("active",), scopes=("project:web",))
    assert web.admits(row(1, scopes=["global", "project:web"]))
    assert not web.admits(row(1, scopes=["global"]))
    assert web.payload() == {
        "query": "",
        "statuses": ["active"],
        "limit": 200,
        "scopes": ["project:web"],
    }
    assert not web.ranked and ListSpec(statuses=("active",), query=" words ").ranked


def test_detail_escapes_agent_text() -> None:
    html = record_html(
        {
            "record": row(
                7,
                summary="<script>alert(1)</script> & <b>bold</b>",
                steps=["<i>one</i>"],
                provenance={"actor_kind": "agent", "actor_name": "<x>", "turn": "source_delta"},
                involvement="source_derived",
            ),
            "history": [row(6, status="superseded", summary="<old>")],
            "events": [{"at": "2026-11-30T01:00:00Z", "action": "memory.save", "actor": {}}],
        }
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<i>one</i>" not in html and "&lt;x&gt;" in html
    assert "replaced: #6" in html and "&lt;old&gt;" in html
    assert "new content from a source" in html


def test_audit_descriptions() -> None:
    assert describe_actor({"kind": "owner", "name": "owner", "turn": "ui"}) == "you"
    assert describe_actor({"kind": "agent", "name": "codex"}) == "agent codex"
    assert describe_actor({"kind": "mcp_client", "name": "codex"}) == "coding agent (MCP) codex"
    text = describe_payload(
        {"transitions": [{"id": 3, "from": None, "to": "proposed"}], "reason": "why"}
    )
    assert text == "#3 new → proposed; reason: why"
    retired = describe_payload({"transitions": [{"id": 3, "from": "active", "to": "stale"}]})
    assert retired == "#3 active → retired"


def test_proposals_say_where_they_came_from(qtmodeltester: ModelTester) -> None:
    """The Proposed list has a From column; sorting by it puts one source's claims
    together (an owner's own save says it is theirs: the control)."""
    model = ProposedTableModel()
    qtmodeltester.check(model, force_py=True)
    ops = "from #ops (work-slack) via source delta"
    model.set_rows(
        [
            row(3, status="proposed", origin=f"{ops}, proposed"),
            row(2, status="proposed", origin="inferred by claude in the owner's chat, proposed"),
            row(1, status="proposed", origin=f"{ops}, proposed"),
        ]
    )
    column = ProposedTableModel.FROM_COLUMN
    assert model.headerData(column, Qt.Orientation.Horizontal) == "From"
    assert model.index(0, column).data() == ops
    assert model.index(1, column).data() == "inferred by claude in the owner's chat"
    keys = sorted(
        (model.index(at, column).data(SORT_ROLE), model.index(at, 0).data(ID_ROLE))
        for at in range(3)
    )
    assert [jid for _, jid in keys] == [1, 3, 2]  # the two from #ops side by side
