"""The runtime's commands: ``mama daemon``, ``mama telegram pair-code`` / ``unpair``
and the hidden ``mama agent-bridge`` that Claude Code starts as its MCP server."""

from __future__ import annotations

import json

import click

from app.cli.context import CliContext
from app.cli.display import json_text
from app.cli.memory import json_option


@click.command()
@json_option
@click.pass_obj
def daemon(obj: CliContext, as_json: bool) -> None:
    """Run MAMA headless: the mailbox, the agent and Telegram, until stopped.

    With --json the ready line is a JSON object.
    """
    from app.serve.daemon import run_daemon

    run_daemon(obj.paths, obj.settings, as_json)


@click.group()
def telegram() -> None:
    """Telegram: pair your chat with MAMA."""


@telegram.command("pair-code")
@json_option
@click.pass_obj
def pair_code(obj: CliContext, as_json: bool) -> None:
    """Show a one-time code; send /pair CODE to the bot within ten minutes."""
    from app.durable.schema import open_runtime_db
    from app.telegram.pairing import CODE_TTL, Pairing

    store = obj.store()
    db = open_runtime_db(store)
    try:
        code = Pairing(db).new_code()
    finally:
        db.close()
    minutes = int(CODE_TTL.total_seconds() // 60)
    if as_json:
        seconds = int(CODE_TTL.total_seconds())
        click.echo(json_text({"code": code, "command": f"/pair {code}", "expires_in_s": seconds}))
        return
    click.echo(f"Send this to your MAMA bot in Telegram within {minutes} minutes:")
    click.echo(f"/pair {code}")


@telegram.command("unpair")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@click.pass_obj
def unpair(obj: CliContext, as_json: bool) -> None:
    """Unpair the Telegram chat (and tell it so); then a new code can pair another."""
    from app.durable.schema import open_runtime_db
    from app.telegram.pairing import Pairing

    store = obj.store()
    db = open_runtime_db(store)
    try:
        old = Pairing(db).unpair()
    finally:
        db.close()
    notified = _notify_unpaired(old.chat_id) if old is not None else False
    if as_json:
        result = {
            "unpaired": old is not None,
            "chat_id": old.chat_id if old else None,
            "username": old.username if old else None,
            "notified": notified,
        }
        click.echo(json.dumps(result, sort_keys=True))
        return
    if old is None:
        click.echo("Telegram was not paired.")
        return
    who = f"@{old.username}" if old.username else f"chat {old.chat_id}"
    told = "told it so" if notified else "could not tell it so (no bot token or Telegram offline)"
    click.echo(f"Unpaired {who}; {told}. Run `mama telegram pair-code` to pair a chat again.")


def _notify_unpaired(chat_id: int) -> bool:
    """Send the unpaired notice to ``chat_id`` with the configured bot, if there is one."""
    import asyncio

    from telegram import Bot
    from telegram.error import TelegramError
    from telegram.request import HTTPXRequest

    from app.telegram.config import api_url, telegram_token
    from app.telegram.gateway import notify_unpaired

    token = telegram_token()
    if token is None:
        return False
    url = api_url()

    async def send() -> bool:
        request = HTTPXRequest(connect_timeout=5.0, read_timeout=10.0)
        bot = Bot(token, base_url=f"{url}/bot", request=request)
        try:
            async with bot:
                return await notify_unpaired(bot, chat_id)
        except TelegramError:
            return False

    return asyncio.run(send())


@click.command("agent-bridge", hidden=True)
@click.option("--socket", "socket_path", required=True, help="The app's bridge socket.")
def agent_bridge(socket_path: str) -> None:
    """MCP on stdio for Claude Code, forwarded to the running app (started by MAMA)."""
    from app.backends.claude_relay_process import run

    run(socket_path)


@click.group()
def agent() -> None:
    """The owner's agent: pause it (messages wait) or resume it."""


@agent.command("pause")
@json_option
@click.pass_obj
def agent_pause(obj: CliContext, as_json: bool) -> None:
    """Take no new messages until resumed; they wait in the mailbox."""
    _set_paused(obj, True, as_json)


@agent.command("resume")
@json_option
@click.pass_obj
def agent_resume(obj: CliContext, as_json: bool) -> None:
    """Answer the waiting messages and new ones again."""
    _set_paused(obj, False, as_json)


def _set_paused(obj: CliContext, paused: bool, as_json: bool) -> None:
    from app.durable.schema import open_runtime_db
    from app.durable.state import store_pause
    from app.serve.host import runtime_running

    store = obj.store()
    db = open_runtime_db(store)
    try:
        store_pause(db, paused)
    finally:
        db.close()
    state = "paused" if paused else "resumed"
    running = runtime_running(obj.paths)
    if as_json:
        click.echo(json_text({"paused": paused, "runtime_running": running}))
    elif running:
        click.echo(f"Agent {state}; the running MAMA follows within a second.")
    else:
        click.echo(f"Agent {state}; MAMA will start that way.")


COMMANDS = [daemon, telegram, agent, agent_bridge]
