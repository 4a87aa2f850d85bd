"""Two projects on one database: each sees its own rows and never the other's."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.mcp.identity import ClientIdentity
from app.mcp.project_scope import ProjectBinding, resolve_binding
from app.mcp.server import call_tool
from mama_core.memory import Engine
from tests.app.mcp.conftest import (
    error_code,
    git_project,
    mcp_client,
    owner_dispatch,
    structured,
)

WORD = "tokenizer"


def _decision(project: str) -> dict[str, Any]:
    return {
        "kind": "decision",
        "topic": WORD,
        "summary": f"The {WORD} of {project} splits on whitespace only.",
    }


@pytest.mark.anyio
async def test_two_projects_share_a_database_but_not_their_rows(engine: Engine) -> None:
    alpha, beta = ProjectBinding("alpha"), ProjectBinding("beta")
    async with mcp_client(engine, alpha) as a, mcp_client(engine, beta) as b:
        a_saved = structured(await a.call_tool("save", _decision("alpha")))
        b_saved = structured(await b.call_tool("save", _decision("beta")))
        await a.call_tool("checkpoint_save", {"summary": "alpha: halfway"})
        await b.call_tool("checkpoint_save", {"summary": "beta: halfway"})

        a_found = structured(await a.call_tool("search", {"query": WORD}))
        b_found = structured(await b.call_tool("search", {"query": WORD}))
        a_timeline = structured(await a.call_tool("timeline", {}))
        b_timeline = structured(await b.call_tool("timeline", {}))
        a_checkpoint = structured(await a.call_tool("checkpoint_load", {}))
        b_checkpoint = structured(await b.call_tool("checkpoint_load", {}))
        a_reads_b = await a.call_tool("get", {"id": b_saved["judgment_id"]})
        b_reads_a = await b.call_tool("get", {"id": a_saved["judgment_id"]})
        a_retires_b = await a.call_tool("retire", {"id": b_saved["judgment_id"], "reason": "x"})
        a_asks_for_b = await a.call_tool("search", {"query": WORD, "scopes": ["project:beta"]})

    # Positive controls: each project finds its own row by the shared word.
    assert [r["id"] for r in a_found["results"]] == [a_saved["judgment_id"]]
    assert [r["id"] for r in b_found["results"]] == [b_saved["judgment_id"]]
    assert [r["id"] for r in a_timeline["records"]] == [a_saved["judgment_id"]]
    assert [r["id"] for r in b_timeline["records"]] == [b_saved["judgment_id"]]
    assert a_checkpoint["checkpoint"]["summary"] == "alpha: halfway"
    assert b_checkpoint["checkpoint"]["summary"] == "beta: halfway"
    # And never the other's: not listed, not readable, not writable, not askable.
    assert error_code(a_reads_b) == "not_found"
    assert error_code(b_reads_a) == "not_found"
    assert error_code(a_retires_b) == "not_found"
    assert error_code(a_asks_for_b) == "scope_denied"
    # Both rows are really there (the owner sees them, each in its own scope).
    everything = owner_dispatch(engine, "memory.search", {"query": WORD})
    assert sorted(r["scopes"][0] for r in everything["results"]) == [
        "project:alpha",
        "project:beta",
    ]


@pytest.mark.anyio
async def test_a_row_in_both_projects_shows_only_the_callers_scope(engine: Engine) -> None:
    shared = owner_dispatch(
        engine, "memory.save", {**_decision("both"), "scopes": ["project:alpha", "project:beta"]}
    )
    async with mcp_client(engine, ProjectBinding("alpha")) as a:
        found = structured(await a.call_tool("search", {"query": WORD}))
    assert [r["id"] for r in found["results"]] == [shared["judgment_id"]]
    assert found["results"][0]["scopes"] == ["project:alpha"]


_names = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    own=_names,
    other=_names,
    same=st.booleans(),
    tool=st.sampled_from(["save", "search", "timeline"]),
)
def test_any_foreign_scope_is_refused(
    engine: Engine, own: str, other: str, same: bool, tool: str
) -> None:
    binding = ProjectBinding(own)
    other = own if same else other
    scope = f"project:{other}"
    payloads = {
        "save": {**_decision(own), "scopes": [scope]},
        "search": {"query": WORD, "scopes": [scope]},
        "timeline": {"scopes": [scope]},
    }

    async def call() -> Any:
        return await call_tool(engine, binding, ClientIdentity("prop"), tool, payloads[tool])

    result = anyio.run(call)
    if other == own:
        assert not result.is_error  # positive control: one's own scope is fine
    else:
        assert error_code(result) == "scope_denied"


@pytest.mark.anyio
async def test_two_repositories_named_app_do_not_read_each_others_decisions(
    engine: Engine, tmp_path: Path
) -> None:
    shop = git_project(tmp_path / "work", "app")
    blog = git_project(tmp_path / "home", "app")
    for folder, url in ((shop, "git@github.com:acme/shop.git"), (blog, "https://x.org/me/blog")):
        subprocess.run(["git", "remote", "add", "origin", url], cwd=folder, check=True)
    in_shop, in_blog = resolve_binding(shop / "."), resolve_binding(blog)
    assert in_shop.project_scope != in_blog.project_scope
    async with mcp_client(engine, in_shop) as a, mcp_client(engine, in_blog) as b:
        saved = structured(await a.call_tool("save", _decision("shop")))
        from_shop = structured(await a.call_tool("search", {"query": WORD}))
        from_blog = structured(await b.call_tool("search", {"query": WORD}))
        blog_reads = await b.call_tool("get", {"id": saved["judgment_id"]})
    assert [r["id"] for r in from_shop["results"]] == [saved["judgment_id"]]  # control
    assert from_blog["results"] == []
    assert error_code(blog_reads) == "not_found"
