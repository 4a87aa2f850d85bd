"""The team commands as a person runs them: the real ``mama`` console script in a
subprocess, against a real PostgreSQL with pgvector, with the credentials kept in a real
Secret Service (gnome-keyring on a private D-Bus)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.app.test_cli_store_errors import MAMA
from tests.conftest import TEST_KEY_HEX


@dataclass
class Mama:
    home: Path
    cache: Path
    keyring_env: dict[str, str]

    def run(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
        env.update(self.keyring_env)
        env.update(
            MAMA_HOME=str(self.home), MAMA_DB_KEY=TEST_KEY_HEX, MAMA_CACHE_DIR=str(self.cache)
        )
        env.update(extra_env)
        return subprocess.run(
            [str(MAMA), *args], check=False, capture_output=True, text=True, env=env, timeout=300
        )

    def hook(self, name: str, event: dict[str, Any]) -> str:
        """``mama hook NAME`` as Claude Code runs it: the event on stdin; its context."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
        env.update(self.keyring_env)
        env.update(MAMA_HOME=str(self.home), MAMA_CACHE_DIR=str(self.cache))
        done = subprocess.run(
            [str(MAMA), "hook", name],
            input=json.dumps(event),
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        if not done.stdout.strip():
            return ""
        return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])

    def ok(self, *args: str) -> str:
        result = self.run(*args)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def json(self, *args: str) -> dict[str, Any]:
        return json.loads(self.ok(*args, "--json"))


@pytest.fixture
def make_mama(tmp_path: Path, model_cache_dir: Path, secret_service: dict[str, str]):
    def make(name: str) -> Mama:
        return Mama(tmp_path / name, model_cache_dir, secret_service)

    return make


def one_error_line(result: subprocess.CompletedProcess[str], code: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"mama: {code}: "), lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def join_string(invite_output: str) -> str:
    last = invite_output.strip().splitlines()[-1]
    assert last.startswith("postgresql://"), invite_output
    return last


def joined(make_mama, admin: Mama, folder: str, role: str, scope: str) -> Mama:
    """A member in ``folder`` who joined with the join string ``admin`` made for ``role``."""
    member = make_mama(folder)
    member.ok("team", "join", join_string(admin.ok("team", "invite", role, "--scopes", scope)))
    return member


def test_init_is_idempotent_and_refuses_a_foreign_database(
    make_mama, team_db: str, pg_server
) -> None:
    admin = make_mama("admin")
    first = admin.ok("team", "init", team_db)
    assert "team store set up at" in first
    again = admin.ok("team", "init", team_db)
    assert "already set up; nothing changed" in again
    with psycopg.connect(team_db) as conn:
        tables = conn.execute(
            "SELECT tablename, rowsecurity FROM pg_tables WHERE schemaname = 'mama_team' ORDER BY 1"
        ).fetchall()
        forced = conn.execute(
            "SELECT relname FROM pg_class WHERE relforcerowsecurity ORDER BY 1"
        ).fetchall()
        extensions = conn.execute("SELECT extname FROM pg_extension ORDER BY 1").fetchall()
    assert [t for t, _ in tables] == [
        "chain_head",
        "events",
        "grants",
        "memories",
        "memory_scopes",
        "meta",
    ]
    assert [r[0] for r in forced] == ["chain_head", "events", "grants", "memories", "memory_scopes"]
    assert ("vector",) in extensions and ("pg_trgm",) in extensions
    # A database with someone else's table is refused, and left as it was.
    foreign = pg_server.new_database()
    with psycopg.connect(foreign) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    refused = admin.run("team", "init", foreign)
    assert refused.returncode == 65
    assert "public.invoices" in one_error_line(refused, "team_database_not_ours")
    with psycopg.connect(foreign) as conn:
        assert conn.execute("SELECT to_regnamespace('mama_team')").fetchone() == (None,)


def test_invite_join_status_leave(make_mama, team_db: str, unique: str) -> None:
    admin = make_mama("admin")
    admin.ok("team", "init", team_db)
    invited = admin.ok("team", "invite", f"ann_{unique}", "--scopes", "team:eng,team:eng/web")
    string = join_string(invited)
    assert f"mama_ann_{unique}:" in string
    # The join string is the member's own role: psql-style, its password checked.
    with psycopg.connect(string) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (f"mama_ann_{unique}",)
    wrong = string.replace(f"mama_ann_{unique}:", f"mama_ann_{unique}:x", 1)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong)

    member = make_mama("member")
    assert "not in a team" in member.ok("team", "status")
    joined = member.ok("team", "join", string)
    assert "team:eng, team:eng/web" in joined
    assert string not in joined  # the password is shown once, by invite only
    status = member.json("team", "status")
    assert status == {
        "joined": True,
        "role": f"mama_ann_{unique}",
        "server": status["server"],
        "scopes": ["team:eng", "team:eng/web"],
        "reachable": True,
    }
    assert string.split("@")[0].split(":")[-1] not in (member.home / "team.json").read_text()
    left = member.ok("team", "leave")
    assert "left the team" in left
    assert "not in a team" in member.ok("team", "status")
    write = member.run("remember", "after leaving", "--kind", "decision", "--scope", "team:eng")
    one_error_line(write, "team_not_joined")


def test_a_bad_join_string_is_refused_and_not_kept(make_mama, team_db: str, unique: str) -> None:
    admin = make_mama("admin")
    admin.ok("team", "init", team_db)
    string = join_string(admin.ok("team", "invite", f"bo_{unique}", "--scopes", "team:eng"))
    member = make_mama("member")
    user, rest = string.split("@", 1)
    refused = member.run("team", "join", f"{user}wrong@{rest}")
    assert refused.returncode == 71
    assert "password authentication failed" in one_error_line(refused, "team_credentials_refused")
    assert "not in a team" in member.ok("team", "status")
    assert "joined the team" in member.ok("team", "join", string)  # the control


def test_remember_and_search_mix_personal_and_team(make_mama, team_db: str, unique: str) -> None:
    admin = make_mama("admin")
    admin.ok("team", "init", team_db)
    eng = joined(make_mama, admin, "eng", f"e_{unique}", "team:eng")
    ops = joined(make_mama, admin, "ops", f"o_{unique}", "team:ops")

    saved = eng.json(
        "remember",
        "We deploy the web app on Thursdays",
        "--kind",
        "decision",
        "--scope",
        "team:eng",
    )
    assert saved["store"] == "team" and saved["scopes"] == ["team:eng"]
    ops.json(
        "remember",
        "We deploy database changes on Tuesdays",
        "--kind",
        "decision",
        "--scope",
        "team:ops",
    )
    personal = eng.json("remember", "I deploy my side project on Sundays", "--kind", "decision")
    assert personal["event_id"] == 1  # the personal store's own chain

    found = eng.json("search", "when do we deploy")
    stores = {(hit["store"], hit["summary"]) for hit in found["results"]}
    assert ("team", "We deploy the web app on Thursdays") in stores
    assert ("personal", "I deploy my side project on Sundays") in stores
    assert ("team", "We deploy database changes on Tuesdays") not in stores  # ops' row
    text = eng.ok("search", "when do we deploy")
    assert "[team] #" in text and "[personal] #" in text
    # ops sees its own row (the control that the query could find it).
    ops_found = ops.json("search", "when do we deploy", "--scope", "team:ops")
    assert [h["summary"] for h in ops_found["results"]] == [
        "We deploy database changes on Tuesdays"
    ]
    # A write into a scope the role was not granted is refused with its code.
    refused = eng.run("remember", "planted", "--kind", "decision", "--scope", "team:ops")
    assert refused.returncode == 66
    one_error_line(refused, "team_scope_not_granted")
    assert "team chain intact: 2 events" in admin.ok("team", "verify")
    with psycopg.connect(team_db) as conn:
        conn.execute("UPDATE mama_team.memories SET summary = 'rewritten' WHERE id = 1")
    tampered = admin.run("team", "verify")
    assert tampered.returncode == 72
    assert "problem: memory #1 does not match its event 1" in tampered.stdout
    one_error_line(tampered, "team_chain_broken")
    mixed = eng.run(
        "remember", "both", "--kind", "decision", "--scope", "team:eng", "--scope", "project:web"
    )
    one_error_line(mixed, "team_invalid_input")


def test_team_unreachable_personal_keeps_working(make_mama, team_db: str, unique: str) -> None:
    admin = make_mama("admin")
    admin.ok("team", "init", team_db)
    member = joined(make_mama, admin, "member", f"u_{unique}", "team:eng")
    member.ok("remember", "Invoices are paid on the first of the month", "--kind", "decision")
    member.ok(
        "remember", "Invoices go to the finance team", "--kind", "decision", "--scope", "team:eng"
    )
    # The server goes away: the kept credentials now name a port where nothing listens
    # (written into the same Secret Service the CLI reads, by another process).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    keep_in_keyring(member, f"postgresql://mama_u_{unique}:pw@127.0.0.1:{port}/team")
    result = member.run("search", "when are invoices paid")
    assert result.returncode == 0, result.stderr
    assert "[personal] #" in result.stdout and "first of the month" in result.stdout
    assert "[team]" not in result.stdout
    line = one_error_line(result, "team_unreachable")
    assert "personal ones shown" in line
    write = member.run("remember", "queued?", "--kind", "decision", "--scope", "team:eng")
    assert write.returncode == 63
    one_error_line(write, "team_unreachable")
    status = member.json("team", "status")
    assert status["reachable"] is False and status["scopes"] == ["team:eng"]


def test_retire_and_purge_commands(make_mama, team_db: str, unique: str) -> None:
    admin = make_mama("admin")
    admin.ok("team", "init", team_db)
    eng = joined(make_mama, admin, "eng", f"r_{unique}", "team:eng")
    ops = joined(make_mama, admin, "ops", f"p_{unique}", "team:ops")
    old = eng.json(
        "remember", "Lunch is at noon on Fridays", "--kind", "decision", "--scope", "team:eng"
    )
    eng.json(
        "remember", "Lunch moves to one on Fridays", "--kind", "decision", "--scope", "team:eng"
    )
    before = [h["summary"] for h in eng.json("search", "when is lunch on Fridays")["results"]]
    assert "Lunch is at noon on Fridays" in before  # the control

    elsewhere = ops.run("team", "retire", str(old["memory_id"]))
    assert elsewhere.returncode == 73
    one_error_line(elsewhere, "team_memory_not_found")
    retired = eng.json("team", "retire", str(old["memory_id"]))
    assert retired["status"] == "retired" and retired["event_id"] == 3
    after = [h["summary"] for h in eng.json("search", "when is lunch on Fridays")["results"]]
    assert "Lunch is at noon on Fridays" not in after
    assert "Lunch moves to one on Fridays" in after

    member_url = join_string(admin.ok("team", "invite", f"q_{unique}", "--scopes", "team:eng"))
    refused = eng.run("team", "purge", str(old["memory_id"]), "--admin-url", member_url)
    assert refused.returncode == 66
    one_error_line(refused, "team_scope_not_granted")
    purged = admin.ok("team", "purge", str(old["memory_id"]))
    assert f"purged team memory #{old['memory_id']} (event 4)" in purged
    assert "team chain intact: 4 events" in admin.ok("team", "verify")


def keep_in_keyring(member: Mama, url: str) -> None:
    """Replace the member's kept join string (by another process, as a person's
    keyring would be changed)."""
    account = f"team:{member.home.resolve()}"
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import keyring; keyring.set_password('mama', {account!r}, {url!r})",
        ],
        env={**os.environ, **member.keyring_env},
        check=True,
        timeout=60,
    )


def test_a_coding_agents_session_start_shows_the_members_team_memories(
    make_mama, team_db: str, unique: str, tmp_path: Path
) -> None:
    """The Claude Code plugin's session-start hook of a member: the newest team memories
    it may read, never another team's; with the server away, one line says so."""
    admin = make_mama("admin")
    admin.ok("team", "init", team_db)
    eng = joined(make_mama, admin, "eng", f"e_{unique}", "team:eng")
    ops = joined(make_mama, admin, "ops", f"o_{unique}", "team:ops")
    eng.ok("remember", "Releases ship on Thursdays", "--kind", "decision", "--scope", "team:eng")
    ops.ok("remember", "The pager rotates on Mondays", "--kind", "decision", "--scope", "team:ops")
    project = tmp_path / "orchard"
    project.mkdir()
    event = {"cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}

    context = eng.hook("session-start", event)
    assert "Releases ship on Thursdays" in context and "in team:eng, by mama_e_" in context
    assert "pager" not in context
    assert "pager" in ops.hook("session-start", event)  # the control: ops' own row shows
    assert make_mama("loner").hook("session-start", event) == ""  # no team, no store: silence

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    keep_in_keyring(eng, f"postgresql://mama_e_{unique}:pw@127.0.0.1:{port}/team")
    away = eng.hook("session-start", event)
    assert "Team memories left out: team_unreachable: " in away
    assert "Thursdays" not in away and ":pw@" not in away
