"""The lexical arm admits matches from the cache's mask exactly as the SQL join would."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_core.recall import Predicate
from mama_core.recall.lexical_arm import WORD_TABLE, bm25_search
from mama_core.recall.lexical_query import build_lexical_query
from tests.mama_core.recall.world import World

SCOPES = ("global", "project:a", "project:b", "user:me")
WORDS = ("deploy", "friday", "invoice", "budget", "review", "kettle", "garden")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    readable=st.sets(st.sampled_from(SCOPES)),
    statuses=st.sets(st.sampled_from(["active", "stale", "superseded"]), min_size=1),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    depth=st.integers(min_value=1, max_value=30),
)
def test_mask_and_join_agree(
    world: World, readable: set[str], statuses: set[str], query: str, depth: int
) -> None:
    if not world.__dict__.get("seeded"):
        for i in range(60):
            words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 2, 3))
            jid = world.save(f"{words} note {i}", scopes=[SCOPES[i % len(SCOPES)]])
            if i % 5 == 0:
                world.retire(jid)
        world.__dict__["seeded"] = True
    predicate = Predicate.build(readable, statuses=statuses)
    match = build_lexical_query(query).word_match()
    assert match is not None
    weights = (2.0, 1.0, 1.0)
    by_join = bm25_search(world.reader, WORD_TABLE, match, predicate, depth, weights)
    rows = world.cache.predicate_mask(predicate)
    by_mask = bm25_search(world.reader, WORD_TABLE, match, predicate, depth, weights, rows)
    assert [(r.id, r.rank) for r in by_mask] == [(r.id, r.rank) for r in by_join]
    if readable and "active" in statuses:
        assert by_join  # positive control: every word occurs in active, visible rows


def test_rows_unknown_to_the_cache_are_checked_in_sql(world: World) -> None:
    stale_cache = world.cache.predicate_mask(Predicate.build(["global"]))
    mine = world.save("The garden hose is in the shed")
    theirs = world.save("The garden gate is locked", scopes=["project:other"])
    predicate = Predicate.build(["global"])
    match = build_lexical_query("garden").word_match()
    assert match is not None
    found = bm25_search(world.reader, WORD_TABLE, match, predicate, 10, (2, 1, 1), stale_cache)
    assert [r.id for r in found] == [mine] and theirs not in [r.id for r in found]
