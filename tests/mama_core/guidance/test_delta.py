"""Guidance deltas between turns: added, revised and retired since a watermark."""

from __future__ import annotations

from mama_core.guidance import render_delta, render_index
from mama_core.memory import Grant
from tests.mama_core.recall.world import AGENT, World


def test_delta_since_the_index(world: World) -> None:
    keep = world.save("Use British spelling", "preference")
    revise = world.save("Reply within a day", "preference")
    retire = world.save("Never deploy on Fridays", "constraint")
    start = render_index(world.reader, ["global"])
    assert set(start.shown_ids) == {keep, revise, retire}

    added = world.save("Run the tests before every push", "constraint")
    revised = world.save("Reply within two hours", "preference", replaces=[revise])
    world.retire(retire, "we deploy continuously now")
    proposal = world.save("Use tabs", "preference", session=AGENT, grant=Grant.agent(["global"]))
    world.save("A plain fact is not guidance")

    delta = render_delta(world.reader, ["global"], start.watermark)
    assert [i.id for i in delta.added] == [added]
    assert [(r.item.id, r.replaces) for r in delta.revised] == [(revised, (revise,))]
    assert [(r.id, r.status) for r in delta.retired] == [(retire, "stale")]
    assert proposal not in {i.id for i in delta.added}  # proposals are not guidance yet
    assert f"[#{added}]" in delta.text and f"replaces #{revise}" in delta.text

    # The proposal shows up once the owner approves it; the watermark moves on.
    world.approve(proposal)
    later = render_delta(world.reader, ["global"], delta.watermark)
    assert [i.id for i in later.added] == [proposal]
    assert not later.revised and not later.retired
    assert render_delta(world.reader, ["global"], later.watermark).is_empty


def test_delta_respects_scopes(world: World) -> None:
    start = render_index(world.reader, ["project:a"])
    mine = world.save("Lint before commit", "constraint", ["project:a"])
    theirs = world.save("Deploy with the blue pipeline", "constraint", ["project:b"])
    delta = render_delta(world.reader, ["project:a"], start.watermark)
    assert [i.id for i in delta.added] == [mine]  # control: the in-scope change is there
    assert theirs not in {i.id for i in delta.added}
    world.retire(theirs, "pipeline removed")
    assert render_delta(world.reader, ["project:a"], delta.watermark).is_empty


def test_purged_and_rejected(world: World) -> None:
    gone = world.save("Keep the door code in the vault", "constraint")
    proposal = world.save(
        "Prefer video calls", "preference", session=AGENT, grant=Grant.agent(["global"])
    )
    start = render_index(world.reader, ["global"])
    world.purge(gone)
    world.reject(proposal)
    delta = render_delta(world.reader, ["global"], start.watermark)
    assert [(r.id, r.status, r.summary) for r in delta.retired] == [(gone, "purged", "")]
    assert "door code" not in delta.text  # the purged text is not repeated
    assert not delta.added and not delta.revised
