"""The command-mode brief, from fixed observations, commitments and proposals, line by line."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.runtime.brief import BriefInputs, build_brief

NOW = datetime(2026, 12, 1, 7, 30, tzinfo=UTC)  # Tue 1 Dec, 08:30 in Berlin
SINCE = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)


def commitment(cid: int, **fields: Any) -> dict[str, Any]:
    """A ``commitment.list`` row (the contract's shape)."""
    row: dict[str, Any] = {
        "id": cid,
        "status": "active",
        "state": "open",
        "owed_by": "owner",
        "owed_to": "Anna",
        "summary": f"thing {cid}",
        "due_at": None,
        "due_tz": None,
        "overdue": False,
        "source_observations": [],
        "scopes": ["global"],
        "recorded_at": "2026-11-20T10:00:00.000000Z",
    }
    row.update(fields)
    return row


COUNTS = [
    {"source": "slack:T01", "channel": "general", "count": 8, "last_id": 40},
    {"source": "slack:T01", "channel": "dev", "count": 4, "last_id": 41},
    {"source": "mail:me@example.com", "channel": "INBOX", "count": 3, "last_id": 39},
    {"source": "trello:me", "channel": "Roadmap", "count": 0, "last_id": 0},
]
COMMITMENTS = [
    commitment(
        14,
        summary="Send the Q3 deck",
        due_at="2026-11-30T16:00:00.000000Z",
        due_tz="Europe/Berlin",
        overdue=True,
    ),
    commitment(
        15,
        owed_by="Bob",
        owed_to="owner",
        summary="Review   my\nPR",
        due_at="2026-11-27T09:00:00.000000Z",
        overdue=True,
    ),
    commitment(16, owed_to="Carol", summary="Call back", due_at="2026-12-01T14:00:00.000000Z"),
    commitment(
        17,
        status="proposed",
        owed_to="Dan",
        summary="Draft the contract",
        due_at="2026-12-03T11:00:00.000000Z",
        recorded_at="2026-11-30T18:00:00.000000Z",
    ),
    # Proposed before the last brief: not new, not shown again.
    commitment(18, status="proposed", summary="Old idea", recorded_at="2026-11-29T09:00:00Z"),
    # Due later, active: not in the brief.
    commitment(19, summary="Later", due_at="2026-12-09T09:00:00.000000Z"),
    # Due today and still only proposed: shown under today, marked.
    commitment(
        20,
        status="proposed",
        owed_by="Eve",
        owed_to="Frank",
        summary="Ship the fix",
        due_at="2026-12-01T21:30:00.000000Z",
        recorded_at="2026-11-30T20:00:00.000000Z",
    ),
]
PROPOSALS = [
    {"id": 31, "kind": "preference", "summary": "Reply to Bob within a day"},
    {"id": 17, "kind": "commitment", "summary": "Draft the contract"},
    {"id": 32, "kind": "fact", "summary": "The budget is 10k"},
]


def test_a_brief_with_everything_reads_line_by_line() -> None:
    text = build_brief(
        BriefInputs(
            now=NOW,
            timezone="Europe/Berlin",
            since=SINCE,
            observation_counts=COUNTS,
            commitments=COMMITMENTS,
            proposals=PROPOSALS,
        )
    )
    assert text.splitlines() == [
        "Your brief for Tue 1 Dec 2026, 08:30 (Europe/Berlin)",
        "",
        "New from your connectors since the last brief (Mon 30 Nov 08:30):",
        "• slack:T01: 12 new (general 8, dev 4)",
        "• mail:me@example.com: 3 new (INBOX 3)",
        "",
        "Overdue (2):",
        "• #14 You owe Anna: Send the Q3 deck — was due Mon 30 Nov 17:00",
        "• #15 Bob owes you: Review my PR — was due Fri 27 Nov 10:00",
        "Due today (2):",
        "• #16 You owe Carol: Call back — at 15:00",
        "• #20 Eve owes Frank: Ship the fix — at 22:30 (proposed)",
        "Newly proposed, to confirm or drop (1):",
        "• #17 You owe Dan: Draft the contract — due Thu 3 Dec 12:00 (proposed)",
        "",
        "Waiting for your review (2):",
        "• #31 preference: Reply to Bob within a day",
        "• #32 fact: The budget is 10k",
    ]


def test_an_empty_first_brief_says_so_in_each_section() -> None:
    text = build_brief(BriefInputs(now=NOW, timezone="UTC"))
    assert text.splitlines() == [
        "Your brief for Tue 1 Dec 2026, 07:30 (UTC)",
        "",
        "From your connectors so far:",
        "• nothing new",
        "",
        "Commitments: nothing overdue, nothing due today, nothing new to confirm.",
        "",
        "Proposals: none waiting for your review.",
    ]


def test_the_covers_setting_leaves_sections_out_and_long_lists_are_cut() -> None:
    many = [commitment(100 + i, due_at="2026-11-01T09:00:00Z", overdue=True) for i in range(12)]
    text = build_brief(
        BriefInputs(
            now=NOW,
            timezone="Asia/Tokyo",
            covers=("commitments",),
            observation_counts=COUNTS,
            commitments=many,
            proposals=PROPOSALS,
            proposals_more=True,
        )
    )
    lines = text.splitlines()
    assert lines[0] == "Your brief for Tue 1 Dec 2026, 16:30 (Asia/Tokyo)"
    assert lines[2] == "Overdue (12):"
    assert lines[3] == "• #100 You owe Anna: thing 100 — was due Sun 1 Nov 18:00"
    assert lines[12] == "• #109 You owe Anna: thing 109 — was due Sun 1 Nov 18:00"
    assert lines[13] == "• … and 2 more"
    assert len(lines) == 14
    assert "connectors" not in text and "review" not in text


def test_a_day_is_the_owners_local_day() -> None:
    # 00:30 UTC on 2 Dec: "today" in Tokyo (already 2 Dec there), tomorrow in UTC.
    late = commitment(5, due_at="2026-12-02T00:30:00Z")
    tokyo = build_brief(
        BriefInputs(
            now=datetime(2026, 12, 1, 16, 0, tzinfo=UTC),
            timezone="Asia/Tokyo",
            commitments=[late],
            covers=("commitments",),
        )
    )
    utc = build_brief(
        BriefInputs(
            now=datetime(2026, 12, 1, 16, 0, tzinfo=UTC),
            timezone="UTC",
            commitments=[late],
            covers=("commitments",),
        )
    )
    assert tokyo.splitlines()[2:] == ["Due today (1):", "• #5 You owe Anna: thing 5 — at 09:30"]
    assert utc.splitlines()[2:] == [
        "Commitments: nothing overdue, nothing due today, nothing new to confirm."
    ]


def test_commitments_that_cannot_be_read_are_not_called_nothing() -> None:
    text = build_brief(
        BriefInputs(
            now=NOW,
            timezone="UTC",
            covers=("commitments", "proposals"),
            commitments_error="There is no action 'commitment.list'.",
            proposals=[{"id": n, "kind": "fact", "summary": f"f{n}"} for n in range(1, 13)],
            proposals_more=True,
        )
    )
    lines = text.splitlines()
    assert lines[2] == "Commitments: could not be read (There is no action 'commitment.list'.)"
    assert lines[4] == "Waiting for your review (12+):"
    assert lines[5] == "• #1 fact: f1"
    assert lines[-1] == "• … and 2+ more"
    assert len(lines) == 16
