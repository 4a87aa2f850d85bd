"""Slack: the channels the owner picks, read through the official ``slack-sdk`` async client.

What one poll reads: first step 1 for every channel, in the order the owner listed
them, then step 2 (so new messages are never held back behind old threads):

1. **New messages**: ``conversations.history`` from the channel's last ``ts`` in the
   cursor (``oldest``, ``inclusive=false``), paged with ``response_metadata.next_cursor``
   while ``has_more``, oldest first. The first poll of a channel reads the last
   ``thread_lookback_days`` days.
2. **Threads that got new replies**: a thread is read with ``conversations.replies``
   from the last reply already read, when its parent's ``latest_reply`` is newer.
   Parents are learnt from step 1 and by reading the *look-back window* again: the
   messages of the last ``thread_lookback_days`` days (default 7) before the
   channel's last ``ts``, once per poll that has read every channel's new messages
   and found no thread left waiting (so a run of ``more`` polls reads it once). A
   thread whose parent is older than the window is no longer followed: its later
   replies are not read (replies already known to be waiting when the parent left
   the window are still read).

Skipped, because they are not something a person said: messages with a ``bot_id``
or subtype ``bot_message``, and every subtype except plain messages,
``thread_broadcast``, ``file_share`` and ``me_message`` — so ``channel_join`` /
``channel_leave``, topic, purpose and name changes, pins, archive notices and
hidden messages are not items. A bot's parent message is skipped, but the people's
replies in its thread are read.

Names: ``users.info`` once per user per connector (display name, then real name,
then the handle, then the id), used for authors and ``<@U…>`` mentions (at most
``MAX_MENTION_LOOKUPS`` new lookups per message; the other mentions stay ids).

Rate limits: a 429 whose ``Retry-After`` is at most ``rate_limit_wait`` seconds is
waited out in place through the sdk's retry handlers (three times at most); a longer
one ends the poll with ``ConnectorError(RATE_LIMITED, retry_after=…)`` for the
runtime's scheduler. Every other failure is a ``ConnectorError`` with one line.

Edits and deletions: an observation is what was said when it was read, and is
never changed. When a ``message_changed`` or ``message_deleted`` event turns up in
what a poll reads (``conversations.history`` / ``replies``) for a person's message
written within the look-back window, it becomes a NEW item: an edit carries the new
text and ``metadata.revises`` (the edited message's ``<channel id>/<ts>``, its
external id); a deletion (or a thread parent turned into a ``tombstone``) says
"(deleted in Slack)" with ``metadata.deletes``. The
item read before stays as it was: only the owner purges. Edits that leave the text
as it was (a link preview added) and changes to bots' messages are skipped, as are
changes to messages older than the window.

The cursor (``slack_cursor``) keeps the last ``ts`` per channel and, per followed
thread, the last reply read. A poll stopped by ``limit`` returns ``more=True`` with
a cursor that resumes right after the last item it returned, in every channel and
thread; items of one batch come oldest first.

Scopes a Slack app needs: ``channels:read`` and ``channels:history`` (public
channels), ``groups:read`` and ``groups:history`` (private ones the app is in),
``users:read`` (names).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from app.connectors.base import (
    DELETES,
    REVISES,
    Batch,
    BrokenParts,
    ConnectorError,
    Item,
    Problem,
    listed,
)
from app.connectors.slack_cursor import SlackCursor, is_ts, max_ts, ts_key, ts_of_seconds, ts_time
from app.connectors.slack_errors import SlackRefused, WaitOutShortRateLimits, translate
from app.connectors.slack_text import mentioned_users, render
from mama_core.json_types import JsonObject

DEFAULT_BASE_URL = "https://slack.com/api/"
REQUEST_TIMEOUT = 30
"""Seconds one Web API request may take before the poll fails as unavailable."""
MAX_MENTION_LOOKUPS = 20
"""Mentioned users one message may look up (more stay ids); authors always are."""
MAX_NAME = 200
"""Characters of a person's name kept."""
KEPT_SUBTYPES = frozenset({"", "thread_broadcast", "file_share", "me_message"})
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")

OPTIONS_HELP: dict[str, str] = {
    "channels": 'the channels to read: names like "#general" or ids like "C0123ABCD"',
    "base_url": f"the Web API address (default {DEFAULT_BASE_URL}; for a self-hosted proxy)",
    "thread_lookback_days": "how many days back new thread replies are looked for, and how"
    " far the first poll reads (default 7)",
    "poll_limit": "the most messages one poll returns (default 1000; the runtime may ask fewer)",
    "page_size": "messages asked for per Web API request (1-999, default 200)",
    "rate_limit_wait": "seconds of Slack's Retry-After waited in place; longer waits end the"
    " poll and the runtime retries later (default 10)",
}


class SlackOptions(BaseModel):
    """A Slack connector's settings (the JSON the owner's settings keep)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    channels: tuple[str, ...] = Field(min_length=1, max_length=500)
    base_url: str = DEFAULT_BASE_URL
    thread_lookback_days: float = Field(default=7, ge=0, le=365)
    poll_limit: int = Field(default=1000, ge=1, le=100_000)
    page_size: int = Field(default=200, ge=1, le=999)
    rate_limit_wait: float = Field(default=10, ge=0, le=600)

    _channels_listed = field_validator("channels", mode="before")(listed)

    @field_validator("channels")
    @classmethod
    def _channels_named(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(v.strip() for v in value)
        if any(not v.lstrip("#") for v in cleaned):
            raise ValueError("a channel name is empty")
        return cleaned

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("must be an http(s) address like https://slack.com/api/")
        return value if value.endswith("/") else value + "/"


def build(
    name: str, options: Mapping[str, Any], secret: Callable[[str], str | None]
) -> SlackConnector:
    """A Slack connector from its settings; ``secret("token")`` is the bot or user token."""
    try:
        parsed = SlackOptions.model_validate(dict(options))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "options"
        raise ConnectorError(
            Problem.CONFIG, f"Slack connector {name!r}: bad {where}: {first['msg']}"
        ) from None
    token = secret("token")
    if not token:
        raise ConnectorError(
            Problem.CONFIG,
            f"Slack connector {name!r} has no token in the keyring: "
            "store the Slack app's bot (xoxb-) or user (xoxp-) token for it",
        )
    return SlackConnector(name, parsed, token)


@dataclass(frozen=True)
class _Team:
    id: str
    name: str
    url: str
    user: str
    user_id: str


@dataclass(frozen=True)
class _Channel:
    id: str
    name: str

    @property
    def label(self) -> str:
        return f"#{self.name}" if self.name != self.id else self.id


@dataclass
class _Run:
    """One poll's budget and what it has taken so far."""

    budget: int
    window_start: str = "0.000000"
    """Changes to messages older than this are not followed."""
    items: list[Item] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    stopped: bool = False
    """True when an item was left for the next poll because the budget ran out."""


PageFn = Callable[[str | None], Awaitable[JsonObject]]


class SlackConnector:
    """Reads the picked channels of one Slack workspace (see the module docstring)."""

    kind: ClassVar[str] = "slack"

    def __init__(
        self,
        name: str,
        options: SlackOptions,
        token: str,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.options = options
        self._token = token
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._client: AsyncWebClient | None = None
        self._team: _Team | None = None
        self._channels: list[_Channel] | None = None
        self._missing: list[str] = []
        """Picked channels the last ``_resolve`` could not find."""
        self._channel_names: dict[str, str] = {}
        self._users: dict[str, str] = {}

    # --- the Connector protocol -------------------------------------------

    async def poll(self, cursor: str | None, limit: int) -> Batch:
        """Read up to ``limit`` new messages and thread replies after ``cursor``.

        A channel that is gone or closed to the token (``channel_not_found``,
        ``not_in_channel``…) is skipped and named in ``Batch.problems``; the others are
        read as usual. Only when no channel can be read does the poll fail."""
        state = SlackCursor.parse(cursor)
        team = await self._team_info()
        broken = BrokenParts()
        channels = await self._resolve(broken)
        window_start = ts_of_seconds(self._clock() - self.options.thread_lookback_days * 86400)
        run = _Run(budget=max(1, min(limit, self.options.poll_limit)), window_start=window_start)
        read_before = dict(state.channels)
        continuing = any(state.waiting(c.id) for c in channels)

        async def each(channel: _Channel, step: Callable[[], Awaitable[None]]) -> None:
            if channel.label in broken:
                return
            try:
                await step()
            except ConnectorError as error:
                if not broken.skip(channel.label, error):
                    raise

        for channel in channels:
            await each(
                channel,
                lambda c=channel: self._new_messages(team, c, state, run, window_start),
            )
            if run.stopped:
                break
        if not run.stopped and not continuing:
            for channel in channels:
                last = read_before.get(channel.id)
                await each(
                    channel,
                    lambda c=channel, last=last: self._scan_window(c, state, last, window_start),
                )
        for channel in channels:
            if run.stopped:
                break
            await each(channel, lambda c=channel: self._poll_threads(team, c, state, run))
        problems = broken.settle(len(channels) + len(self._missing))
        state.prune(window_start, {c.id for c in channels})
        items = sorted(run.items, key=lambda i: (i.at, i.external_id))
        return Batch(tuple(items), state.dump(), more=run.stopped, problems=problems)

    async def check(self) -> str:
        """Test the token, every picked channel (reading one message of each) and names."""
        team = await self._team_info()
        channels = await self._resolve()
        if team.user_id:
            self._users.pop(team.user_id, None)
            await self._user_name(team.user_id)  # proves users:read
        api = self._api()
        for channel in channels:
            await self._guard(
                api.conversations_history(channel=channel.id, limit=1),
                "conversations.history",
                channel.label,
            )
        labels = ", ".join(c.label for c in channels)
        return f"Slack {team.name} ({team.id}) as {team.user}: can read {labels}"

    async def choices(self) -> list[str]:
        """``#name`` of every channel the token can list (for the owner to pick)."""
        names = await self._all_channels()
        return sorted({f"#{name.lstrip('#')}" for name in names.values()}, key=str.casefold)

    async def aclose(self) -> None:
        """Close the HTTP session (the connector opens a new one if polled again)."""
        session, self._session, self._client = self._session, None, None
        if session is not None:
            await session.close()

    # --- one channel, one thread ------------------------------------------

    async def _new_messages(
        self, team: _Team, channel: _Channel, state: SlackCursor, run: _Run, window_start: str
    ) -> None:
        """Step 1: the channel's messages after its last ts (the window on a first poll)."""
        # A first read starts where the window starts *now*: remember that, or a window
        # shorter than the time between polls would move past unread messages.
        start = state.channels.setdefault(channel.id, window_start)
        messages, complete = await self._read(
            self._history(channel, oldest=start), start, run.budget + 1
        )
        for message in messages:
            if not _skipped(message) and not await self._take(run, team, channel, message):
                return
            state.channels[channel.id] = message["ts"]
            state.note_thread(channel.id, message)
        if not complete:  # read stopped early: the rest waits for the next poll
            run.stopped = True

    async def _scan_window(
        self, channel: _Channel, state: SlackCursor, last: str | None, window_start: str
    ) -> None:
        """Step 2: learn which parents of the look-back window have new replies.

        Done once a poll has read every channel's new messages and no thread was left
        waiting by the poll before, so a run of ``more`` polls scans the window once.
        """
        if last is None or ts_key(last) <= ts_key(window_start):
            return  # a first poll read the window as new messages; or it is all older
        window, _ = await self._read(
            self._history(channel, oldest=window_start, latest=last), window_start, None
        )
        for message in window:
            state.note_thread(channel.id, message)

    async def _poll_threads(
        self, team: _Team, channel: _Channel, state: SlackCursor, run: _Run
    ) -> None:
        for parent in state.waiting(channel.id):
            await self._poll_thread(team, channel, parent, state, run)
            if run.stopped:
                return

    async def _poll_thread(
        self, team: _Team, channel: _Channel, parent: str, state: SlackCursor, run: _Run
    ) -> None:
        key = f"{channel.id}/{parent}"
        read, latest = state.threads[key]
        try:
            replies, complete = await self._read(
                self._replies(channel, parent, oldest=read), read, run.budget + 1
            )
        except SlackRefused as refused:
            if refused.code != "thread_not_found":
                raise
            del state.threads[key]  # the parent was deleted: nothing more to read
            return
        for message in replies:
            if message["ts"] == parent:
                continue
            if not _skipped(message) and not await self._take(run, team, channel, message):
                complete = False
                break
            read = message["ts"]
        if complete:
            read = max_ts(read, latest)
        else:
            run.stopped = True
        state.threads[key] = [read, max_ts(latest, read)]

    async def _take(
        self, run: _Run, team: _Team, channel: _Channel, message: Mapping[str, Any]
    ) -> bool:
        """Add ``message`` as an item; False (and ``run.stopped``) when the budget is spent."""
        external_id = f"{channel.id}/{message['ts']}"
        if external_id in run.seen:  # a thread_broadcast met again among its thread's replies
            return True
        changed = _changed_ts(message)
        if changed is not None and ts_key(changed) < ts_key(run.window_start):
            return True  # a change to a message older than the window: not followed
        if run.budget <= 0:
            run.stopped = True
            return False
        if changed is not None:
            run.items.append(await self._change(team, channel, message))
        else:
            run.items.append(await self._item(team, channel, message))
        run.seen.add(external_id)
        run.budget -= 1
        return True

    async def _item(self, team: _Team, channel: _Channel, message: Mapping[str, Any]) -> Item:
        ts = str(message["ts"])
        user_id = str(message.get("user") or "")
        raw = str(message.get("text") or "")
        # A message naming hundreds of people must not cost hundreds of lookups.
        for wanted in [user_id, *mentioned_users(raw)[:MAX_MENTION_LOOKUPS]]:
            if wanted:
                await self._user_name(wanted)
        author = self._users.get(user_id) or str(message.get("username") or user_id or "unknown")
        text = render(raw, lambda u: self._users.get(u, u), self._channel_names)
        thread_ts = message.get("thread_ts")
        permalink = f"{team.url}archives/{channel.id}/p{ts.replace('.', '')}"
        metadata: JsonObject = {"channel_id": channel.id, "ts": ts, "user_id": user_id}
        if thread_ts:
            metadata["thread_ts"] = thread_ts
            if thread_ts != ts:
                permalink += f"?thread_ts={thread_ts}&cid={channel.id}"
        if message.get("reply_count"):
            metadata["reply_count"] = message["reply_count"]
        if message.get("subtype"):
            metadata["subtype"] = message["subtype"]
        if message.get("edited"):
            metadata["edited"] = True
        files = [
            {"name": str(f.get("name") or f.get("title") or "?"), "size": f.get("size")}
            for f in message.get("files") or []
            if isinstance(f, Mapping)
        ]
        if files:
            metadata["files"] = files
        metadata["permalink"] = permalink
        return Item(
            source=f"slack:{team.id}",
            external_id=f"{channel.id}/{ts}",
            channel=channel.label,
            scope=f"channel:slack/{channel.label}",
            author=author,
            at=ts_time(ts),
            text=text,
            metadata=metadata,
        )

    async def _change(self, team: _Team, channel: _Channel, event: Mapping[str, Any]) -> Item:
        """A new item for an edit or deletion event (see the module docstring)."""
        event_ts = str(event["ts"])
        if event.get("subtype") == "message_changed" and not _tombstone(event):
            new: Mapping[str, Any] = event["message"]
            original = f"{channel.id}/{new['ts']}"
            edited_ts = str((new.get("edited") or {}).get("ts") or event_ts)
            item = await self._item(team, channel, new)
            metadata = {**item.metadata, "subtype": "message_changed", REVISES: original}
            metadata["edited_ts"] = edited_ts
            return replace(
                item,
                external_id=f"{original}/edit/{edited_ts}",
                at=ts_time(edited_ts if is_ts(edited_ts) else event_ts),
                metadata=metadata,
            )
        original = f"{channel.id}/{_changed_ts(event)}"
        previous: Mapping[str, Any] = event.get("previous_message") or {}
        user_id = str(previous.get("user") or "")
        if user_id:
            await self._user_name(user_id)
        return Item(
            source=f"slack:{team.id}",
            external_id=f"{original}/deleted",
            channel=channel.label,
            scope=f"channel:slack/{channel.label}",
            author=self._users.get(user_id) or user_id or "unknown",
            at=ts_time(event_ts),
            text="(deleted in Slack)",
            metadata={
                "channel_id": channel.id,
                "ts": event_ts,
                "user_id": user_id,
                "subtype": "message_deleted",
                DELETES: original,
            },
        )

    # --- reading pages ----------------------------------------------------

    def _history(self, channel: _Channel, oldest: str, latest: str | None = None) -> PageFn:
        async def page(cursor: str | None) -> JsonObject:
            return await self._guard(
                self._api().conversations_history(
                    channel=channel.id,
                    oldest=oldest,
                    latest=latest,
                    inclusive=latest is not None,
                    limit=self.options.page_size,
                    cursor=cursor,
                ),
                "conversations.history",
                channel.label,
            )

        return page

    def _replies(self, channel: _Channel, parent: str, oldest: str) -> PageFn:
        async def page(cursor: str | None) -> JsonObject:
            return await self._guard(
                self._api().conversations_replies(
                    channel=channel.id,
                    ts=parent,
                    oldest=oldest,
                    inclusive=False,
                    limit=self.options.page_size,
                    cursor=cursor,
                ),
                "conversations.replies",
                channel.label,
            )

        return page

    async def _read(
        self, page: PageFn, after: str, need: int | None
    ) -> tuple[list[JsonObject], bool]:
        """The messages newer than ``after``, oldest first, and whether that is all of them.

        Stops early once ``need`` messages that would be items are held, but only after
        two pages have shown that each page is newer than the ones before (Slack pages
        forward from ``oldest``); if pages ever come newest-first, it reads to the end
        instead, so stopping early can never leave an older message behind.
        """
        held: dict[str, JsonObject] = {}
        newest: tuple[int, int] | None = None
        pages = 0  # pages that held messages: the direction shows from the second on
        forward = True
        counted = 0
        cursor: str | None = None
        floor = ts_key(after)
        while True:
            data = await page(cursor)
            fresh = [
                m
                for m in data.get("messages") or []
                if isinstance(m, dict) and is_ts(m.get("ts")) and ts_key(m["ts"]) > floor
            ]
            if fresh:
                keys = [ts_key(m["ts"]) for m in fresh]
                if newest is not None and min(keys) < newest:
                    forward = False
                newest = max(keys) if newest is None else max(newest, *keys)
                pages += 1
            for message in fresh:
                if message["ts"] not in held:
                    held[message["ts"]] = message
                    counted += not _skipped(message)
            following = str((data.get("response_metadata") or {}).get("next_cursor") or "")
            if not following or following == cursor:
                return _ordered(held), True
            if need is not None and forward and pages >= 2 and counted >= need:
                return _ordered(held), False
            cursor = following

    # --- the workspace: team, channels, users -----------------------------

    async def _team_info(self) -> _Team:
        if self._team is None:
            data = await self._guard(self._api().auth_test(), "auth.test")
            url = str(data.get("url") or "https://slack.com/")
            self._team = _Team(
                id=str(data.get("team_id") or "unknown"),
                name=str(data.get("team") or "workspace"),
                url=url if url.endswith("/") else url + "/",
                user=str(data.get("user") or data.get("user_id") or "?"),
                user_id=str(data.get("user_id") or ""),
            )
        return self._team

    async def _resolve(self, broken: BrokenParts | None = None) -> list[_Channel]:
        """The picked channels as (id, name), via one paged ``conversations.list``.

        With ``broken``, a picked channel that cannot be found is noted there and the
        others are returned (and the list is read again next time, in case it is back);
        without, it fails the call (``check``)."""
        if self._channels is not None and not self._missing:
            return self._channels
        missing: list[str] = []
        names = await self._all_channels()
        by_name = {name: channel_id for channel_id, name in names.items()}
        picks: list[_Channel] = []
        for wanted in self.options.channels:
            try:
                pick = await self._pick(wanted, names, by_name)
            except ConnectorError as error:
                part = wanted if _CHANNEL_ID.match(wanted) else "#" + wanted.lstrip("#").lower()
                if broken is None or not broken.skip(part, error):
                    raise
                missing.append(wanted)
                continue
            if pick not in picks:
                picks.append(pick)
        self._channel_names = names
        self._channels = picks
        self._missing = missing
        return picks

    async def _pick(self, wanted: str, names: dict[str, str], by_name: dict[str, str]) -> _Channel:
        """One picked channel (an id or a name) as it is in the workspace now."""
        if _CHANNEL_ID.match(wanted):
            if wanted not in names:
                data = await self._guard(
                    self._api().conversations_info(channel=wanted),
                    "conversations.info",
                    wanted,
                )
                names[wanted] = str((data.get("channel") or {}).get("name") or wanted)
            return _Channel(wanted, names[wanted])
        name = wanted.lstrip("#").lower()
        if name not in by_name:
            raise ConnectorError(
                Problem.NOT_FOUND,
                f"Slack channel #{name} not found: it may be renamed, archived, or "
                "private without the app in it",
            )
        return _Channel(by_name[name], name)

    async def _all_channels(self) -> dict[str, str]:
        names: dict[str, str] = {}
        types = "public_channel,private_channel"
        cursor: str | None = None
        while True:
            try:
                data = await self._guard(
                    self._api().conversations_list(
                        types=types, exclude_archived=True, limit=200, cursor=cursor
                    ),
                    "conversations.list",
                )
            except SlackRefused as refused:
                # Without groups:read a token may still list the public channels.
                if refused.code != "missing_scope" or types == "public_channel" or names:
                    raise
                types = "public_channel"
                continue
            for channel in data.get("channels") or []:
                if isinstance(channel, dict) and channel.get("id"):
                    names[str(channel["id"])] = str(channel.get("name") or channel["id"])
            following = str((data.get("response_metadata") or {}).get("next_cursor") or "")
            if not following or following == cursor:
                return names
            cursor = following

    async def _user_name(self, user_id: str) -> str:
        """A user's name for people: display name, real name, handle, else the id (cached)."""
        if user_id in self._users:
            return self._users[user_id]
        try:
            data = await self._guard(self._api().users_info(user=user_id), "users.info")
        except SlackRefused as refused:
            if refused.code not in ("user_not_found", "user_not_visible"):
                raise
            data = {}
        user = data.get("user") or {}
        profile = user.get("profile") or {}
        name = (
            profile.get("display_name")
            or profile.get("real_name")
            or user.get("real_name")
            or user.get("name")
            or user_id
        )
        self._users[user_id] = " ".join(str(name).split())[:MAX_NAME] or user_id
        return self._users[user_id]

    # --- the client and its errors ----------------------------------------

    def _api(self) -> AsyncWebClient:
        if self._client is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
            )
            self._client = AsyncWebClient(
                token=self._token,
                base_url=self.options.base_url,
                session=self._session,
                timeout=REQUEST_TIMEOUT,
                retry_handlers=[
                    AsyncConnectionErrorRetryHandler(),
                    WaitOutShortRateLimits(self.options.rate_limit_wait),
                ],
            )
        return self._client

    async def _guard(
        self, call: Awaitable[AsyncSlackResponse], method: str, channel: str | None = None
    ) -> JsonObject:
        """Await one Web API call; every failure becomes a ConnectorError with one line."""
        try:
            response = await call
        except SlackApiError as error:
            raise translate(error, method, channel) from error
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            host = urlsplit(self.options.base_url).netloc
            raise ConnectorError(
                Problem.UNAVAILABLE, f"cannot reach Slack at {host}: {_one_line(error)}"
            ) from error
        except SlackClientError as error:
            raise ConnectorError(
                Problem.UNAVAILABLE, f"Slack {method} failed: {_one_line(error)}"
            ) from error
        data = response.data
        if not isinstance(data, dict):
            raise ConnectorError(Problem.UNAVAILABLE, f"Slack answered {method} without JSON")
        return data


def _skipped(message: Mapping[str, Any]) -> bool:
    """Whether a message is not something a person said (see the module docstring); an
    edit or deletion of what a person said is followed (``_changed_ts``)."""
    if _changed_ts(message) is not None:
        return False
    if message.get("type", "message") != "message" or message.get("hidden"):
        return True
    if message.get("bot_id") or message.get("subtype") == "bot_message":
        return True
    return str(message.get("subtype") or "") not in KEPT_SUBTYPES


def _changed_ts(event: Mapping[str, Any]) -> str | None:
    """The ts of the message an edit or deletion ``event`` changes, if it is followed:
    a person's message whose text really changed (or that was deleted)."""
    subtype = event.get("subtype")
    if subtype == "message_changed":
        new, old = event.get("message"), event.get("previous_message") or {}
        if not isinstance(new, Mapping) or not is_ts(new.get("ts")):
            return None
        if _by_bot(new) or (isinstance(old, Mapping) and old.get("text") == new.get("text")):
            return None
        return str(new["ts"])
    if subtype == "message_deleted":
        old = event.get("previous_message") or {}
        deleted = event.get("deleted_ts")
        if not is_ts(deleted) or (isinstance(old, Mapping) and _by_bot(old)):
            return None
        return str(deleted)
    return None


def _tombstone(event: Mapping[str, Any]) -> bool:
    """A deleted thread parent: Slack keeps it as a ``tombstone`` through an edit event."""
    new = event.get("message")
    return isinstance(new, Mapping) and new.get("subtype") == "tombstone"


def _by_bot(message: Mapping[str, Any]) -> bool:
    return bool(message.get("bot_id")) or message.get("subtype") == "bot_message"


def _ordered(held: Mapping[str, JsonObject]) -> list[JsonObject]:
    return [held[ts] for ts in sorted(held, key=ts_key)]


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:200]
