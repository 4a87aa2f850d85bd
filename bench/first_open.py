"""A new store under stress, at scale (by hand, not in the test suite):

    python -m bench.first_open [--kills 200] [--rounds 20]

``--kills`` children are killed (SIGKILL) at random points of their first
``Store.open`` of a new folder, each then opened as a later command would;
``--rounds`` times three ``mama remember`` start together on a new folder and must all
succeed, the store then holding the three. Prints the failures (the goal is 0).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.first_open import kill_trials, race_first_commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    cache = Path.home() / ".cache" / "mama-test-models"
    with tempfile.TemporaryDirectory(prefix="mama-first-open-") as work:
        root = Path(work)
        started = time.monotonic()
        tally = kill_trials(root / "kills", args.kills)
        print(
            f"kills: {args.kills} runs, {tally.killed} killed inside the open, "
            f"{tally.finished} finished first, {len(tally.failures)} failures "
            f"({time.monotonic() - started:.0f} s)"
        )
        for failure in tally.failures:
            print("  ", failure)
        failed_processes = failed_rounds = 0
        started = time.monotonic()
        for round_ in range(args.rounds):
            results, summaries = race_first_commands(root / f"race-{round_}", cache)
            bad = [r for r in results if r.returncode != 0]
            failed_processes += len(bad)
            if bad or len(summaries) != len(results):
                failed_rounds += 1
                print(f"   round {round_}: {[r.stderr.strip() for r in bad]} held {summaries}")
        print(
            f"races: {args.rounds} rounds of 3, {failed_processes} processes failed, "
            f"{failed_rounds} rounds failed ({time.monotonic() - started:.0f} s)"
        )
    print(f"(repo {REPO_ROOT})")


if __name__ == "__main__":
    main()
