"""Which project a process is bound to, and that any name becomes a valid scope."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

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
from mama_core.scopes.names import is_scope_name
from tests.app.mcp.conftest import VENV_BIN, git_project


def remote(folder: Path, url: str, name: str = "origin") -> Path:
    subprocess.run(["git", "remote", "add", name, url], cwd=folder, check=True, timeout=30)
    return folder


def test_without_a_remote_the_git_roots_full_path_names_the_project(tmp_path: Path) -> None:
    root = git_project(tmp_path, "web shop")
    deep = root / "src" / "cart"
    deep.mkdir(parents=True)
    binding = resolve_binding(deep)
    assert binding.project_scope == f"project:{str(root.resolve()).replace(' ', '-')}"
    assert binding.source == f"the folder {root.resolve()}"


def test_outside_git_the_folders_full_path_names_it(tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir()
    assert resolve_binding(folder).project_scope == f"project:{folder.resolve()}"


def test_two_repositories_both_named_app_are_two_projects(tmp_path: Path) -> None:
    shop = remote(git_project(tmp_path / "work", "app"), "git@github.com:acme/shop.git")
    blog = remote(git_project(tmp_path / "home", "app"), "https://github.com/me/blog.git")
    assert resolve_binding(shop).project_scope == "project:github.com/acme/shop"
    assert resolve_binding(blog).project_scope == "project:github.com/me/blog"
    assert resolve_binding(shop).source == f"git remote origin of {shop}"
    # Without remotes, the full paths still tell them apart (the folder name did not).
    bare_a, bare_b = git_project(tmp_path / "a", "app"), git_project(tmp_path / "b", "app")
    assert resolve_binding(bare_a).scopes.isdisjoint(resolve_binding(bare_b).scopes)


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/Shop.git",
        "https://github.com/Acme/Shop",
        "https://someone@GitHub.com/Acme/Shop.git/",
        "ssh://git@github.com:22/Acme/Shop.git",
        "git://github.com/Acme/Shop.git",
    ],
)
def test_ssh_and_https_remotes_of_one_repository_are_one_project(tmp_path: Path, url: str) -> None:
    https = remote(git_project(tmp_path / "one", "shop"), "https://github.com/Acme/Shop.git")
    other = remote(git_project(tmp_path / "two", "checkout"), url)
    assert resolve_binding(other).project_scope == resolve_binding(https).project_scope
    assert resolve_binding(other).project_scope == "project:github.com/Acme/Shop"
    # Control: another repository of the same owner is another project.
    fork = remote(git_project(tmp_path / "three", "shop"), url.replace("Shop", "Shop2"))
    assert resolve_binding(fork).project_scope == "project:github.com/Acme/Shop2"


def test_origin_is_preferred_and_a_local_remote_is_its_path(tmp_path: Path) -> None:
    repo = remote(git_project(tmp_path, "app"), "https://example.org/mirror/app", "backup")
    assert resolve_binding(repo).project_scope == "project:example.org/mirror/app"
    remote(repo, "https://example.org/team/app.git")
    assert resolve_binding(repo).project_scope == "project:example.org/team/app"
    local = remote(git_project(tmp_path / "l", "app"), "../../srv/app.git")
    expected = (tmp_path / "srv" / "app").resolve()
    assert resolve_binding(local).project_scope == f"project:{expected}"


def test_a_mama_project_file_wins_over_the_remote(tmp_path: Path) -> None:
    repo = remote(git_project(tmp_path, "app"), "git@github.com:acme/shop.git")
    assert resolve_binding(repo).project_scope == "project:github.com/acme/shop"  # control
    (repo / ".mama-project").write_text("# the shop, all clones\nacme shop\n")
    deep = repo / "src"
    deep.mkdir()
    binding = resolve_binding(deep)
    assert binding.project_scope == "project:acme-shop"
    assert binding.source == str(repo / ".mama-project")
    assert resolve_binding(deep, project="cli-wins").project_scope == "project:cli-wins"


def test_an_old_folder_name_scope_is_adopted_by_one_project_only(tmp_path: Path) -> None:
    claims = tmp_path / "claims"
    first = remote(git_project(tmp_path / "w", "app"), "git@github.com:acme/shop.git")
    second = remote(git_project(tmp_path / "h", "app"), "git@github.com:me/blog.git")
    seen = resolve_binding(first, claims=claims, adopt=False)
    assert seen.adopted is None  # looking does not claim
    adopted = resolve_binding(first, claims=claims)
    assert adopted.scopes == {"project:github.com/acme/shop", "project:app"}
    assert adopted.grant().default_scope == "project:github.com/acme/shop"
    assert "project:app (its records from before)" in adopted.describe()
    assert resolve_binding(first, claims=claims).adopted == "project:app"  # still its own
    other = resolve_binding(second, claims=claims)
    assert other.scopes == {"project:github.com/me/blog"}  # never the other's old scope


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


def test_doctor_shows_the_binding_of_the_folder_it_runs_in(
    tmp_path: Path, mama_env: dict[str, str]
) -> None:
    repo = remote(git_project(tmp_path / "src", "app"), "git@github.com:acme/shop.git")

    def doctor(cwd: Path) -> dict[str, Any]:
        done = subprocess.run(
            [str(VENV_BIN / "mama"), "doctor", "--json"],
            cwd=cwd,
            env=mama_env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["coding_project"]

    assert doctor(repo) == {
        "scope": "project:github.com/acme/shop",
        "adopted": None,
        "from": f"git remote origin of {repo}",
    }
    (repo / ".mama-project").write_text("shop\n")
    assert doctor(repo)["scope"] == "project:shop"  # the committed file wins


def test_the_servers_instructions_name_the_binding_and_where_it_came_from(
    tmp_path: Path,
) -> None:
    from app.mcp.server import instructions

    repo = remote(git_project(tmp_path, "app"), "git@github.com:acme/shop.git")
    said = instructions(resolve_binding(repo))
    assert f"bound to project:github.com/acme/shop, from git remote origin of {repo}." in said
    assert "project:app" not in said  # control: not the folder name
