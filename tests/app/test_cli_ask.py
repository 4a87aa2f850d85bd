"""``mama ask`` and ``mama chat`` as a person runs them: the real CLI in a subprocess,
on a real store, in command mode; answered by the command itself when no MAMA runs,
handed to a running ``mama daemon`` when one does, refused when it cannot be either."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.durable.desk import conversation
from app.durable.mailbox import InputKind, Mailbox, NewInput
from app.durable.schema import open_runtime_db
from mama_core.store import DbKey, Store
from tests.app.runtime.support import MAMA, mama_env
from tests.conftest import TEST_KEY_HEX


@pytest.fixture
def env(tmp_path: Path, model_cache_dir: Path, clean_env: pytest.MonkeyPatch) -> dict[str, str]:
    return mama_env(tmp_path / "home", model_cache_dir)


def mama(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MAMA), *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def ask_json(env: dict[str, str], text: str) -> dict[str, object]:
    done = mama(env, "ask", "--json", text)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def owner_messages(home: Path) -> list[str]:
    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        db = open_runtime_db(store)
        try:
            return [line.text for line in conversation(db) if line.from_owner]
        finally:
            db.close()


@pytest.fixture
def daemon(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [str(MAMA), "daemon"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert "ready" in proc.stdout.readline(), proc.stderr.read() if proc.stderr else ""
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)


def test_ask_runs_the_turn_itself_when_no_mama_runs(env: dict[str, str]) -> None:
    saved = mama(env, "ask", "/remember", "fact", "The boiler is serviced in May")
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout == "Saved #1 (fact, active).\n"

    found = ask_json(env, "/search boiler")
    receipt = found["receipt"]
    assert isinstance(receipt, dict)
    assert found["reply"] == "#1 fact: The boiler is serviced in May"
    assert receipt["handled_by"] == "this command"
    assert receipt["state"] == "done" and receipt["reply"] == found["reply"]
    assert isinstance(receipt["reply_observation_id"], int)
    # The search could miss: a word nothing holds finds nothing.
    assert ask_json(env, "/search xylophone")["reply"] == "Nothing found."


def test_a_paused_agent_refuses_and_posts_nothing(env: dict[str, str], tmp_path: Path) -> None:
    assert mama(env, "agent", "pause").returncode == 0
    refused = mama(env, "ask", "/search anything")
    assert refused.returncode == 60
    assert refused.stderr.startswith("mama: agent_paused: The agent is paused")
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert owner_messages(tmp_path / "home") == []

    # Positive control: resumed, the same question is posted and answered.
    assert mama(env, "agent", "resume").returncode == 0
    answered = mama(env, "ask", "/search anything")
    assert answered.returncode == 0, answered.stderr
    assert owner_messages(tmp_path / "home") == ["/search anything"]


def test_ask_hands_the_turn_to_the_running_daemon(
    env: dict[str, str], daemon: subprocess.Popen[str]
) -> None:
    first = ask_json(env, "/remember fact Invoices go out on the 3rd")
    receipt = first["receipt"]
    assert isinstance(receipt, dict)
    assert receipt["handled_by"] == f"running MAMA (pid {daemon.pid})"
    assert first["reply"] == "Saved #1 (fact, active)."

    # Positive control: with the daemon gone, the command answers the turn itself.
    daemon.send_signal(signal.SIGTERM)
    daemon.communicate(timeout=60)
    assert daemon.returncode == 0
    second = ask_json(env, "/search invoices")
    receipt = second["receipt"]
    assert isinstance(receipt, dict)
    assert receipt["handled_by"] == "this command"
    assert second["reply"] == "#1 fact: Invoices go out on the 3rd"


HOLD_LOCK = (
    "import sys\n"
    "from filelock import FileLock\n"
    "lock = FileLock(sys.argv[1], thread_local=False, blocking=False)\n"
    "lock.acquire()\n"
    "print('locked', flush=True)\n"
    "sys.stdin.read()\n"
)
"""An older MAMA: it holds the runtime lock and never says it takes desk turns."""


def test_an_older_mama_holding_the_agent_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert mama(env, "ask", "/search warmup").returncode == 0  # the store exists
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(home / "runtime.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as older:
        assert older.stdout is not None and older.stdout.readline() == "locked\n"
        refused = mama(env, "ask", "/search held")
        assert older.stdin is not None
        older.stdin.close()  # the older MAMA stops once the refusal is in
        assert refused.returncode == 53
        assert refused.stderr.startswith("mama: runtime_busy: Another MAMA runs the agent")
        assert "does not take messages from the desk" in refused.stderr
        assert owner_messages(home) == ["/search warmup"]
    # Positive control: the lock free again, the same message goes through.
    assert mama(env, "ask", "/search held").returncode == 0
    assert owner_messages(home) == ["/search warmup", "/search held"]


def test_chat_shows_the_telegram_conversation_and_drops_what_was_purged(
    env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    assert mama(env, "ask", "/remember fact The office opens at 8").returncode == 0
    # A Telegram message and its reply, as the gateway and the runtime store them.
    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        db = open_runtime_db(store)
        try:
            mailbox = Mailbox(db)
            mailbox.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "42:9", "Call Anna at 3"))
            claimed = mailbox.claim()
            assert claimed is not None
            mailbox.complete(claimed, "Noted: Anna at 3.")
            telegram_obs = claimed.observation_id
        finally:
            db.close()

    shown = mama(env, "chat", stdin="/search office\n/quit\n")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "you (at the desk): /remember fact The office opens at 8" in out
    assert "you (in telegram): Call Anna at 3" in out
    assert "MAMA: Noted: Anna at 3." in out
    assert "MAMA: #1 fact: The office opens at 8" in out  # the chat's own turn
    assert out.index("Call Anna at 3") < out.index("Talking to MAMA") < out.index("#1 fact")

    purged = mama(env, "observations", "purge", str(telegram_obs), "--yes")
    assert purged.returncode == 0, purged.stderr
    again = mama(env, "chat", stdin="")
    assert again.returncode == 0, again.stderr
    assert "Call Anna at 3" not in again.stdout
    assert "MAMA: Noted: Anna at 3." in again.stdout  # the reply was not purged


def test_ask_refuses_an_empty_message_and_forget_with_one_line(env: dict[str, str]) -> None:
    empty = mama(env, "ask", " ")
    assert empty.returncode != 0 and empty.stderr.startswith("mama: invalid_input: Give the")
    forget = mama(env, "ask", "/forget", "1")
    assert forget.returncode == empty.returncode
    assert "use it in `mama chat`" in forget.stderr
    assert "Traceback" not in empty.stderr + forget.stderr
    # Positive control: /work is answered at the desk, with no turn and any backend.
    work = mama(env, "ask", "/work")
    assert work.returncode == 0, work.stderr
    assert work.stdout.startswith("No open commitments.")


SILENT_SERVER = (
    "import sys\n"
    "from pathlib import Path\n"
    "from filelock import FileLock\n"
    "from app.durable.desk import announce_desk_server\n"
    "from app.durable.schema import open_runtime_db\n"
    "from mama_core.store import DbKey, Store\n"
    "home, key = Path(sys.argv[1]), sys.argv[2]\n"
    "lock = FileLock(home / 'runtime.lock', thread_local=False, blocking=False)\n"
    "lock.acquire()\n"
    "store = Store.open(home / 'mama.db', DbKey.from_secret(key))\n"
    "db = open_runtime_db(store)\n"
    "announce_desk_server(db)\n"
    "db.close()\n"
    "store.close()\n"
    "print('serving', flush=True)\n"
    "sys.stdin.read()\n"
)
"""A MAMA that takes the lock and says it takes desk turns, then hangs (until killed)."""


def test_when_the_running_mama_dies_the_waiting_desk_answers_the_message(
    env: dict[str, str], tmp_path: Path
) -> None:
    from tests.conftest import REPO_ROOT

    home = tmp_path / "home"
    assert mama(env, "ask", "/remember fact The dentist is on Friday").returncode == 0
    with subprocess.Popen(
        [sys.executable, "-c", SILENT_SERVER, str(home), TEST_KEY_HEX],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdout is not None and server.stdout.readline() == "serving\n"
        with subprocess.Popen(
            [str(MAMA), "ask", "--json", "/search dentist"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as asking:
            # The message is in the mailbox, handed to the server, which never answers.
            assert _until(lambda: "/search dentist" in owner_messages(home))
            assert asking.poll() is None
            server.kill()  # the app crashes with the message unanswered
            out, err = asking.communicate(timeout=300)
    assert asking.returncode == 0, err
    answered = json.loads(out)
    assert answered["reply"] == "#1 fact: The dentist is on Friday"
    assert answered["receipt"]["handled_by"] == "this command"
    assert owner_messages(home).count("/search dentist") == 1


def _until(condition: Callable[[], bool], timeout: float = 120.0) -> bool:
    """Whether ``condition`` holds within ``timeout`` (rechecked every 0.1 s)."""
    import threading
    import time

    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while time.monotonic() < deadline:
        if condition():
            return True
        tick.wait(0.1)
    return False


def test_forget_in_chat_erases_the_last_exchange_after_asking(
    env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    kept = mama(env, "chat", stdin="/remember fact The safe code is in the drawer\n/forget\nn\n")
    assert kept.returncode == 0, kept.stderr
    assert "Nothing erased." in kept.stdout
    assert owner_messages(home) == ["/remember fact The safe code is in the drawer"]

    # The same /forget, answered yes, in the next chat: its last exchange is this one.
    erased = mama(env, "chat", stdin="/search drawer\n/forget\ny\n")
    assert erased.returncode == 0, erased.stderr
    assert "purged obs" in erased.stdout
    assert owner_messages(home) == ["/remember fact The safe code is in the drawer"]
    shown = mama(env, "chat", stdin="")
    assert "/search drawer" not in shown.stdout
    assert "#1 fact: The safe code is in the drawer" not in shown.stdout  # its reply too
    assert "you (at the desk): /remember fact The safe code is in the drawer" in shown.stdout
