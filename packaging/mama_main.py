"""The bundle's entry point: what the ``mama`` console script runs in a checkout."""

from __future__ import annotations

from ui.entry import main

if __name__ == "__main__":
    main()
