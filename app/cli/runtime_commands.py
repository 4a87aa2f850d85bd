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


COMMANDS = [daemon, telegram, agent_bridge]
