"""The session-start guidance index: within its budget, active guidance only,
constraints first, newest first within a kind, and a count of what did not fit."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_core.embeddings import Embedder
from mama_core.guidance import KIND_ORDER, approx_tokens, render_index
from mama_core.memory import Engine, Grant
from mama_core.store import DbKey, Store
from tests.mama_core.recall.world import AGENT, World


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[World]:
    """One store for this module: seeding it once keeps the tests quick."""
    store = Store.open(tmp_path_factory.mktemp("guidance") / "mama.db", DbKey.generate())
    with Engine(store, embedder) as engine:
        w = World(store, engine, embedder)
        try:
            yield w
        finally:
            w.close()
    store.close()


@pytest.fixture(scope="module")
def seeded(world: World) -> dict[str, list[int]]:
    """Guidance of every kind and length, in two scopes, plus records that must not show."""
    ids: dict[str, list[int]] = {"active": [], "hidden": []}
    for i in range(24):
        kind = KIND_ORDER[i % 4]
        scope = "global" if i % 3 else "project:web"
        extra = " and also keep it short" * (i % 5)
        fields: dict[str, object] = {"applies_when": f"working on task family {i}"}
        if kind == "workflow":
            fields["steps"] = [f"step {n} of workflow {i}" for n in range(1 + i % 6)]
        ids["active"].append(world.save(f"Rule {i}: do the thing{extra}", kind, [scope], **fields))
    agent = Grant.agent(["global"])
    ids["hidden"].append(world.save("Proposed: use tabs", "preference", session=AGENT, grant=agent))
    rejected = world.save("Proposed: long meetings", "preference", session=AGENT, grant=agent)
    world.reject(rejected)
    retired = world.save("Never deploy on Fridays", "constraint")
    world.retire(retired, "we deploy continuously now")
    old = world.save("Reply within a day", "preference")
    revision = world.save("Reply within two hours", "preference", replaces=[old])
    purged = world.save("Keep the door code secret", "constraint")
    world.purge(purged)
    ids["hidden"] += [rejected, retired, old, purged]
    ids["active"].append(revision)
    return ids


def test_lists_all_active_guidance_and_nothing_else(world: World, seeded: dict) -> None:
    out = render_index(world.reader, ["global", "project:web"], budget_tokens=100_000)
    assert sorted(out.shown_ids) == sorted(seeded["active"])  # positive control: all active
    assert not set(out.shown_ids) & set(seeded["hidden"])
    assert out.omitted == 0 and "more not shown" not in out.text
    for hidden in seeded["hidden"]:
        assert f"[#{hidden}]" not in out.text
    lines = [line for line in out.text.splitlines() if line.startswith("- [#")]
    kinds = [line.split("] ", 1)[1].split(",", 1)[0] for line in lines]
    # constraints, then preferences, workflows, lessons
    assert kinds == sorted(kinds, key=KIND_ORDER.index)


def test_newest_first_within_a_kind(world: World, seeded: dict) -> None:
    out = render_index(world.reader, ["global", "project:web"], budget_tokens=100_000)
    constraints = [i for i in out.shown_ids if i in seeded["active"][:24][0::4]]
    assert constraints == sorted(constraints, reverse=True)


def test_scopes_bound_the_index(world: World, seeded: dict) -> None:
    web = render_index(world.reader, ["project:web"], budget_tokens=100_000)
    assert web.shown_ids and all(i in seeded["active"] for i in web.shown_ids)
    everything = render_index(world.reader, ["global", "project:web"], budget_tokens=100_000)
    assert len(web.shown_ids) < len(everything.shown_ids)
    assert render_index(world.reader, [], budget_tokens=100_000).text == ""


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(budget=st.integers(min_value=0, max_value=1200))
def test_never_exceeds_the_budget(world: World, seeded: dict, budget: int) -> None:
    out = render_index(world.reader, ["global", "project:web"], budget_tokens=budget)
    assert out.tokens == approx_tokens(out.text) <= budget
    assert not set(out.shown_ids) & set(seeded["hidden"])
    if out.omitted and out.text:
        assert out.text.splitlines()[-1].startswith(f"({out.omitted} more not shown")
    if budget >= 60:  # room for the header, one record and the trailer
        assert out.shown_ids  # positive control: something fits


def test_default_budget_is_1500(world: World, seeded: dict) -> None:
    out = render_index(world.reader, ["global", "project:web"])
    assert out.budget_tokens == 1500 and out.tokens <= 1500
