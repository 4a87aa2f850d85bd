"""Only beliefs are returned by default: retired, superseded, proposed, rejected and
purged rows are not, and never an event or audit record."""

from __future__ import annotations

from mama_core.memory import Grant
from mama_core.model import KINDS, STATUSES
from mama_core.recall import PRESETS
from tests.mama_core.recall.world import AGENT, World


def test_retired_and_superseded_rows_are_not_beliefs(world: World) -> None:
    stale = world.save("The office wifi password rotates every month")
    world.retire(stale, "we moved offices")
    old = world.save("Standup is at nine thirty every weekday")
    new = world.save("Standup is at ten every weekday", replaces=[old])
    assert world.status(old) == "superseded"
    for name, config in PRESETS.items():
        found = world.ids("wifi password rotates standup weekday", config=config, limit=50)
        assert new in found, name  # positive control
        assert stale not in found and old not in found, name
        everything = world.ids(
            "wifi password rotates standup weekday",
            config=config,
            statuses=("active", "stale", "superseded"),
            limit=50,
        )
        assert {stale, old, new} <= set(everything), name


def test_proposed_rejected_and_purged_are_not_beliefs(world: World) -> None:
    agent = Grant.agent(["global"])
    proposed = world.save("Prefer tabs over spaces", "preference", session=AGENT, grant=agent)
    rejected = world.save("Prefer long meetings", "preference", session=AGENT, grant=agent)
    world.reject(rejected)
    purged = world.save("Prefer short meetings always", "preference")
    world.purge(purged)
    active = world.save("Prefer short written updates over meetings", "preference")
    assert world.status(proposed) == "proposed"
    for name, config in PRESETS.items():
        found = world.ids("prefer tabs spaces meetings updates", config=config, limit=50)
        assert active in found, name
        assert not {proposed, rejected, purged} & set(found), name
    # Control: the proposal is findable when proposals are asked for.
    assert proposed in world.ids("tabs spaces", statuses=("proposed",))
    # A purged row is never found, whatever the statuses asked for: its text is gone.
    assert purged not in world.ids("short meetings", statuses=("purged",), limit=50)


def test_events_and_reasons_are_never_results(world: World) -> None:
    jid = world.save("The staging database lives in Frankfurt")
    assert world.ids("staging database frankfurt") == [jid]  # control
    world.retire(jid, "moved to Dublin: zanzibarquux migration finished")
    # The retire reason lives in the event log only; recall reads judgments, so
    # no arm matches its words (the vector arm ranks rows, it never reads events).
    bm25 = PRESETS["bm25_only"]
    assert world.ids("zanzibarquux dublin", statuses=("active", "stale"), config=bm25) == []
    assert world.ids("staging frankfurt", statuses=("stale",), config=bm25) == [jid]
    for hit in world.search("zanzibarquux migration dublin", statuses=STATUSES, limit=100):
        assert "zanzibarquux" not in f"{hit.topic} {hit.summary} {hit.details}"
        assert hit.label == "match" and hit.kind in KINDS


def test_kind_and_validity_are_predicates(world: World) -> None:
    fact = world.save("The build server is named hopper", valid_from="2024-01-01T00:00:00Z")
    decision = world.save("We name the build server hopper", "decision")
    assert world.ids("build server hopper", kinds=("decision",)) == [decision]
    assert world.ids("build server hopper", kinds=("fact",)) == [fact]
    assert world.ids("build server hopper", kinds=()) == []
    before = world.ids("build server hopper", kinds=("fact",), valid_at="2023-06-01T00:00:00Z")
    assert before == []
    assert world.ids("build server hopper", kinds=("fact",), valid_at="2024-06-01") == [fact]


def test_hits_say_which_arms_found_them(world: World) -> None:
    jid = world.save("Invoices are sent on the first working day of the month")
    hit = world.search("invoices first working day")[0]
    assert hit.id == jid
    assert set(hit.arms) == {"bm25", "vector"}
    assert hit.arms["bm25"].rank == 1 and hit.arms["vector"].rank == 1
    assert hit.arms["vector"].score > 0.5
    assert hit.found_by[0] in ("bm25", "vector")
    only_vector = world.search("invoices first working day", config=PRESETS["vector_only"])[0]
    assert set(only_vector.arms) == {"vector"}
