"""Which project a process is bound to, and that any name becomes a valid scope."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.mcp.project_scope import (
    ProjectBinding,
    ProjectNameError,
    project_name,
    resolve_binding,
)
from mama_core.invisible import hidden_char
from mama_core.scope_names import is_scope_name
from tests.app.mcp.conftest import git_project


def test_git_root_names_the_project(tmp_path: Path) -> None:
    root = git_project(tmp_path, "web shop")
    deep = root / "src" / "cart"
    deep.mkdir(parents=True)
    assert resolve_binding(deep).project_scope == "project:web-shop"


def test_outside_git_the_folder_names_it(tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir()
    assert resolve_binding(folder).project_scope == "project:scratch"


def test_project_option_wins_and_global_is_opt_in(tmp_path: Path) -> None:
    binding = resolve_binding(tmp_path, project="api", allow_global=True)
    assert binding.scopes == {"project:api", "global"}
    assert resolve_binding(tmp_path, project="api").scopes == {"project:api"}
    grant = binding.grant()
    assert grant.default_scope == "project:api"
    assert not grant.all_scopes
    assert "memory.purge" not in grant.actions and "review.approve" not in grant.actions


@pytest.mark.parametrize("bad", ["", "   ", "\n\t"])
def test_empty_names_are_refused(bad: str) -> None:
    with pytest.raises(ProjectNameError):
        project_name(bad)


@given(st.text(max_size=300))
def test_any_name_becomes_a_valid_scope_or_is_refused(name: str) -> None:
    try:
        cleaned = project_name(name)
    except ProjectNameError:
        assert not name.strip() or not project_name_has_content(name)
        return
    assert is_scope_name(ProjectBinding(cleaned).project_scope)


def project_name_has_content(name: str) -> bool:
    """Whether anything but hidden characters and dashes (which only separate) is left."""
    return any(hidden_char(c) is None and c != "-" for c in name)
