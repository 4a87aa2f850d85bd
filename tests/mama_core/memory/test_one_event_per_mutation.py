"""Every mutation leaves exactly one event and one receipt; a refused one (bad
input, no grant, foreign scope, owner-turn rule, tombstone, secret, bad
transition) leaves none; a replay leaves none. Checked over random command
sequences, with the hash chain verified after each sequence."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mama_core.errors import MamaError
from mama_core.memory import Engine, Grant, verify_store
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    SOURCE_TURN_AGENT,
    agent_grant,
)

CALLERS = [
    (OWNER, OWNER_GRANT),
    (AGENT, agent_grant("global")),
    (AGENT, agent_grant("project:a")),
    (SOURCE_TURN_AGENT, agent_grant("global", "project:a")),
    (AGENT, Grant.agent([])),
]
PHRASES = [
    "Use tabs for indentation",
    "Deploy on Tuesdays only",
    "The budget is ten thousand",
    "Reply to clients within a day",
    "Run the linter before commits",
]
KINDS = ["fact", "decision", "preference", "constraint", "lesson", "workflow", "task"]
SECRET = "sk-ant-api03-" + "Zq8" * 15

target = st.integers(min_value=0, max_value=12)
saves = st.tuples(
    st.just("memory.save"),
    st.sampled_from(KINDS),
    st.sampled_from(PHRASES),
    st.sampled_from([None, ["global"], ["project:a"], ["project:b"], ["global", "project:a"]]),
    st.lists(target, max_size=2) | st.just([]),
    st.sampled_from([True, True, True, False]),  # well-formed
    st.sampled_from([False, False, False, True]),  # carries a secret
)
commands = st.one_of(
    *[saves] * 6,
    st.tuples(
        st.just("memory.retire"),
        target,
        st.sampled_from(["stale", "superseded", "contradicted"]),
        st.one_of(st.none(), target),
        st.booleans(),
    ),
    st.tuples(st.just("review.approve"), target),
    st.tuples(st.just("review.reject"), target, st.booleans()),
    st.tuples(st.just("memory.update_outcome"), target, st.booleans()),
    st.tuples(st.just("memory.link"), target, target),
    st.tuples(st.just("checkpoint.save"), st.booleans()),
    st.tuples(st.just("memory.tombstone"), target),
    st.tuples(st.just("tombstone.lift"), st.integers(min_value=1, max_value=4)),
    st.tuples(st.just("memory.restore"), target),
    st.tuples(st.just("memory.purge"), target, st.booleans()),
    st.tuples(st.just("replay"), st.integers(min_value=0, max_value=20), st.booleans()),
)


def _pick(ids: list[int], choice: int) -> int:
    return ids[choice % len(ids)] if ids and choice < 12 else 10_000 + choice


def _payload(cmd: tuple[Any, ...], ids: list[int]) -> dict[str, Any]:
    action = cmd[0]
    if action == "memory.save":
        _, kind, phrase, scopes, replaces, well_formed, secret = cmd
        payload: dict[str, Any] = {"kind": kind, "summary": phrase}
        if well_formed:
            payload["applies_when"] = "working"
            if kind == "workflow":
                payload["steps"] = ["one", "two"]
        if scopes is not None:
            payload["scopes"] = scopes
        if replaces:
            payload["replaces"] = sorted({_pick(ids, r) for r in replaces})
        if secret:
            payload["details"] = f"key {SECRET}"
        return payload
    if action == "memory.retire":
        _, tid, status, by, forbid = cmd
        payload = {"id": _pick(ids, tid), "reason": "random", "status": status}
        if by is not None:
            payload["by"] = _pick(ids, by)
        return {**payload, "forbid_resave": forbid}
    if action == "review.approve":
        return {"id": _pick(ids, cmd[1])}
    if action == "review.reject":
        return {"id": _pick(ids, cmd[1]), "reason": "no", "forbid_resave": cmd[2]}
    if action == "memory.update_outcome":
        outcome = f"leaked {SECRET}" if cmd[2] else "went fine"
        return {"id": _pick(ids, cmd[1]), "outcome": outcome}
    if action == "memory.link":
        return {"src": _pick(ids, cmd[1]), "dst": _pick(ids, cmd[2]), "kind": "relates_to"}
    if action == "checkpoint.save":
        return {"summary": "halfway", "state": {"token": SECRET} if cmd[1] else {"next": 1}}
    if action == "memory.tombstone":
        return {"id": _pick(ids, cmd[1]), "reason": "never again"}
    if action == "memory.restore":
        return {"id": _pick(ids, cmd[1]), "reason": "back again"}
    if action == "tombstone.lift":
        return {"tombstone_id": cmd[1], "reason": "ok again"}
    assert action == "memory.purge"
    return {"id": _pick(ids, cmd[1]), "reason": "forget", "include_chain": cmd[2]}


def _counts(engine: Engine) -> tuple[int, int, int]:
    row = engine.store.conn.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM receipts), "
        "(SELECT coalesce(max(id), 0) FROM events)"
    ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    sequence=st.lists(
        st.tuples(commands, st.sampled_from([0, 0, 0, 1, 2, 3, 4])),
        min_size=3,
        max_size=14,
    )
)
def test_each_mutation_appends_exactly_one_event(
    engine: Engine, sequence: list[tuple[tuple[Any, ...], int]]
) -> None:
    ids = [int(r[0]) for r in engine.store.conn.execute("SELECT id FROM judgments").fetchall()]
    done: list[tuple[str, dict[str, Any], Any, Grant]] = []
    for cmd, caller in sequence:
        session, grant = CALLERS[caller]
        if cmd[0] == "replay":
            if not done:
                continue
            action, payload, session, grant = done[cmd[1] % len(done)]
            if cmd[2]:  # same id, other payload: a conflict
                payload = {**payload, "command_id": payload["command_id"], "extra_note": 1}
        else:
            action, payload = cmd[0], _payload(cmd, ids)
            payload["command_id"] = f"c{len(done)}-{id(payload)}"
        before = _counts(engine)
        try:
            receipt = engine.dispatch(action, payload, session, grant)
        except MamaError as exc:
            event(f"refused: {exc.code}")
            assert _counts(engine) == before
            continue
        after = _counts(engine)
        event("replayed" if receipt["replayed"] else f"applied: {action}")
        if receipt["replayed"]:
            assert after == before
            continue
        assert after[0] == before[0] + 1 and after[1] == before[1] + 1
        assert receipt["event_id"] == after[2] == before[2] + 1
        done.append((action, payload, session, grant))
        if action in ("memory.save", "memory.restore"):
            ids.append(receipt["judgment_id"])
    report = verify_store(engine.store.conn, engine.store.secret)
    assert report.ok, report.problems
