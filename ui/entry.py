"""The ``mama`` console script: the desktop app with no arguments (or ``mama open
chat|review``: that window of the app, started if needed), the CLI otherwise.

This module imports no Qt at module level, so ``mama doctor``, ``mama search``
and every other headless command start as fast as before and run where Qt
cannot (servers, CI, a terminal over SSH). Qt is imported only when the
desktop app is actually started.
"""

from __future__ import annotations

import sys

from ui.settings.data_location import apply_chosen_home


def main(argv: list[str] | None = None) -> None:
    """Run ``mama``: ``argv`` defaults to the process arguments (without the program)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # A data folder the owner chose in Settings holds for the CLI too, unless
    # MAMA_HOME or --home says otherwise.
    apply_chosen_home()
    show: str | None = None
    if args[:1] == ["open"]:
        show = _open_target(args[1:])
        args = []
    if not args:
        from ui.system_libraries import MISSING_LIBRARY_EXIT, startup_problem

        # Before Qt is imported: a missing X11 or OpenGL library is one line, not
        # Qt's "could not load the Qt platform plugin" abort.
        problem = startup_problem()
        if problem:
            print(problem, file=sys.stderr)
            sys.exit(MISSING_LIBRARY_EXIT)
        from ui.application import run

        sys.exit(run(show=show))
    from app.cli import main as cli_main

    cli_main(args)


OPEN_TARGETS = ("chat", "review")
BAD_USAGE_EXIT = 2


def _open_target(rest: list[str]) -> str:
    """``mama open [chat|review]``: which window the app shows (started if needed)."""
    target = rest[0] if rest else "review"
    if len(rest) > 1 or target not in OPEN_TARGETS:
        print(
            f"mama: invalid_input: mama open takes one of {', '.join(OPEN_TARGETS)} "
            "(e.g. mama open chat).",
            file=sys.stderr,
        )
        sys.exit(BAD_USAGE_EXIT)
    return target


if __name__ == "__main__":
    main()
