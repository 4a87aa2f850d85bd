"""Forgetting from the command line, as a person runs it: ``mama observations
list/show/purge``, ``mama purge --observation`` and ``mama purge ID --with-quotes``,
with the real console script against a real store; after each purge every page of
the file and its WAL is decrypted and the purged words are gone beside a control
word that is found."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.durable.mailbox import record_observation
from mama_core.store import DbKey, Store
from tests.app.runtime.support import MAMA
from tests.app.test_cli_store_errors import assert_one_line_error, run_mama
from tests.conftest import TEST_KEY_HEX
from tests.mama_core.memory.test_purge_erasure import (
    CONTROL_WORD,
    decrypted_file,
    decrypted_wal,
    found_words,
)


class Mama:
    def __init__(self, home: Path, cache: Path) -> None:
        self.home = home
        self.cache = cache

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_mama(self.home, *args, cache=self.cache)

    def json(self, *args: str) -> dict[str, Any]:
        result = self.run(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def observe(self, *texts: str) -> list[int]:
        """Keep ``texts`` as Telegram messages, as the runtime does."""
        with Store.open(self.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
            return [
                record_observation(store.conn, "telegram", f"m{i}-{t[:8]}", "owner", t, "2026")
                for i, t in enumerate(texts)
            ]

    def pages(self) -> list[bytes]:
        key = bytes.fromhex(TEST_KEY_HEX)
        db = self.home / "mama.db"
        return decrypted_file(db, key) + decrypted_wal(db.with_name("mama.db-wal"), key)


@pytest.fixture
def mama(tmp_path: Path, model_cache_dir: Path) -> Mama:
    made = Mama(tmp_path / "home", model_cache_dir)
    assert made.run("verify").returncode == 0  # creates the store
    return made


def test_observations_list_show_and_purge(mama: Mama) -> None:
    kept, first, second, noisy = mama.observe(
        f"lunch at the {CONTROL_WORD} place",
        "my quagmirette pin",
        "the zephyrbloom salary",
        "colour \x1b[31mred\x1b[0m",
    )
    listed = mama.json("observations", "list")["observations"]
    assert [o["id"] for o in listed] == [noisy, second, first, kept]
    shown = mama.run("observations", "show", str(first))
    assert shown.returncode == 0 and "my quagmirette pin" in shown.stdout
    escaped = mama.run("observations", "show", str(noisy))
    assert "\x1b" not in escaped.stdout and "\\x1b[31mred" in escaped.stdout

    unconfirmed = mama.run("observations", "purge", str(first))
    assert unconfirmed.returncode == 4 and "--yes" in unconfirmed.stderr
    assert mama.json("observations", "show", str(first))["observation"]["text"]

    purged = mama.json("observations", "purge", str(first), "--yes")
    assert purged["observations_purged"] == [first] and purged["wal"] == "truncated"
    by_flag = mama.json("purge", "--observation", str(second), "--yes")
    assert by_flag["observations_purged"] == [second]
    assert [o["id"] for o in mama.json("observations", "list")["observations"]] == [noisy, kept]
    assert mama.json("observations", "show", str(first))["observation"]["purged"] is True
    assert found_words(mama.pages(), [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(mama.pages(), ["quagmirette", "zephyrbloom"]) == set()

    assert_one_line_error(mama.run("observations", "show", "999"), "not_found")
    assert_one_line_error(mama.run("purge", "--yes"), "invalid_input")
    again = mama.run("observations", "purge", str(first), "--yes")
    assert_one_line_error(again, "invalid_transition")


def test_purge_lists_quoting_messages_and_erases_them_with_with_quotes(mama: Mama) -> None:
    stated = "The spare key hides under the zephyrbloom pot"
    moored = "The boat is moored at the narwhalian pier"
    said, reply, control, boat_msg = mama.observe(
        f"/remember {stated}",
        f"Saved: {stated.lower()}.",
        f"The {CONTROL_WORD} lunch is at noon",
        f"remember: {moored}",
    )
    key = mama.json("remember", stated, "--kind", "fact")["judgment_id"]
    boat = mama.json("remember", moored, "--kind", "fact")["judgment_id"]

    asked = mama.run("purge", str(key))
    assert asked.returncode == 4
    assert "2 message(s) quote it" in asked.stderr and "--with-quotes" in asked.stderr

    # --yes alone stays what it was: the memory only; the quotes are named, not erased.
    only = mama.json("purge", str(key), "--yes")
    assert only["purged"] == [key] and only["observations_purged"] == []
    assert only["quotes_left"] == [said, reply]
    assert "zephyrbloom" in mama.json("observations", "show", str(said))["observation"]["text"]

    both = mama.json("purge", str(boat), "--yes", "--with-quotes")
    assert both["purged"] == [boat] and both["observations_purged"] == [boat_msg]
    text = mama.run("observations", "purge", str(said), str(reply), "--yes")
    assert text.returncode == 0 and f"#{said}, #{reply}" in text.stdout

    kept = [o["id"] for o in mama.json("observations", "list")["observations"]]
    assert kept == [control]
    assert found_words(mama.pages(), [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(mama.pages(), ["zephyrbloom", "narwhalian"]) == set()


def test_doctor_says_when_a_purge_waits_for_a_reader(mama: Mama) -> None:
    jid = mama.json("remember", "The quagmirette plan", "--kind", "fact")["judgment_id"]
    assert "purge: nothing pending" in mama.run("doctor").stdout
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from mama_core.store.connection import connect\n"
        "from mama_core.store.keys import DbKey\n"
        "c = connect(Path(sys.argv[1]), DbKey.from_secret(os.environ['READER_KEY']))\n"
        "c.execute('BEGIN')\n"
        "c.execute('SELECT count(*) FROM judgments').fetchone()\n"
        "print('reading', flush=True)\n"
        "sys.stdin.read()\n"
        "c.execute('COMMIT')\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", script, str(mama.home / "mama.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "READER_KEY": TEST_KEY_HEX},
    )
    assert reader.stdin is not None and reader.stdout is not None
    try:
        assert reader.stdout.readline().strip() == "reading"
        purged = mama.run("purge", str(jid), "--yes")
        assert purged.returncode == 0 and "truncates it as soon as it can" in purged.stdout
        assert "purge: PENDING" in mama.run("doctor").stdout
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)
        reader.stdout.close()
    # The next command that opens the memory finishes it once the store is free.
    assert "purge: PENDING" in mama.run("doctor").stdout
    assert "purge: nothing pending" in mama.run("doctor").stdout
    assert found_words(mama.pages(), ["quagmirette"]) == set()


def on_a_terminal(mama: Mama, answers: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mama`` with a terminal as its input (answers typed in advance)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(MAMA_HOME=str(mama.home), MAMA_DB_KEY=TEST_KEY_HEX, MAMA_CACHE_DIR=str(mama.cache))
    try:
        process = subprocess.Popen(
            [str(MAMA), *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        os.write(master, answers.encode())
        out, err = process.communicate(timeout=300)
    finally:
        os.close(slave)
        os.close(master)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_on_a_terminal_purge_asks_about_the_quoting_messages(mama: Mama) -> None:
    first = "The spare key hides under the zephyrbloom pot"
    second = "The boat is moored at the narwhalian pier"
    key_msg, boat_msg = mama.observe(f"/remember {first}", f"/remember {second}")
    key = mama.json("remember", first, "--kind", "fact")["judgment_id"]
    boat = mama.json("remember", second, "--kind", "fact")["judgment_id"]

    kept = on_a_terminal(mama, "y\nn\n", "purge", str(key))
    assert kept.returncode == 0, kept.stderr
    assert "1 message(s) quote it" in kept.stderr and f"obs #{key_msg}" in kept.stderr
    assert "still quote it" in kept.stdout
    assert "zephyrbloom" in mama.json("observations", "show", str(key_msg))["observation"]["text"]

    erased = on_a_terminal(mama, "y\ny\n", "purge", str(boat))
    assert erased.returncode == 0, erased.stderr
    assert f"obs #{boat_msg}" in erased.stdout
    assert mama.json("observations", "show", str(boat_msg))["observation"]["purged"] is True
    assert mama.json("show", str(boat))["record"]["status"] == "purged"
