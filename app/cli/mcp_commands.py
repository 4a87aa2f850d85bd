"""``mama mcp`` (the development-memory MCP server on stdio) and ``mama hook NAME``
(the Claude Code plugin's hooks).

Both import their machinery lazily, so that a hook pays only for what it uses.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from app.local.paths import Paths, resolve_paths

if TYPE_CHECKING:
    from mama_core.memory import Engine

log = logging.getLogger("mama.mcp")

BUDGET_ENV = "MAMA_HOOK_BUDGET_MS"

db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The development-memory store (default: dev-memory.db in the data folder).",
)
project_option = click.option(
    "--project",
    default=None,
    help="Project name to bind to (default: the folder name of the git root of the cwd).",
)
global_option = click.option(
    "--allow-global", is_flag=True, help="Also read and write the global scope."
)


def _paths() -> Paths:
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    paths = getattr(obj, "paths", None)
    return paths if isinstance(paths, Paths) else resolve_paths()


@click.command("mcp")
@db_option
@project_option
@global_option
def mcp(db: Path | None, project: str | None, allow_global: bool) -> None:
    """Serve the development memory to a coding agent over MCP (stdio)."""
    from app.local.logs import setup_file_logging
    from app.mcp.dev_memory import dev_memory_path, open_engine
    from app.mcp.project_scope import claims_folder, resolve_binding
    from app.mcp.server import run_stdio
    from app.team.reach import TeamReach

    paths = _paths()
    setup_file_logging(paths.home / "logs" / "mcp.log")
    binding = resolve_binding(Path.cwd(), project, allow_global, claims=claims_folder(paths.home))
    db_path = dev_memory_path(paths, db)
    log.info("mama mcp: store %s, bound to %s", db_path, binding.explain())
    with contextlib.ExitStack() as stack:

        def opener() -> Engine:
            # Stdout is the protocol: nothing said while opening (a first model build)
            # may reach it. The server already answers while this runs in a thread.
            with contextlib.redirect_stdout(sys.stderr):
                engine = stack.enter_context(open_engine(db_path, paths))
            # A long-lived server: memories lacking a vector of this model (the
            # default changed in an update) are embedded in the background.
            engine.catch_up_vectors()
            return engine

        run_stdio(opener, binding, TeamReach.for_home(paths.home))


@click.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("name", required=False, default="")
@click.argument("unknown", nargs=-1, type=click.UNPROCESSED)
@db_option
@project_option
@global_option
def hook(
    name: str, unknown: tuple[str, ...], db: Path | None, project: str | None, allow_global: bool
) -> None:
    """Run a Claude Code hook (session-start, pre-tool-use, pre-compact) on stdin's JSON.

    Prints what Claude Code should add, or nothing; always exits 0 (an exit status
    of 2 would block Claude Code, so even options this version does not know are
    ignored).
    """
    try:
        from app.local.logs import setup_file_logging
        from app.mcp.hooks import HookSettings, run_hook

        paths = _paths()
        setup_file_logging(paths.home / "logs" / "hooks.log")
        raw = sys.stdin.read()
        settings = HookSettings(
            paths=paths,
            db=db,
            project=project,
            allow_global=allow_global,
            pre_tool_use_budget_s=_budget_s(),
        )
        out = run_hook(name, raw, settings)
    except Exception:
        log.exception("hook %s failed before it could run", name)
        return
    if out:
        click.echo(out)


def _budget_s() -> float:
    """The PreToolUse budget: ``MAMA_HOOK_BUDGET_MS`` (for slow machines), else 150 ms."""
    from app.mcp.hooks import PRE_TOOL_USE_BUDGET_S

    raw = os.environ.get(BUDGET_ENV, "")
    try:
        return max(float(raw), 0.0) / 1000 if raw else PRE_TOOL_USE_BUDGET_S
    except ValueError:
        return PRE_TOOL_USE_BUDGET_S


COMMANDS = (mcp, hook)
