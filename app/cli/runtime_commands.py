"""The runtime's commands: ``mama daemon``, ``mama telegram pair-code`` and the
hidden ``mama agent-bridge`` that Claude Code starts as its MCP server."""

from __future__ import annotations

import click

from app.cli.context import CliContext


@click.command()
@click.pass_obj
def daemon(obj: CliContext) -> None:
    """Run MAMA headless: the mailbox, the agent and Telegram, until stopped."""
    from app.runtime.daemon import run_daemon

    run_daemon(obj.paths, obj.settings)


@click.group()
def telegram() -> None:
    """Telegram: pair your chat with MAMA."""


@telegram.command("pair-code")
@click.pass_obj
def pair_code(obj: CliContext) -> None:
    """Show a one-time code; send /pair CODE to the bot within ten minutes."""
    from app.runtime.transaction import RuntimeDb
    from app.telegram.pairing import CODE_TTL, Pairing

    store = obj.store()
    db = RuntimeDb(store.reader(), store.path)
    try:
        code = Pairing(db).new_code()
    finally:
        db.close()
    minutes = int(CODE_TTL.total_seconds() // 60)
    click.echo(f"Send this to your MAMA bot in Telegram within {minutes} minutes:")
    click.echo(f"/pair {code}")


@click.command("agent-bridge", hidden=True)
@click.option("--socket", "socket_path", required=True, help="The app's bridge socket.")
def agent_bridge(socket_path: str) -> None:
    """MCP on stdio for Claude Code, forwarded to the running app (started by MAMA)."""
    from app.backends.mcp_bridge import run

    run(socket_path)


@click.group()
def agent() -> None:
    """The owner's agent: pause it (messages wait) or resume it."""


@agent.command("pause")
@click.pass_obj
def agent_pause(obj: CliContext) -> None:
    """Take no new messages until resumed; they wait in the mailbox."""
    _set_paused(obj, True)


@agent.command("resume")
@click.pass_obj
def agent_resume(obj: CliContext) -> None:
    """Answer the waiting messages and new ones again."""
    _set_paused(obj, False)


def _set_paused(obj: CliContext, paused: bool) -> None:
    from app.runtime.host import runtime_running
    from app.runtime.state import store_pause
    from app.runtime.transaction import RuntimeDb

    store = obj.store()
    db = RuntimeDb(store.reader(), store.path)
    try:
        store_pause(db, paused)
    finally:
        db.close()
    state = "paused" if paused else "resumed"
    if runtime_running(obj.paths):
        click.echo(f"Agent {state}; the running MAMA follows within a second.")
    else:
        click.echo(f"Agent {state}; MAMA will start that way.")


COMMANDS = [daemon, telegram, agent, agent_bridge]
