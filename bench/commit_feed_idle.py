"""What following other processes' commits costs while nothing happens.

    python -m bench.commit_feed_idle [--seconds 20] [--every 0.25] [--polls 20000]

A temporary encrypted store with a commit feed that polls ``PRAGMA data_version``
(as every long-running MAMA process does). Measures, in this process:

- one idle poll (data_version unchanged), timed over ``--polls`` direct calls;
- the process's CPU time over ``--seconds`` of idle following at ``--every``,
  beside the same wait without the feed (the baseline).

Ends with ``idle_poll_us=… idle_cpu_percent=…``.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from mama_core.memory.commit_feed import CommitFeed
from mama_core.store import DbKey, Store


def cpu_over(seconds: float) -> float:
    """Process CPU seconds spent while this thread waits ``seconds``."""
    start = time.process_time()
    threading.Event().wait(seconds)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description="Idle cost of following other processes.")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--polls", type=int, default=20000)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        Store.open(Path(folder) / "mama.db", DbKey.generate()) as store,
    ):
        baseline = cpu_over(args.seconds)

        probe = CommitFeed(store.new_connection, poll_seconds=3600.0)
        probe.subscribe(lambda changes: None)
        started = time.perf_counter()
        for _ in range(args.polls):
            probe.poll()
        per_poll = (time.perf_counter() - started) / args.polls
        probe.close()

        feed = CommitFeed(store.new_connection, poll_seconds=args.every)
        feed.subscribe(lambda changes: None)
        following = cpu_over(args.seconds)
        feed.close()

    extra = max(0.0, following - baseline)
    print(f"one idle poll: {per_poll * 1e6:.1f} us ({args.polls} polls)")
    print(
        f"CPU over {args.seconds:.0f} s idle: {following * 1e3:.1f} ms following every "
        f"{args.every} s, {baseline * 1e3:.1f} ms without"
    )
    print(f"idle_poll_us={per_poll * 1e6:.1f} idle_cpu_percent={100 * extra / args.seconds:.4f}")


if __name__ == "__main__":
    main()
