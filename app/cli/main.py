"""Entry point: the ``mama`` group, and the one place errors become a line.

A ``MamaError`` prints ``mama: <code>: <message>`` on stderr and exits with
its code; anything unexpected is logged with its traceback in the data folder
and shown as one line that says where the details are.
"""

from __future__ import annotations

import logging
import sys

import click

from app.cli.brief import COMMANDS as BRIEF_COMMANDS
from app.cli.chat import COMMANDS as CHAT_COMMANDS
from app.cli.connectors import connectors
from app.cli.context import CliContext
from app.cli.display import terminal_text
from app.cli.doctor import doctor
from app.cli.mcp_commands import hook, mcp
from app.cli.memory import COMMANDS as MEMORY_COMMANDS
from app.cli.observations import COMMANDS as FORGET_COMMANDS
from app.cli.people import COMMANDS as PEOPLE_COMMANDS
from app.cli.proposals import proposals
from app.cli.runtime_commands import COMMANDS as RUNTIME_COMMANDS
from app.cli.team import team
from app.cli.timeline import timeline
from app.cli.tombstones import tombstones
from app.cli.work import work
from app.local.logs import setup_file_logging
from app.local.paths import resolve_paths
from mama_core.errors import MamaError

log = logging.getLogger("mama.cli")

INTERNAL_ERROR_EXIT = 70


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=str),
    envvar="MAMA_HOME",
    help="Data folder (default: the platform's user data folder; env MAMA_HOME).",
)
@click.option(
    "--dev",
    is_flag=True,
    help="Work on the coding agents' development memory (dev-memory.db), not yours.",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _print_version(ctx, value),
    help="Show the version and the commit it was built from, then exit.",
)
@click.pass_context
def cli(ctx: click.Context, home: str | None, dev: bool) -> None:
    """MAMA: your personal work agent, with a memory you can trust."""
    ctx.obj = CliContext(paths=resolve_paths(home), dev_memory=dev)
    if ctx.invoked_subcommand is None:
        # Until the desktop app lands, launching MAMA checks the installation.
        ctx.invoke(doctor)


def _print_version(ctx: click.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from app.local.build_info import this_build

        click.echo(this_build().version_line())
        ctx.exit()


cli.add_command(doctor)
cli.add_command(mcp)
cli.add_command(hook)
cli.add_command(tombstones)
cli.add_command(connectors)
cli.add_command(work)
cli.add_command(proposals)
cli.add_command(timeline)
cli.add_command(team)
for _command in MEMORY_COMMANDS + FORGET_COMMANDS:
    cli.add_command(_command)
for _command in RUNTIME_COMMANDS:
    cli.add_command(_command)
for _command in BRIEF_COMMANDS + CHAT_COMMANDS + PEOPLE_COMMANDS:
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; never let a traceback reach the person at the terminal."""
    try:
        cli.main(args=argv, prog_name="mama", standalone_mode=False)
    except MamaError as exc:
        log.info("command failed: %s: %s", exc.code, exc.message)
        click.echo(terminal_text(f"mama: {exc.code}: {exc.message}"), err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("mama: aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:
        where = setup_file_logging(resolve_paths().log)
        log.exception("internal error")
        hint = f"details in {where}" if where else "run again with a writable data folder"
        click.echo(f"mama: internal_error: something went wrong inside MAMA ({hint}).", err=True)
        sys.exit(INTERNAL_ERROR_EXIT)
