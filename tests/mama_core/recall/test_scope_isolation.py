"""Scope isolation: recall never returns a row outside the caller's scopes, and the
scope predicate runs before top-K, so foreign rows never crowd out visible ones."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_core.recall import PRESETS
from tests.mama_core.recall.world import World

POOL = ("global", "project:alpha", "project:beta", "user:me", "channel:slack")
WORDS = ("deploy", "friday", "database", "invoice", "meeting", "budget", "kettle")

row = st.tuples(
    st.sets(st.sampled_from(POOL), min_size=1, max_size=3),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    st.booleans(),  # retired afterwards
)


def _namespaced(scope: str, ns: str) -> str:
    # Each example gets its own project/user/channel names; "global" is shared by
    # all examples, so rows from earlier examples are part of what must be filtered.
    return scope if scope == "global" else f"{scope}-{ns}"


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(row, min_size=1, max_size=6),
    readable=st.sets(st.sampled_from(POOL), min_size=1),
    control_scope=st.data(),
    query_words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_no_foreign_row_ever(
    world: World,
    rows: list[tuple[set[str], list[str], bool]],
    readable: set[str],
    control_scope: st.DataObject,
    query_words: list[str],
) -> None:
    ledger: dict[int, tuple[frozenset[str], bool]] = world.__dict__.setdefault("ledger", {})
    ns = uuid.uuid4().hex[:8]
    mine = {_namespaced(s, ns) for s in readable}
    for scopes, words, retired in rows:
        names = frozenset(_namespaced(s, ns) for s in scopes)
        jid = world.save(" ".join(words), scopes=sorted(names))
        if retired:
            world.retire(jid)
        ledger[jid] = (names, not retired)
    # Positive control: an active row in a readable scope holding every query word.
    home = control_scope.draw(st.sampled_from(sorted(mine)))
    control = world.save("note: " + " ".join(query_words), scopes=[home])
    ledger[control] = (frozenset({home}), True)

    visible = {jid for jid, (names, active) in ledger.items() if active and names & mine}
    query = " ".join(query_words)
    for name, config in PRESETS.items():
        hits = world.search(query, sorted(mine), config=config, limit=1000)
        found = {h.id for h in hits}
        assert found <= visible, f"{name} returned rows outside {sorted(mine)}"
        assert all(set(h.scopes) & mine for h in hits)
        assert control in found, f"{name} missed the in-scope control row"
        if name == "vector_only":
            # The vector arm scores every visible row: with room for all and no
            # similarity floor, all come back.
            floorless = config.with_changes(vector_min_score=0.0)
            every = world.search(query, sorted(mine), config=floorless, limit=1000)
            assert {h.id for h in every} == visible


def test_foreign_rows_more_similar_never_crowd_out(world: World) -> None:
    text = "Deploy the billing service on Tuesday mornings after the standup"
    for _ in range(120):
        world.save(text, scopes=["project:other"])
    mine = world.save("Billing deploys happen on Tuesdays", scopes=["project:mine"])
    for name, config in PRESETS.items():
        narrow = config.with_changes(arm_depth=1)
        hits = world.search(text, ["project:mine"], config=narrow, limit=1)
        assert [h.id for h in hits] == [mine], name
        # Control: the owner, reading both scopes, sees the foreign rows first.
        owner = world.search(text, ["project:mine", "project:other"], config=config, limit=1)
        assert owner and owner[0].id != mine, name


def test_empty_scopes_return_nothing(world: World) -> None:
    world.save("The kettle is in the kitchen")
    assert world.ids("kettle")  # control
    assert world.ids("kettle", scopes=()) == []
    assert world.ids("kettle", scopes=["project:nowhere"]) == []


def test_scopes_none_is_refused(world: World) -> None:
    import pytest

    from mama_core.recall import RecallQuery

    with pytest.raises(TypeError):
        RecallQuery("kettle", scopes=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        RecallQuery("kettle", scopes="global")
