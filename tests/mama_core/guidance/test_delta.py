"""Guidance deltas between turns: added, revised and retired since a watermark."""

from __future__ import annotations

from mama_core.guidance import approx_tokens, render_delta, render_index
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


LESSON = (
    "Lesson {n}: when a customer writes about an invoice, check the billing dashboard "
    "for the account before answering, and quote the invoice number"
)


def test_a_delta_stays_within_the_budget_and_the_rest_is_readable(world: World) -> None:
    """60 new lessons made a delta of about 1,820 tokens against a budget of 200: now
    what does not fit is counted, and guidance.changes returns every one of them."""
    retired = world.save("Never deploy on Fridays", "constraint")
    start = render_index(world.reader, ["global"])
    lessons = [world.save(LESSON.format(n=n), "lesson") for n in range(60)]
    world.retire(retired, "we deploy continuously now")

    unbounded = render_delta(world.reader, ["global"], start.watermark)
    assert approx_tokens(unbounded.text) > 1500  # the reproduction: far over the budget
    delta = render_delta(world.reader, ["global"], start.watermark, budget_tokens=200)
    assert delta.count == 61
    assert approx_tokens(delta.text) <= 200
    shown = [jid for jid in lessons if f"[#{jid}]" in delta.text]
    assert shown and len(shown) < 60  # some fit, not all
    # The retirement weighs most: it is shown, and the rest is counted with the action.
    assert f"[#{retired}] constraint no longer applies" in delta.text
    assert delta.omitted == 60 - len(shown)
    assert (
        f"and {delta.omitted} more changes not shown: read them with guidance.changes "
        f'{{"since": {start.watermark}, "until": {delta.watermark}}}'
    ) in delta.text

    # The action returns them all, to an agent too (its own scopes), paged.
    read = {"since": start.watermark, "until": delta.watermark, "limit": 50}
    agent_grant = Grant.agent(["global"])
    first = world.dispatch("guidance.changes", read, AGENT, agent_grant)
    second = world.dispatch("guidance.changes", {**read, "offset": 50}, AGENT, agent_grant)
    assert first["total"] == 61 and first["more"] and not second["more"]
    changes = first["changes"] + second["changes"]
    assert changes[0] == {
        "change": "retired",
        "id": retired,
        "kind": "constraint",
        "status": "stale",
        "summary": "Never deploy on Fridays",
    }
    assert sorted(c["id"] for c in changes if c["change"] == "added") == sorted(lessons)
    # A scope the agent lacks shows nothing (control above: the same range, its scope).
    elsewhere = world.dispatch("guidance.changes", read, AGENT, Grant.agent(["project:x"]))
    assert elsewhere["total"] == 0


def test_a_small_delta_is_rendered_whole(world: World) -> None:
    start = render_index(world.reader, ["global"])
    added = world.save("Run the tests before every push", "constraint")
    delta = render_delta(world.reader, ["global"], start.watermark, budget_tokens=200)
    whole = render_delta(world.reader, ["global"], start.watermark)
    assert delta.text == whole.text and f"[#{added}]" in delta.text
    assert delta.omitted == 0 and "not shown" not in delta.text
