"""Where a Slack connector has read up to: per channel and per followed thread.

The cursor is JSON text the runtime stores with the items it covers::

    {"v": 1,
     "channels": {"<channel id>": "<ts of the last message read>"},
     "threads": {"<channel id>/<parent ts>": ["<last reply ts read>", "<latest reply known>"]}}

A thread whose latest known reply is newer than the last one read is *waiting*: the
next poll reads it. Entries go when read up and their parent has left the look-back
window; at most ``MAX_THREADS`` are kept (the newest parents win). Slack's ``ts``
values ("1700000000.000100") are compared as numbers, never as strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from app.connectors.base import ConnectorError, Problem

MAX_THREADS = 5000
"""Thread entries kept in the cursor (the newest parents win)."""

_TS = re.compile(r"^\d+(\.\d+)?$")
_UNREADABLE = "the stored Slack cursor is unreadable: reset this connector"


@dataclass
class SlackCursor:
    """The parsed cursor; a poll changes its copy as it reads and dumps it at the end."""

    channels: dict[str, str] = field(default_factory=dict)
    threads: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> SlackCursor:
        """The cursor in ``text`` (None: a first poll); CONFIG if it is not one of ours."""
        if not text:
            return cls()
        try:
            data = json.loads(text)
            channels = {str(k): str(v) for k, v in dict(data.get("channels", {})).items()}
            threads = {
                str(k): [str(v[0]), str(v[1])] for k, v in dict(data.get("threads", {})).items()
            }
        except (ValueError, TypeError, AttributeError, IndexError, KeyError):
            raise ConnectorError(Problem.CONFIG, _UNREADABLE) from None
        stamps = [*channels.values(), *(k.partition("/")[2] for k in threads)]
        stamps += [ts for pair in threads.values() for ts in pair]
        if not all(is_ts(t) for t in stamps):
            raise ConnectorError(Problem.CONFIG, _UNREADABLE)
        return cls(channels, threads)

    def dump(self) -> str:
        return json.dumps(
            {"v": 1, "channels": self.channels, "threads": self.threads},
            sort_keys=True,
            separators=(",", ":"),
        )

    def note_thread(self, channel_id: str, message: Mapping[str, Any]) -> None:
        """Remember a parent's latest reply, so a thread with new replies gets read."""
        ts = str(message.get("ts", ""))
        latest = str(message.get("latest_reply") or "")
        if message.get("thread_ts") != ts or not is_ts(latest):
            return
        key = f"{channel_id}/{ts}"
        read, known = self.threads.get(key, [ts, ts])
        self.threads[key] = [read, max_ts(known, latest)]

    def waiting(self, channel_id: str) -> list[str]:
        """Parent ts of this channel's threads with replies not read yet, oldest first."""
        prefix = f"{channel_id}/"
        parents = [
            key[len(prefix) :]
            for key, (read, latest) in self.threads.items()
            if key.startswith(prefix) and ts_key(latest) > ts_key(read)
        ]
        return sorted(parents, key=ts_key)

    def prune(self, window_start: str, channel_ids: set[str]) -> None:
        """Forget channels no longer picked and threads read up and out of the window."""
        self.channels = {c: t for c, t in self.channels.items() if c in channel_ids}
        kept: dict[str, list[str]] = {}
        for key, (read, latest) in self.threads.items():
            channel_id, _, parent = key.partition("/")
            waiting = ts_key(latest) > ts_key(read)
            if channel_id in channel_ids and (waiting or ts_key(parent) >= ts_key(window_start)):
                kept[key] = [read, latest]
        if len(kept) > MAX_THREADS:
            newest = sorted(kept, key=lambda k: ts_key(k.partition("/")[2]), reverse=True)
            kept = {k: kept[k] for k in newest[:MAX_THREADS]}
        self.threads = kept


def is_ts(value: object) -> bool:
    """Whether ``value`` is a Slack ts ("1700000000.000100")."""
    return isinstance(value, str) and _TS.match(value) is not None


def ts_key(ts: str) -> tuple[int, int]:
    """A ts as (seconds, microseconds), to compare and sort by."""
    seconds, _, fraction = ts.partition(".")
    return int(seconds), int((fraction + "000000")[:6])


def max_ts(a: str, b: str) -> str:
    return a if ts_key(a) >= ts_key(b) else b


def ts_of_seconds(seconds: float) -> str:
    """The ts of a moment (whole seconds), e.g. the start of the look-back window."""
    return f"{max(0, int(seconds))}.000000"


def ts_time(ts: str) -> datetime:
    """When a message was written, timezone-aware UTC, to the microsecond."""
    seconds, micros = ts_key(ts)
    return datetime.fromtimestamp(seconds, UTC) + timedelta(microseconds=micros)
