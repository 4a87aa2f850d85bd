"""``mama ask`` and ``mama chat``: talk to MAMA at the terminal.

Both send owner turns through ``app.serve.desk`` (the same mailbox as Telegram's,
answered by the running app or daemon, or by this command when none runs).
``/work`` and ``/today`` are answered here from the owner's ledger and calendar,
as the Telegram bot does it itself; ``/forget`` in ``mama chat`` erases your
last message and its reply (the terminal's "reply with /forget"), ``/forget ID``
a memory, each after asking.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.memory import json_option
from mama_core.errors import InvalidInputError

if TYPE_CHECKING:
    from app.durable.desk import ChatLine
    from app.serve.desk import Desk, DeskReceipt

DEFAULT_TIMEOUT = 300.0
HISTORY_LINES = 20
"""How many messages and replies ``mama chat`` shows when it opens."""
QUIT_WORDS = ("/quit", "/exit")

timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=1.0),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds to wait for the reply; the message waits in the mailbox after that.",
)


def _open_desk(obj: CliContext) -> Desk:
    from app.serve.desk import Desk

    desk = Desk(obj.paths, obj.settings, obj.store(), obj.engine)
    click.get_current_context().call_on_close(desk.close)
    return desk


def _echo_text(text: str, prefix: str = "") -> None:
    """Stored text, line by line, made safe for the terminal; ``prefix`` before the
    first line, the others indented."""
    for i, line in enumerate(text.splitlines() or [""]):
        lead = prefix if i == 0 else ("  " if prefix else "")
        click.echo(lead + terminal_text(line))


def _review_line(receipt: DeskReceipt) -> str | None:
    cards = receipt.outcome.cards
    if not cards:
        return None
    ids = ", ".join(f"#{c}" for c in cards)
    return f"Waiting for your review: {ids} (the review window, or Telegram's buttons)."


def _work_answer(obj: CliContext) -> str:
    """``/work``: the open commitments, answered from the ledger with any backend."""
    from app.telegram.gateway import WORK_LIST_LIMIT, work_text

    found = obj.owner_dispatch("commitment.list", {"limit": WORK_LIST_LIMIT + 1})
    return work_text(found.get("commitments") or [])


def _today_answer(obj: CliContext) -> str:
    """``/today``: the day's meetings from the calendar's latest state, with any backend."""
    from app.runtime.meetings import today_answer
    from mama_core import clock
    from mama_core.memory.owner_settings import zone_for

    zone = zone_for(obj.owner_dispatch("owner.settings", {})["timezone"])
    return today_answer(obj.owner_dispatch, clock.now(), zone)


ANSWERED_HERE = {"/work": _work_answer, "/today": _today_answer}
"""Commands answered from the store by this command itself, whatever the backend."""


def _command(text: str) -> str:
    return text.strip().partition(" ")[0].lower()


@click.command()
@click.argument("words", nargs=-1, required=True)
@timeout_option
@json_option
@click.pass_obj
def ask(obj: CliContext, words: tuple[str, ...], timeout: float, as_json: bool) -> None:
    """Send one message to MAMA and print the reply (the same turn as in Telegram).

    The running MAMA (tray app or daemon) answers it; when none runs, this command
    runs the agent for the turn. /remember, /search and the other commands work too.
    """
    text = " ".join(words).strip()
    if not text:
        raise InvalidInputError("Give the message to send, e.g. mama ask 'what is due today?'")
    command = _command(text)
    if command in ANSWERED_HERE:
        answer = ANSWERED_HERE[command](obj)
        if as_json:
            click.echo(json_text({"receipt": None, "reply": answer}))
        else:
            _echo_text(answer)
        return
    if command == "/forget":
        raise InvalidInputError(
            "/forget asks before it erases: use it in `mama chat`, or run "
            "`mama purge ID` (a memory) or `mama observations purge ID` (a message)."
        )
    receipt = _open_desk(obj).ask(text, timeout)
    if as_json:
        click.echo(json_text({"receipt": receipt.to_dict(), "reply": receipt.outcome.reply}))
        return
    _echo_text(receipt.outcome.reply or "(MAMA answered without words.)")
    review = _review_line(receipt)
    if review:
        click.echo(review)


@click.command()
@timeout_option
@click.option(
    "--history",
    "history_lines",
    type=click.IntRange(min=0),
    default=HISTORY_LINES,
    show_default=True,
    help="How many earlier messages and replies to show first.",
)
@click.pass_obj
def chat(obj: CliContext, timeout: float, history_lines: int) -> None:
    """Talk to MAMA in the terminal: the same conversation as Telegram.

    Enter sends; the arrow keys edit and recall lines. /work lists your open
    commitments, /forget erases your last message and its reply (/forget ID: a
    memory), /help lists MAMA's commands; /quit or Ctrl-D leaves.
    """
    from app.durable.desk import conversation
    from app.durable.mailbox import InputState
    from mama_core.errors import MamaError

    interactive = sys.stdin.isatty()
    if interactive:
        import readline  # noqa: F401  (input() gains line editing and history)

    desk = _open_desk(obj)
    shown: set[tuple[int, bool]] = set()
    earlier = conversation(desk.db, history_lines) if history_lines else []
    for line in earlier:
        _show_line(line)
    shown |= {(line.input_id, line.from_owner) for line in conversation(desk.db, 1000)}
    click.echo("Talking to MAMA. /quit or Ctrl-D leaves; /help lists the commands.")
    last_input: int | None = None
    while True:
        try:
            text = input("you> " if interactive else "")
        except EOFError:
            click.echo()
            return
        except KeyboardInterrupt:
            click.echo()
            return
        text = text.strip()
        if not text:
            continue
        command = _command(text)
        if command in QUIT_WORDS:
            return
        try:
            if command in ANSWERED_HERE:
                _echo_text(ANSWERED_HERE[command](obj), "MAMA: ")
                continue
            if command == "/forget":
                _forget(obj, desk, text, last_input)
                continue
            receipt = desk.ask(text, timeout)
        except MamaError as exc:
            click.echo(terminal_text(f"mama: {exc.code}: {exc.message}"), err=True)
            last_input = exc.details.get("input_id") if exc.details else last_input
            continue
        last_input = receipt.input_id
        shown.add((receipt.input_id, True))
        # What arrived meanwhile (a Telegram message and its reply) shows before ours.
        for line in conversation(desk.db, 50):
            key = (line.input_id, line.from_owner)
            if key in shown or (line.from_owner and line.state is not InputState.DONE):
                continue
            shown.add(key)
            _show_line(line)
        review = _review_line(receipt)
        if review:
            click.echo(review)


def _show_line(line: ChatLine) -> None:
    at = line.at.astimezone().strftime("%Y-%m-%d %H:%M")
    if line.from_owner:
        where = "at the desk" if line.via == "desk" else f"in {line.via}"
        who = f"[{at}] you ({where}): "
    else:
        who = f"[{at}] MAMA: "
    _echo_text(line.text, who)


def _forget(obj: CliContext, desk: Desk, text: str, last_input: int | None) -> None:
    """``/forget ID`` purges memory #ID; ``/forget`` alone your last message and its
    reply (the terminal's "reply with /forget"). Both ask first, in the chat."""
    from app.cli.observations import purge
    from app.durable.desk import conversation
    from mama_core.errors import MamaError

    argument = text.strip().partition(" ")[2].strip().lstrip("#")
    ctx = click.get_current_context()
    try:
        if argument:
            if not argument.isdigit():
                raise InvalidInputError("/forget takes a memory id: /forget 12")
            record = obj.owner_dispatch("memory.read", {"id": int(argument)})["record"]
            shown = f"#{record['id']} [{record['kind']}] {record.get('summary', '')}"
            if _agreed(f"Erase the text of {shown} for good?"):
                ctx.invoke(purge, judgment_id=int(argument), yes=True)
            return
        if last_input is None:
            raise InvalidInputError("Nothing said here yet to forget; /forget ID erases a memory.")
        lines = [line for line in conversation(desk.db, 1000) if line.input_id == last_input]
        if not lines:
            raise InvalidInputError("Your last message is already forgotten.")
        if _agreed(f"Erase your last message and its reply for good? ({lines[0].text[:60]})"):
            ctx.invoke(
                purge, observation_ids=tuple(line.observation_id for line in lines), yes=True
            )
    except MamaError as exc:
        click.echo(terminal_text(f"mama: {exc.code}: {exc.message}"), err=True)


def _agreed(question: str) -> bool:
    """Ask in the chat itself (a pipe answers too); anything but y/yes keeps it."""
    try:
        answer = input(terminal_text(question) + " [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True
    click.echo("Nothing erased.")
    return False


COMMANDS = [ask, chat]
