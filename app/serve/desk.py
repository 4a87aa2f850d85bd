"""Talking to MAMA at the desk: one owner turn from ``mama ask`` / ``mama chat``.

The desk's message is an owner message in the same mailbox as Telegram's, so it
has the same ordering, pause, retries and forgetting, and it is answered by the
one process that runs the agent. Which process that is:

* another process (the tray app or ``mama daemon``) holds the runtime lock and
  announced that it takes desk turns: the message is **handed over** through the
  store — posted to the mailbox, picked up by that runtime at its next commit
  check, and its reply read back from the journal. That is what a person expects
  (the agent that already runs answers, with its session, its Telegram and its
  tray), and two runtimes never serve one memory at once;
* nobody holds the lock: this process takes it and runs the runtime itself for
  the turn (and for any owner message ahead of it), then stops;
* a process holds the lock but never announced it takes desk turns (an older
  MAMA), or the agent is paused: refused with one line and a code, and nothing
  is posted.

If the serving process goes away while the desk waits, the desk takes the lock
and answers the message itself: a message is never lost to a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from filelock import Timeout

from app.durable.desk import TurnOutcome, desk_server, outcome, post_desk_message
from app.durable.mailbox import InputState, Mailbox
from app.durable.schema import open_runtime_db
from app.durable.state import stored_pause
from app.durable.transaction import RuntimeDb
from app.local.paths import Paths
from app.local.settings import Settings
from app.serve.host import RuntimeBusyError, make_runtime, runtime_lock
from mama_core.errors import MamaError
from mama_core.memory import Engine
from mama_core.store import Store

log = logging.getLogger(__name__)

HANDLED_HERE = "this command"
WAIT_TICK_SECONDS = 0.1
"""How often the desk rereads the store while another process answers."""


class AgentPausedError(MamaError):
    """The owner paused the agent: a desk message would only wait."""

    code = "agent_paused"
    exit_code = 60


class NoReplyError(MamaError):
    """The turn did not give a reply in time (it failed and waits for a retry, gave up,
    or is still running); the message stays in the mailbox."""

    code = "no_reply"
    exit_code = 61


@dataclass(frozen=True)
class DeskReceipt:
    """A desk turn: the input it made, who answered it, and what became of it."""

    input_id: int
    observation_id: int
    handled_by: str
    """``this command``, or ``running MAMA (pid N)`` when handed over."""
    outcome: TurnOutcome

    def to_dict(self) -> dict[str, object]:
        o = self.outcome
        return {
            "input_id": self.input_id,
            "observation_id": self.observation_id,
            "handled_by": self.handled_by,
            "state": o.state.value,
            "attempts": o.attempts,
            "reply": o.reply,
            "reply_observation_id": o.reply_observation_id,
            "proposals": list(o.cards),
        }


class Desk:
    """Sends the owner's desk messages to whichever process runs the agent."""

    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        store: Store,
        engine: Callable[[], Engine],
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.store = store
        self._engine = engine
        """Made only when this process runs the turn itself (it loads the embedder)."""
        self.db: RuntimeDb = open_runtime_db(store)
        self.mailbox = Mailbox(self.db)
        self._lock = runtime_lock(paths)

    def close(self) -> None:
        if self._lock.is_locked:
            self._lock.release()
        self.db.close()

    def ask(self, text: str, timeout: float) -> DeskReceipt:
        """Post ``text`` as the owner's message and wait up to ``timeout`` s for the reply.

        Raises ``AgentPausedError`` or ``RuntimeBusyError`` before posting anything,
        ``NoReplyError`` when no reply came (the message then waits in the mailbox).
        """
        if stored_pause(self.db):
            raise AgentPausedError(
                "The agent is paused, so your message would only wait; resume it "
                "(Resume agent in the MAMA tray, or `mama agent resume`) and ask again."
            )
        deadline = time.monotonic() + timeout
        if self._try_lock():
            try:
                posted = post_desk_message(self.mailbox, text)
                result = self._run_here(posted.input_id, deadline)
            finally:
                self._lock.release()
            return self._receipt(posted.input_id, posted.observation_id, HANDLED_HERE, result)
        server = desk_server(self.db)
        if server is None or not server.alive():
            raise RuntimeBusyError(
                f"Another MAMA runs the agent for {self.paths.home} and does not take "
                "messages from the desk (an older version?); update and restart it, or "
                "write to MAMA in Telegram."
            )
        posted = post_desk_message(self.mailbox, text)
        handled_by = f"running MAMA (pid {server.pid})"
        result = self._wait_handed_over(posted.input_id, deadline)
        if result is None:  # the serving process went away: answer it here
            handled_by = HANDLED_HERE
            try:
                result = self._run_here(posted.input_id, deadline)
            finally:
                self._lock.release()
        return self._receipt(posted.input_id, posted.observation_id, handled_by, result)

    def _try_lock(self) -> bool:
        try:
            self._lock.acquire()
        except Timeout:
            return False
        return True

    def _wait_handed_over(self, input_id: int, deadline: float) -> TurnOutcome | None:
        """Reread the store until the running MAMA settles the input; None when that
        process let the runtime lock go first (then this process holds it)."""
        tick = threading.Event()
        while True:
            result = outcome(self.db, input_id)
            if result.answered or result.failed_attempt or time.monotonic() >= deadline:
                return result
            if self._try_lock():
                result = outcome(self.db, input_id)
                if result.answered or result.failed_attempt:
                    self._lock.release()
                    return result
                return None
            tick.wait(WAIT_TICK_SECONDS)

    def _run_here(self, input_id: int, deadline: float) -> TurnOutcome:
        """Run the owner runtime in this process (the lock is held) until the input's
        turn is over, then stop it; a turn ahead of it (an older owner message) runs
        first, as it would in the app."""
        before = outcome(self.db, input_id)
        if before.answered or before.failed_attempt:
            return before
        engine = self._engine()
        left = max(0.0, deadline - time.monotonic())
        asyncio.run(self._serve_until_turned(engine, input_id, left))
        return outcome(self.db, input_id)

    async def _serve_until_turned(self, engine: Engine, input_id: int, timeout: float) -> None:
        db = await asyncio.to_thread(open_runtime_db, self.store)
        runtime = make_runtime(self.paths, self.settings, engine, self.store, db)
        turned = asyncio.Event()

        def on_turn(claimed: object, _reply: object) -> None:
            if getattr(claimed, "id", None) == input_id:
                # No further input is taken: the app or the daemon answers the rest.
                runtime.pause()
                turned.set()

        runtime.turn_listeners.append(on_turn)
        try:
            await runtime.start()
            # Already settled before the start (purged meanwhile): no turn will come.
            if (await runtime.run_db(outcome, db, input_id)).state is InputState.DONE:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await turned.wait()
        finally:
            await runtime.stop()
            db.close()

    def _receipt(
        self, input_id: int, observation_id: int, handled_by: str, result: TurnOutcome
    ) -> DeskReceipt:
        receipt = DeskReceipt(input_id, observation_id, handled_by, result)
        if result.answered:
            return receipt
        raise NoReplyError(_no_reply_text(result), details=receipt.to_dict())


def _no_reply_text(result: TurnOutcome) -> str:
    why = f" ({result.last_error})" if result.last_error else ""
    if result.state is InputState.DEAD:
        return f"MAMA gave up on your message after {result.attempts} tries{why}."
    if result.failed_attempt:
        at = result.available_at.strftime("%H:%M")
        return (
            f"MAMA could not answer your message yet{why}; it tries again at {at} UTC. "
            "The reply will show in `mama chat`."
        )
    return (
        "No reply yet; your message waits in the mailbox and its reply will show in "
        "`mama chat` (wait longer with --timeout)."
    )
