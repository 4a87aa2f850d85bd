"""Commitments: where a new one lands, who may close or move one, its life as appended
records (one event per step, ``verify`` holding), its source observations bounded by
the caller's grant, the list's order and overdue flag at an injected time, and a purge
that erases its terms with its text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from mama_core.memory import (
    Engine,
    InvalidInputError,
    InvalidTransitionError,
    NotFoundError,
    OwnerTurnRequiredError,
    SecretRefusedError,
    SessionFacts,
    verify_store,
)
from mama_core.memory.commitments import list_commitments
from mama_core.scopes.grants import Grant
from mama_core.store import sqlcipher
from tests.mama_core.memory.helpers import (
    AGENT,
    MCP_CLIENT,
    OWNER,
    OWNER_GRANT,
    SCHEDULED_AGENT,
    SOURCE_TURN_AGENT,
    agent_grant,
    event_count,
)

NON_OWNER_TURNS = (SOURCE_TURN_AGENT, SCHEDULED_AGENT, MCP_CLIENT)
NON_OWNER_IDS = ["source_delta", "scheduled", "mcp"]
DUE = "2026-12-05T17:00:00+01:00"


def commit(
    engine: Engine,
    summary: str,
    session: SessionFacts = OWNER,
    grant: Grant = OWNER_GRANT,
    scopes: list[str] | None = None,
    **terms: Any,
) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": "commitment", "summary": summary}
    if scopes is not None:
        payload["scopes"] = scopes
    if terms:
        payload["commitment"] = terms
    return engine.dispatch("memory.save", payload, session, grant)


def listed(engine: Engine, **fields: Any) -> list[dict[str, Any]]:
    return engine.dispatch("commitment.list", fields, OWNER, OWNER_GRANT)["commitments"]


def connector_item(engine: Engine, external_id: str, scope: str, text: str) -> int:
    """An item as a connector stores it (its own process writes observations directly,
    so on a connection of its own: the engine's is its writer thread's alone)."""
    conn = engine.store.new_connection()
    try:
        cur = conn.execute(
            "INSERT INTO observations (source, external_id, author, text, received_at) "
            "VALUES ('slack:T1', ?, 'dana', ?, '2026-11-30T09:00:00.000000Z')",
            (external_id, text),
        )
        oid = int(cur.lastrowid or 0)
        conn.execute(
            "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
            "VALUES (?, 'C1', ?, '{}')",
            (oid, scope),
        )
    finally:
        conn.close()
    return oid


# --- landing --------------------------------------------------------------------------


@pytest.mark.parametrize("session", NON_OWNER_TURNS[:2], ids=NON_OWNER_IDS[:2])
def test_from_a_source_turn_what_the_owner_owes_is_proposed_what_is_owed_to_them_active(
    engine: Engine, session: SessionFacts
) -> None:
    owes = commit(engine, "Send Dana the deck", session, agent_grant(), owed_to="Dana", due=DUE)
    owed = commit(
        engine, "Dana sends the budget", session, agent_grant(), owed_by="Dana", owed_to="owner"
    )
    assert owes["status"] == "proposed"
    assert owed["status"] == "active"
    rows = {c["id"]: c for c in listed(engine)}
    assert rows[owes["judgment_id"]]["status"] == "proposed"
    assert rows[owes["judgment_id"]]["owed_by"] == "owner"
    assert rows[owes["judgment_id"]]["due_at"] == "2026-12-05T16:00:00.000000Z"
    assert rows[owed["judgment_id"]]["owed_to"] == "owner"
    record = engine.dispatch("memory.read", {"id": owes["judgment_id"]}, OWNER, OWNER_GRANT)
    assert record["record"]["involvement"] == "source_derived"


def test_a_caller_that_guesses_asks_for_a_proposal(engine: Engine) -> None:
    """``propose``: a commitment owed to the owner would land active from a source turn
    (control, the same words without it); a guess (command mode's rule set) asks for the
    owner's word instead, and approving it makes it active."""
    terms = {"owed_by": "Dana", "owed_to": "owner", "due": DUE}
    landed = commit(engine, "Dana sends the budget", SOURCE_TURN_AGENT, agent_grant(), **terms)
    assert landed["status"] == "active"
    payload = {"kind": "commitment", "summary": "Dana sends the figures", "commitment": terms}
    guessed = engine.dispatch(
        "memory.save", {**payload, "propose": True}, SOURCE_TURN_AGENT, agent_grant()
    )
    assert guessed["status"] == "proposed"
    engine.dispatch("review.approve", {"id": guessed["judgment_id"]}, OWNER, OWNER_GRANT)
    rows = {c["id"]: c for c in listed(engine)}
    assert rows[guessed["judgment_id"]]["status"] == "active"


def test_the_owner_and_an_agent_answering_the_owner_record_active_commitments(
    engine: Engine,
) -> None:
    mine = commit(engine, "Call the bank", owed_to="bank")
    agents = commit(engine, "Review Ann's PR", AGENT, agent_grant(), owed_to="Ann")
    default_terms = commit(engine, "Renew the passport")
    assert mine["status"] == agents["status"] == default_terms["status"] == "active"
    row = next(c for c in listed(engine) if c["id"] == default_terms["judgment_id"])
    assert (row["owed_by"], row["owed_to"], row["due_at"]) == ("owner", "", None)


def test_a_proposed_commitment_is_confirmed_with_review_approve(engine: Engine) -> None:
    proposed = commit(engine, "Ship the report", SOURCE_TURN_AGENT, agent_grant(), due=DUE)
    assert proposed["status"] == "proposed"
    assert [c["id"] for c in listed(engine, include_proposed=False)] == []
    engine.dispatch("review.approve", {"id": proposed["judgment_id"]}, OWNER, OWNER_GRANT)
    active = listed(engine, include_proposed=False)
    assert [(c["id"], c["status"]) for c in active] == [(proposed["judgment_id"], "active")]


def test_a_naive_due_is_refused_with_the_field_named(engine: Engine) -> None:
    with pytest.raises(InvalidInputError) as info:
        commit(engine, "Send the invoice", due="2026-12-05T17:00:00")
    assert info.value.details["fields"] == ["commitment.due"]
    assert "timezone" in info.value.message
    assert commit(engine, "Send the invoice", due=DUE)["status"] == "active"  # control


def test_terms_on_another_kind_are_refused(engine: Engine) -> None:
    with pytest.raises(InvalidInputError):
        engine.dispatch(
            "memory.save",
            {"kind": "fact", "summary": "x", "commitment": {"owed_to": "Dana"}},
            OWNER,
            OWNER_GRANT,
        )


def test_terms_are_secret_scanned_like_every_save(engine: Engine) -> None:
    with pytest.raises(SecretRefusedError):
        commit(engine, "Pay the vendor", owed_to="ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    assert commit(engine, "Pay the vendor", owed_to="Vendor Ltd")["status"] == "active"


def test_source_observations_must_be_within_the_callers_grant(engine: Engine) -> None:
    mine = connector_item(engine, "C1/1", "channel:slack", "Can you send the deck?")
    foreign = connector_item(engine, "C9/1", "channel:secret", "Board minutes")
    grant = agent_grant("channel:slack")
    with pytest.raises(NotFoundError):
        commit(engine, "Send the deck", SOURCE_TURN_AGENT, grant, source_observations=[foreign])
    saved = commit(engine, "Send the deck", SOURCE_TURN_AGENT, grant, source_observations=[mine])
    row = next(c for c in listed(engine) if c["id"] == saved["judgment_id"])
    assert row["source_observations"] == [mine]
    assert row["scopes"] == ["channel:slack"]


# --- owner-turn rule --------------------------------------------------------------------


@pytest.mark.parametrize("session", NON_OWNER_TURNS, ids=NON_OWNER_IDS)
def test_closing_or_moving_outside_an_owner_turn_is_refused(
    engine: Engine, session: SessionFacts
) -> None:
    target = commit(engine, "Book the venue", owed_to="team", due=DUE)["judgment_id"]
    before = event_count(engine)
    for action, payload in (
        ("commitment.close", {"id": target, "outcome": "done"}),
        ("commitment.close", {"id": target, "outcome": "dropped", "reason": "moot"}),
        ("commitment.reschedule", {"id": target, "due": None}),
    ):
        with pytest.raises(OwnerTurnRequiredError) as info:
            engine.dispatch(action, payload, session, agent_grant())
        assert info.value.code == "owner_turn_required"
    assert event_count(engine) == before
    # Positive control: an agent answering the owner may close the same commitment.
    closed = engine.dispatch(
        "commitment.close", {"id": target, "outcome": "done"}, AGENT, agent_grant()
    )
    assert closed["state"] == "done" and closed["replaces"] == target


def test_closing_needs_an_active_open_commitment(engine: Engine) -> None:
    fact = engine.dispatch("memory.save", {"kind": "fact", "summary": "x"}, OWNER, OWNER_GRANT)
    proposed = commit(engine, "Draft the memo", SCHEDULED_AGENT, agent_grant())["judgment_id"]
    target = commit(engine, "Draft the plan")["judgment_id"]
    done = engine.dispatch(
        "commitment.close", {"id": target, "outcome": "done"}, OWNER, OWNER_GRANT
    )["judgment_id"]
    for bad in (fact["judgment_id"], proposed, target, done):
        with pytest.raises(InvalidTransitionError):
            engine.dispatch("commitment.close", {"id": bad, "outcome": "done"}, OWNER, OWNER_GRANT)
    with pytest.raises(InvalidInputError):  # dropping needs a reason
        engine.dispatch(
            "commitment.close", {"id": target, "outcome": "dropped"}, OWNER, OWNER_GRANT
        )


# --- a life -----------------------------------------------------------------------------


def test_a_commitments_life_is_one_event_per_step_and_verifies(engine: Engine) -> None:
    obs = connector_item(engine, "C1/7", "channel:slack", "Can you send the deck by Friday?")
    start = event_count(engine)
    proposed = commit(
        engine,
        "Send Dana the deck",
        SOURCE_TURN_AGENT,
        agent_grant("channel:slack"),
        owed_to="Dana",
        due=DUE,
        source_observations=[obs],
    )
    first = proposed["judgment_id"]
    assert event_count(engine) == start + 1
    engine.dispatch("review.approve", {"id": first}, OWNER, OWNER_GRANT)
    assert event_count(engine) == start + 2
    moved = engine.dispatch(
        "commitment.reschedule",
        {"id": first, "due": "2026-12-08T09:00:00-05:00", "reason": "Dana is away"},
        OWNER,
        OWNER_GRANT,
    )
    assert event_count(engine) == start + 3
    second = moved["judgment_id"]
    done = engine.dispatch(
        "commitment.close", {"id": second, "outcome": "done"}, OWNER, OWNER_GRANT
    )
    assert event_count(engine) == start + 4
    third = done["judgment_id"]

    assert listed(engine) == []  # nothing open any more
    [closed] = listed(engine, state="done")
    assert closed["id"] == third and closed["due_at"] == "2026-12-08T14:00:00.000000Z"
    assert closed["source_observations"] == [obs] and closed["scopes"] == ["channel:slack"]
    assert closed["overdue"] is False
    statuses = [
        engine.dispatch("memory.read", {"id": i}, OWNER, OWNER_GRANT)["record"]["status"]
        for i in (first, second, third)
    ]
    assert statuses == ["superseded", "superseded", "active"]
    read = engine.dispatch("memory.read", {"id": third}, OWNER, OWNER_GRANT)
    assert read["record"]["commitment"]["state"] == "done"
    assert [
        (h["id"], h["commitment"]["state"], h["commitment"]["due_at"]) for h in read["history"]
    ] == [
        (second, "open", "2026-12-08T14:00:00.000000Z"),
        (first, "open", "2026-12-05T16:00:00.000000Z"),
    ]
    actions = [
        r[0]
        for r in engine.store.conn.execute(
            "SELECT action FROM events WHERE id > (SELECT max(id) - 4 FROM events) ORDER BY id"
        )
    ]
    assert actions == ["memory.save", "review.approve", "commitment.reschedule", "commitment.close"]
    report = verify_store(engine.store.conn, engine.store.secret)
    assert report.ok, report.problems

    # Recall sees commitments like other kinds.
    found = engine.dispatch(
        "memory.search", {"query": "deck Dana", "kinds": ["commitment"]}, OWNER, OWNER_GRANT
    )
    assert [r["id"] for r in found["results"]] == [third]


def test_a_changed_terms_row_is_found_by_verify(engine: Engine) -> None:
    target = commit(engine, "Pay rent", owed_to="landlord")["judgment_id"]
    assert verify_store(engine.store.conn, engine.store.secret).ok  # control
    conn = engine.store.conn
    conn.execute("DROP TRIGGER commitment_terms_erase_only")
    conn.execute("UPDATE commitment_terms SET state = 'done' WHERE judgment_id = ?", (target,))
    problems = verify_store(conn, engine.store.secret).problems
    assert any("commitment_terms" in p for p in problems), problems


def test_terms_rows_are_append_only(engine: Engine) -> None:
    obs = connector_item(engine, "C1/2", "channel:slack", "Water my plants?")
    target = commit(engine, "Water the plants", owed_to="Kim", source_observations=[obs])
    conn = engine.store.conn
    for sql in (
        "UPDATE commitment_terms SET due_at = '2030-01-01T00:00:00.000000Z' WHERE judgment_id = ?",
        "DELETE FROM commitment_terms WHERE judgment_id = ?",
        "UPDATE commitment_sources SET observation_id = 1 WHERE judgment_id = ?",
        "DELETE FROM commitment_sources WHERE judgment_id = ?",
    ):
        with pytest.raises(sqlcipher.IntegrityError):
            conn.execute(sql, (target["judgment_id"],))
    assert listed(engine)[0]["source_observations"] == [obs]  # still whole


# --- listing ----------------------------------------------------------------------------


def test_the_list_is_by_due_then_id_with_overdue_at_the_injected_time(engine: Engine) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    later = commit(engine, "Later", due="2026-12-10T09:00:00+00:00")["judgment_id"]
    undated = commit(engine, "Someday")["judgment_id"]
    sooner = engine.mutate(
        _save_input("Sooner", datetime(2026, 12, 1, 9, 0, tzinfo=berlin)), OWNER, OWNER_GRANT
    ).judgment_id
    tie = commit(engine, "Tie", due="2026-12-10T10:00:00+01:00")["judgment_id"]
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    rows = list_commitments(engine.store.conn, OWNER_GRANT, now=now)
    assert [r.id for r in rows] == [sooner, later, tie, undated]
    assert [r.overdue for r in rows] == [True, False, False, False]
    assert rows[0].due_tz == "Europe/Berlin" and rows[1].due_tz is None
    earlier = list_commitments(engine.store.conn, OWNER_GRANT, now=now - timedelta(days=3))
    assert not any(r.overdue for r in earlier)
    assert len(list_commitments(engine.store.conn, OWNER_GRANT, now=now, limit=2)) == 2


def test_the_list_is_bounded_by_the_callers_scopes(engine: Engine) -> None:
    slack = commit(engine, "Slack one", scopes=["channel:slack"])
    mail = commit(engine, "Mail one", scopes=["channel:mail"])
    seen = engine.dispatch("commitment.list", {}, AGENT, agent_grant("channel:slack"))
    assert [c["id"] for c in seen["commitments"]] == [slack["judgment_id"]]
    assert {c["id"] for c in listed(engine)} == {slack["judgment_id"], mail["judgment_id"]}


# --- purge --------------------------------------------------------------------------------


def test_a_purge_erases_the_terms_with_the_text_and_verifies(engine: Engine) -> None:
    target = commit(engine, "Lend Zorblax the ladder", owed_to="Zorblax", due=DUE)["judgment_id"]
    moved = engine.dispatch(
        "commitment.reschedule", {"id": target, "due": None}, OWNER, OWNER_GRANT
    )["judgment_id"]
    engine.dispatch(
        "memory.purge", {"id": moved, "reason": "forget", "include_chain": True}, OWNER, OWNER_GRANT
    )
    rows = engine.store.conn.execute(
        "SELECT owed_by, owed_to, due_at, due_tz, erased_at IS NOT NULL FROM commitment_terms "
        "WHERE judgment_id IN (?, ?)",
        (target, moved),
    ).fetchall()
    assert rows == [("", "", None, None, 1), ("", "", None, None, 1)]
    assert listed(engine) == []
    report = verify_store(engine.store.conn, engine.store.secret)
    assert report.ok, report.problems


def _save_input(summary: str, due: datetime) -> Any:
    from mama_core.memory.dispatcher import parse_input
    from mama_core.memory.inputs import SaveInput

    return parse_input(SaveInput, kind="commitment", summary=summary, commitment={"due": due})


def test_the_export_carries_the_terms(engine: Engine) -> None:
    from mama_core.export import export_rows

    target = commit(engine, "Return the drill", owed_to="Sam", due=DUE)["judgment_id"]
    reader = engine.store.new_connection()
    try:
        rows = [r["row"] for r in export_rows(reader) if r["table"] == "commitment_terms"]
    finally:
        reader.close()
    assert [(r["judgment_id"], r["owed_to"], r["state"]) for r in rows] == [(target, "Sam", "open")]


@pytest.mark.parametrize("session", NON_OWNER_TURNS, ids=NON_OWNER_IDS)
def test_a_non_owner_turn_cannot_close_one_by_retiring_or_replacing_it(
    engine: Engine, session: SessionFacts
) -> None:
    grant = agent_grant()
    # Owed to the owner and found by the same kind of turn: not the owner's own record.
    target = commit(
        engine, "Dana sends the figures", session, grant, owed_by="Dana", owed_to="owner"
    )
    assert target["status"] == "active"
    with pytest.raises(OwnerTurnRequiredError):
        engine.dispatch(
            "memory.retire", {"id": target["judgment_id"], "reason": "done"}, session, grant
        )
    for kind in ("fact", "commitment"):
        revision = engine.dispatch(
            "memory.save",
            {
                "kind": kind,
                "summary": f"Figures arrived ({kind})",
                "replaces": [target["judgment_id"]],
            },
            session,
            grant,
        )
        assert revision["status"] == "proposed"
    assert [c["id"] for c in listed(engine, include_proposed=False)] == [target["judgment_id"]]
    # Positive controls: the same turn retires an agent's fact (not the owner's; what it
    # saves itself is a claim, proposed); an agent answering the owner retires the
    # commitment.
    fact = engine.dispatch("memory.save", {"kind": "fact", "summary": "x"}, AGENT, grant)
    engine.dispatch("memory.retire", {"id": fact["judgment_id"], "reason": "moot"}, session, grant)
    engine.dispatch(
        "memory.retire", {"id": target["judgment_id"], "reason": "arrived"}, AGENT, grant
    )
    assert listed(engine, include_proposed=False) == []
