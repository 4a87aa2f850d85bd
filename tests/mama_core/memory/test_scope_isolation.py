"""Scopes bound every read and write: a caller never sees a row bound to no scope
of its grant, an empty grant sees nothing, and a foreign scope is refused, never
silently narrowed."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_core.memory import Engine, Grant, NotFoundError, ScopeDeniedError
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save, search_ids

POOL = ("global", "project:alpha", "project:beta", "channel:slack", "user:ann")
_tags = itertools.count()

scope_sets = st.sets(st.sampled_from(POOL), min_size=1, max_size=3)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(scope_sets, min_size=0, max_size=5),
    granted=st.sets(st.sampled_from(POOL), max_size=4),
)
def test_reads_never_cross_the_grant(
    engine: Engine, rows: list[set[str]], granted: set[str]
) -> None:
    tag = f"zebu{next(_tags)}q"  # one word unique to this example; the store is shared
    if granted:
        rows = [*rows, {sorted(granted)[0]}]  # the positive control: one row in the grant
    saved = {
        save(engine, f"{tag} record {i}", scopes=sorted(scopes))["judgment_id"]: scopes
        for i, scopes in enumerate(rows)
    }
    grant = Grant.agent(granted)
    visible = {jid for jid, scopes in saved.items() if scopes & granted}

    found = engine.dispatch("memory.search", {"query": tag, "limit": 50}, AGENT, grant)
    # Hybrid search may also return earlier examples' rows (the store is shared
    # and their wording is alike); among this example's rows it finds exactly
    # the visible ones, and no row of any example is outside the grant.
    assert {r["id"] for r in found["results"]} & set(saved) == visible
    for result in found["results"]:
        assert set(result["scopes"]) <= granted and result["scopes"]
    if granted:
        assert visible  # the control row is found through the same query
    assert set(saved) <= set(search_ids(engine, tag, limit=50))  # the owner sees all

    for jid in saved:
        if jid in visible:
            read = engine.dispatch("memory.read", {"id": jid}, AGENT, grant)
            assert set(read["record"]["scopes"]) <= granted
        else:
            with pytest.raises(NotFoundError):
                engine.dispatch("memory.read", {"id": jid}, AGENT, grant)


def test_empty_grant_reads_nothing_and_writes_nothing(engine: Engine) -> None:
    jid = save(engine, "okapi in global")["judgment_id"]
    empty = Grant.agent([])
    assert search_ids(engine, "okapi", AGENT, empty) == []
    assert search_ids(engine, "okapi", AGENT, agent_grant("global")) == [jid]
    with pytest.raises(NotFoundError):
        engine.dispatch("memory.read", {"id": jid}, AGENT, empty)
    with pytest.raises(ScopeDeniedError):
        engine.dispatch("memory.save", {"kind": "fact", "summary": "x"}, AGENT, empty)
    with pytest.raises(ScopeDeniedError):
        engine.dispatch(
            "memory.save", {"kind": "fact", "summary": "x", "scopes": ["global"]}, AGENT, empty
        )


def test_an_explicit_foreign_scope_is_refused_not_narrowed(engine: Engine) -> None:
    grant = agent_grant("project:alpha")
    with pytest.raises(ScopeDeniedError) as info:
        engine.dispatch(
            "memory.save",
            {"kind": "fact", "summary": "tapir", "scopes": ["project:alpha", "global"]},
            AGENT,
            grant,
        )
    assert info.value.details["scopes"] == ["global"]
    assert search_ids(engine, "tapir") == []
    with pytest.raises(ScopeDeniedError):
        engine.dispatch("memory.search", {"query": "tapir", "scopes": ["global"]}, AGENT, grant)
    with pytest.raises(ScopeDeniedError):
        engine.dispatch("checkpoint.list", {"scope": "global"}, AGENT, grant)
    ok = engine.dispatch("memory.save", {"kind": "fact", "summary": "tapir"}, AGENT, grant)
    assert search_ids(engine, "tapir", AGENT, grant, scopes=["project:alpha"]) == [
        ok["judgment_id"]
    ]
    read = engine.dispatch("memory.read", {"id": ok["judgment_id"]}, OWNER, OWNER_GRANT)
    assert read["record"]["scopes"] == ["project:alpha"]  # the default scope


def test_foreign_rows_never_crowd_out_granted_ones_under_a_limit(engine: Engine) -> None:
    for n in range(10):
        save(engine, f"gecko foreign {n}", scopes=["project:beta"])
    mine = save(engine, "gecko mine", scopes=["project:alpha"])["judgment_id"]
    assert search_ids(engine, "gecko", AGENT, agent_grant("project:alpha"), limit=1) == [mine]


def test_foreign_scope_names_do_not_leak(engine: Engine) -> None:
    jid = save(engine, "shared capybara", scopes=["project:alpha", "project:secret"])["judgment_id"]
    found = engine.dispatch(
        "memory.search", {"query": "capybara"}, AGENT, agent_grant("project:alpha")
    )
    assert found["results"][0]["id"] == jid
    assert found["results"][0]["scopes"] == ["project:alpha"]


def test_checkpoints_are_scoped_and_newest_first(engine: Engine) -> None:
    alpha, beta = agent_grant("project:alpha"), agent_grant("project:beta")
    engine.dispatch("checkpoint.save", {"summary": "alpha step 1"}, AGENT, alpha)
    engine.dispatch(
        "checkpoint.save", {"summary": "alpha step 2", "state": {"next": ["b"]}}, AGENT, alpha
    )
    engine.dispatch("checkpoint.save", {"summary": "beta step"}, AGENT, beta)
    listed = engine.dispatch("checkpoint.list", {}, AGENT, alpha)["checkpoints"]
    assert [c["summary"] for c in listed] == ["alpha step 2", "alpha step 1"]
    assert listed[0]["state"] == {"next": ["b"]}
    assert [
        c["summary"] for c in engine.dispatch("checkpoint.list", {}, AGENT, beta)["checkpoints"]
    ] == ["beta step"]
    assert engine.dispatch("checkpoint.list", {}, AGENT, Grant.agent([]))["checkpoints"] == []
