"""A machine where psycopg cannot load libpq (a bundle on a system without GnuTLS, or
psycopg without a usable libpq): team commands say so in one line with their code, and
personal commands keep working. ``PSYCOPG_IMPL=c`` asks psycopg for its C build, which
is not installed here: the same ImportError psycopg raises when no libpq loads."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.app.test_cli_store_errors import MAMA
from tests.conftest import TEST_KEY_HEX

JOIN = "postgresql://mama_ann:secret@127.0.0.1:9/team"


def run(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAMA_", "PSYCOPG_"))}
    env.update(MAMA_HOME=str(home), MAMA_DB_KEY=TEST_KEY_HEX, **extra)
    return subprocess.run(
        [str(MAMA), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_team_join_without_a_loadable_libpq_says_so_in_one_line(tmp_path: Path) -> None:
    refused = run(tmp_path, "team", "join", JOIN, PSYCOPG_IMPL="c")
    assert refused.returncode == 74, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in refused.stderr
    assert lines[0].startswith("mama: team_client_missing: the PostgreSQL client library")
    assert "libpq5" in lines[0]
    # The control: with psycopg's own choice the same join gets as far as the network
    # (nothing listens on port 9), and personal commands never needed libpq.
    unreachable = run(tmp_path, "team", "join", JOIN)
    assert unreachable.returncode == 63, unreachable.stderr
    assert "team_unreachable" in unreachable.stderr
    personal = run(tmp_path, "remember", "We ship on Thursdays", "--kind", "fact", PSYCOPG_IMPL="c")
    assert personal.returncode == 0, personal.stderr
