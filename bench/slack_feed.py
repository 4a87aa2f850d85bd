"""The Slack connector reading a fake workspace of many messages: the Slack half of a
later ``bench.connectors``.

    python -m bench.slack_feed [--messages 10000] [--channels 2] [--limit 1000] [--json OUT]

``fill_workspace`` puts messages (with a thread every ``--thread-every`` messages)
in the fake Slack Web API the tests use (``tests/app/connectors/fake_slack.py``,
served on 127.0.0.1), and the real connector, through the real slack-sdk client,
polls it from no cursor until ``more`` is False. Reported: items per second from
the fake to ``Item`` values (not stored: storing belongs to the runtime), the same
with the fake's own handler time taken out, and the Web API calls made. The fake's
time is measured inside its handlers only; the HTTP stack of both ends shares one
event loop and is counted as the connector's, so the "excluding the fake" figure
is a floor, not exact. Two shared cores make every number noisy: compare runs on
one machine, never against an absolute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.connectors.slack import build
from tests.app.connectors.fake_slack import FakeSlack

USERS = 20


def fill_workspace(
    fake: FakeSlack, messages: int, channels: int, thread_every: int = 50
) -> list[str]:
    """Post ``messages`` spread over the last hour across ``channels``; their names."""
    names = [f"bench-{i}" for i in range(channels)]
    ids = [fake.add_channel(name) for name in names]
    for u in range(USERS):
        fake.add_user(f"U{u:07d}", display_name=f"person {u}")
    step = 3000.0 / max(1, messages)
    replies = 0
    for i in range(messages - messages // (thread_every + 1)):
        channel = ids[i % channels]
        ts = fake.post(
            channel,
            f"U{i % USERS:07d}",
            f"message {i} <@U{(i + 1) % USERS:07d}>",
            ago=3600 - i * step,
        )
        if thread_every and i % thread_every == 0 and replies < messages // (thread_every + 1):
            fake.reply(
                channel,
                ts,
                f"U{(i + 3) % USERS:07d}",
                f"reply to {i}",
                ago=3600 - i * step - step / 2,
            )
            replies += 1
    return names


async def measure(messages: int, channels: int, limit: int, page_size: int) -> dict[str, Any]:
    fake = FakeSlack()
    await fake.start()
    try:
        names = fill_workspace(fake, messages, channels)
        total = sum(len(v) for v in fake.messages.values()) + sum(
            len(v) for v in fake.replies.values()
        )
        connector = build(
            "bench",
            {"channels": [f"#{n}" for n in names], "base_url": fake.url, "page_size": page_size},
            {"token": fake.token}.get,
        )
        read = polls = 0
        cursor: str | None = None
        started = time.perf_counter()
        try:
            while True:
                batch = await connector.poll(cursor, limit)
                read += len(batch.items)
                polls += 1
                cursor = batch.cursor
                if not batch.more:
                    break
        finally:
            await connector.aclose()
        wall = time.perf_counter() - started
    finally:
        await fake.stop()
    own = max(1e-9, wall - fake.server_seconds)
    return {
        "messages_posted": total,
        "items_read": read,
        "polls": polls,
        "api_calls": len(fake.calls),
        "seconds": round(wall, 3),
        "fake_seconds": round(fake.server_seconds, 3),
        "items_per_second": round(read / wall, 1),
        "items_per_second_without_fake": round(read / own, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.slack_feed", description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--channels", type=int, default=2)
    parser.add_argument("--limit", type=int, default=1000, help="items asked per poll")
    parser.add_argument("--page-size", type=int, default=200)
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.messages, args.channels, args.limit, args.page_size))
    for key, value in result.items():
        print(f"{key}: {value}")
    if result["items_read"] != result["messages_posted"]:
        print("items read differ from messages posted", file=sys.stderr)
        return 1
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
