"""The ``mama`` console script: the desktop app with no arguments, the CLI otherwise.

This module imports no Qt at module level, so ``mama doctor``, ``mama search``
and every other headless command start as fast as before and run where Qt
cannot (servers, CI, a terminal over SSH). Qt is imported only when the
desktop app is actually started.
"""

from __future__ import annotations

import sys

from ui.data_location import apply_chosen_home


def main(argv: list[str] | None = None) -> None:
    """Run ``mama``: ``argv`` defaults to the process arguments (without the program)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # A data folder the owner chose in Settings holds for the CLI too, unless
    # MAMA_HOME or --home says otherwise.
    apply_chosen_home()
    if not args:
        from ui.system_libraries import MISSING_LIBRARY_EXIT, startup_problem

        # Before Qt is imported: a missing X11 or OpenGL library is one line, not
        # Qt's "could not load the Qt platform plugin" abort.
        problem = startup_problem()
        if problem:
            print(problem, file=sys.stderr)
            sys.exit(MISSING_LIBRARY_EXIT)
        from ui.application import run

        sys.exit(run())
    from app.cli import main as cli_main

    cli_main(args)


if __name__ == "__main__":
    main()
