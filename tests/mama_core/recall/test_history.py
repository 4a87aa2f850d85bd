"""include_history: predecessors come back labelled ``replaced``, only on request,
and only under the caller's scope predicate."""

from __future__ import annotations

from tests.mama_core.recall.world import World


def test_history_only_on_request_and_labelled(world: World) -> None:
    a = world.save("Release train leaves every second Monday")
    b = world.save("Release train leaves every Monday", replaces=[a])
    c = world.save("Release train leaves every Monday and Thursday", replaces=[b])
    plain = world.search("release train leaves")
    assert [h.id for h in plain] == [c]
    assert plain[0].label == "match"
    hist = world.search("release train leaves", include_history=True)
    assert [(h.id, h.label, h.replaced_by) for h in hist] == [
        (c, "match", None),
        (b, "replaced", c),
        (a, "replaced", b),
    ]
    assert all(h.status == "superseded" for h in hist[1:])
    assert all(h.arms == {} and h.score == 0 for h in hist[1:])


def test_history_respects_the_scope_predicate(world: World) -> None:
    secret = world.save("Quarterly budget is forty thousand", scopes=["project:finance"])
    shared = world.save(
        "Quarterly budget is fifty thousand", scopes=["project:team"], replaces=[secret]
    )
    latest = world.save(
        "Quarterly budget is sixty thousand", scopes=["project:team"], replaces=[shared]
    )
    team = world.search("quarterly budget", ["project:team"], include_history=True)
    assert [(h.id, h.label) for h in team] == [(latest, "match"), (shared, "replaced")]
    # Control: a reader of both scopes sees the whole chain.
    readers = ["project:team", "project:finance"]
    both = world.search("quarterly budget", readers, include_history=True)
    assert [h.id for h in both] == [latest, shared, secret]


def test_history_never_includes_purged_predecessors(world: World) -> None:
    a = world.save("The VPN endpoint is vpn-old.example.org")
    b = world.save("The VPN endpoint is vpn.example.org", replaces=[a])
    assert [h.id for h in world.search("vpn endpoint", include_history=True)] == [b, a]
    world.purge(a)
    assert [h.id for h in world.search("vpn endpoint", include_history=True)] == [b]
