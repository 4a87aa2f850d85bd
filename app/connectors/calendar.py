"""The owner's calendar: any CalDAV server (``caldav``), or a read-only iCalendar address.

CalDAV (Nextcloud, Fastmail, iCloud with an app password, Radicale): options
``url`` and ``username``, secret ``password``; ``calendars`` picks some by
name (default: all). An iCalendar address (Google Calendar's "secret address
in iCal format"): the secret ``ics_url`` — the address *is* the credential, so
it is kept like a password and never shown or logged.

Each poll reads the events of a bounded window (``days_back`` before today to
``days_ahead`` after), expands their recurrences and makes an item per
occurrence that is new or changed since the cursor (``calendar_events``). The
window is read again only when something changed: a calendar whose CalDAV sync
token (RFC 6578) is the one the cursor holds, or an address answering
``304 Not Modified`` to its ETag, is skipped until the day turns (the window
moves) — a server without either is read each poll. When a read finds more than
one batch, the rest is served from memory to the next poll from that cursor
(after a restart the window is read again). Nothing is ever written to
the calendar: no invitation is answered, no event touched.

Source ``calendar:<account or host>``; scope ``channel:calendar/<calendar name>``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

import httpx

from app.connectors.base import (
    Batch,
    BrokenParts,
    ConnectorError,
    PartProblem,
    Problem,
    listed,
)
from app.connectors.calendar_events import (
    CalendarDataError,
    Change,
    Known,
    Occurrence,
    changes,
    occurrences,
    parse_calendar,
)
from mama_core.scopes.names import is_scope_name

OPTIONS_HELP: dict[str, str] = {
    "url": "a CalDAV server's address, e.g. https://cloud.example.com/remote.php/dav "
    "(leave out for an iCalendar address)",
    "username": "the CalDAV user name",
    "calendars": "the CalDAV calendars to read, by name, comma-separated (default: all)",
    "name": "the calendar's name for an iCalendar address (default: the one it gives)",
    "account": "how the source is named (default: the user name, else the server's host)",
    "days_back": "how many days before today are read (default 14)",
    "days_ahead": "how many days after today are read (default 60)",
    "secret:password": "the CalDAV password (an app password for iCloud or Fastmail)",
    "secret:ics_url": "an iCalendar address instead of CalDAV (Google: Settings > "
    "your calendar > Secret address in iCal format)",
}

DAYS_BACK = 14
DAYS_AHEAD = 60
TIMEOUT_S = 120.0
"""Seconds per request: a whole window of a busy calendar is one large REPORT."""
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build(name: str, options: Mapping[str, Any], secret: Callable[[str], str | None]) -> Calendar:
    """A calendar connector from the owner's options; ConnectorError(CONFIG) if incomplete."""
    days_back, days_ahead = (
        _days(options, "days_back", DAYS_BACK),
        _days(options, "days_ahead", DAYS_AHEAD),
    )
    url = str(options.get("url") or "").strip()
    picks = [str(c) for c in listed(options.get("calendars")) or []]
    if url:
        if urlsplit(url).scheme not in ("http", "https"):
            raise ConnectorError(Problem.CONFIG, "url must be an http(s) CalDAV address.")
        username = str(options.get("username") or "").strip()
        password = secret("password")
        if not username or not password:
            raise ConnectorError(
                Problem.CONFIG,
                f"CalDAV needs username= and a password: mama connectors add calendar {name} "
                "asks for it (or set MAMA_CONNECTOR_<NAME>_PASSWORD).",
            )
        source = str(options.get("account") or username)
        reader: Reader = CalDavReader(url, username, password, picks)
    else:
        address = (secret("ics_url") or "").strip()
        if urlsplit(address).scheme not in ("http", "https", "webcal"):
            raise ConnectorError(
                Problem.CONFIG,
                "A calendar needs url= (CalDAV) or the secret ics_url (an iCalendar "
                f"address): mama connectors add calendar {name} asks for it.",
            )
        source = str(options.get("account") or _ics_account(address))
        reader = IcsReader(address, str(options.get("name") or "").strip() or None)
    return Calendar(name, f"calendar:{source}", reader, days_back=days_back, days_ahead=days_ahead)


def calendar_scope(calendar_name: str) -> str:
    """``channel:calendar/<name>`` with spaces as ``-`` (a digest of the name if unusable)."""
    scope = "channel:calendar/" + re.sub(r"\s+", "-", calendar_name.strip())
    if is_scope_name(scope):
        return scope
    return "channel:calendar/" + hashlib.sha256(calendar_name.encode()).hexdigest()[:12]


class Calendar:
    """Reads a calendar's window of events; never writes to it."""

    kind: ClassVar[str] = "calendar"

    def __init__(
        self,
        name: str,
        source: str,
        reader: Reader,
        *,
        days_back: float = DAYS_BACK,
        days_ahead: float = DAYS_AHEAD,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.name = name
        self.source = source
        self.reader = reader
        self.days_back = days_back
        self.days_ahead = days_ahead
        self.clock = clock
        self._backlog: Pending | None = None

    def window(self, now: datetime) -> tuple[datetime, datetime]:
        """From midnight (UTC) ``days_back`` days ago to ``days_ahead`` days after today."""
        today = datetime.combine(now.astimezone(UTC).date(), time(), UTC)
        return today - timedelta(days=self.days_back), today + timedelta(days=self.days_ahead)

    async def poll(self, cursor: str | None, limit: int) -> Batch:
        state: dict[str, Any] = json.loads(cursor) if cursor else {}
        known = {k: Known.from_json(v) for k, v in dict(state.get("events") or {}).items()}
        pending = self._backlog if self._backlog and self._backlog.cursor == cursor else None
        if pending is None:
            pending = await self._read(state, known)
        taken = pending.changes[: max(1, limit)]
        for change in taken:
            _remember(known, change)
        rest = pending.changes[len(taken) :]
        more = bool(rest)
        new_state: dict[str, Any] = {
            "events": {k: v.to_json() for k, v in sorted(known.items())},
            "complete": not more,
            "day": pending.day if not more else state.get("day"),
            "tags": {**dict(state.get("tags") or {}), **pending.tags} if not more else {},
        }
        cursor_text = json.dumps(new_state, sort_keys=True)
        # What was read but not returned waits here for the next poll from this cursor
        # (in memory only: after a restart the window is simply read again).
        self._backlog = replace(pending, cursor=cursor_text, changes=rest) if more else None
        items = tuple(c.item for c in taken if c.item is not None)
        return Batch(items, cursor_text, more=more, problems=pending.problems)

    async def _read(self, state: Mapping[str, Any], known: dict[str, Known]) -> Pending:
        """Read the source and work out every change against ``known`` (an occurrence
        that only left the window is forgotten from ``known`` at once, without an item)."""
        now = self.clock()
        day = now.astimezone(UTC).date().isoformat()
        start, end = self.window(now)
        # The whole window is read again when the day turns or the last poll stopped
        # short; otherwise only what the server says changed.
        whole = state.get("day") != day or not state.get("complete", True)
        tags: dict[str, str] = dict(state.get("tags") or {}) if not whole else {}
        read = await self.reader.read(start, end, tags)
        made = changes(
            read.found,
            known,
            set(read.calendars),
            source=self.source,
            window_start=start,
            now=now,
            scope=calendar_scope,
        )
        for change in made:
            if change.item is None:
                _remember(known, change)
        loud = sorted(
            (c for c in made if c.item is not None),
            key=lambda c: (c.item.at, c.item.external_id) if c.item else (now, ""),
        )
        return Pending("", loud, day, read.tags, read.problems)

    async def check(self) -> str:
        start, end = self.window(self.clock())
        read = await self.reader.read(start, end, {})
        names = ", ".join(read.calendars) or "none"
        return (
            f"{self.reader.describe()} as {self.source.removeprefix('calendar:')}: "
            f"{len(read.calendars)} calendar(s): {names}; {len(read.found)} event(s) "
            f"from {start:%Y-%m-%d} to {end:%Y-%m-%d}"
        )

    async def choices(self) -> list[str]:
        """The calendars these credentials can read, by name (for the owner to pick)."""
        return await self.reader.names()

    async def aclose(self) -> None:
        await self.reader.aclose()


@dataclass(frozen=True)
class Pending:
    """The changes one read found, in the order they are returned (oldest first)."""

    cursor: str
    """The cursor the next poll must come from to be served from here."""
    changes: list[Change]
    day: str
    """The day (UTC) the window was read on."""
    tags: dict[str, str]
    problems: tuple[PartProblem, ...]


def _remember(known: dict[str, Known], change: Change) -> None:
    if change.known is None:
        known.pop(change.key, None)
    else:
        known[change.key] = change.known


# --- reading ---------------------------------------------------------------


class Read:
    """What one read of the source found."""

    def __init__(self) -> None:
        self.found: list[Occurrence] = []
        self.calendars: list[str] = []
        """The calendars read in full this time (what is missing from them is gone)."""
        self.tags: dict[str, str] = {}
        """Each read calendar's sync token or ETag, to skip it next time if unchanged."""
        self.problems: tuple[PartProblem, ...] = ()


class Reader:
    """Where the events come from (CalDAV or an iCalendar address)."""

    async def read(self, start: datetime, end: datetime, tags: Mapping[str, str]) -> Read:
        """The occurrences in the window of every calendar whose tag is not ``tags``'."""
        raise NotImplementedError

    async def names(self) -> list[str]:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


class CalDavReader(Reader):
    """A CalDAV account through ``caldav`` (blocking, so on a worker thread)."""

    def __init__(self, url: str, username: str, password: str, picks: list[str]) -> None:
        self.url = url
        self.username = username
        self.picks = picks
        self._password = password
        self._client: Any = None

    def describe(self) -> str:
        return f"CalDAV at {urlsplit(self.url).hostname}"

    async def read(self, start: datetime, end: datetime, tags: Mapping[str, str]) -> Read:
        return await asyncio.to_thread(_translated, self._read, start, end, tags)

    async def names(self) -> list[str]:
        found = await asyncio.to_thread(_translated, self._calendars)
        return sorted((name for name, _cal in found), key=str.casefold)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await asyncio.to_thread(client.close)

    def _connect(self) -> Any:
        if self._client is None:
            from caldav.davclient import DAVClient

            host = urlsplit(self.url).hostname or ""
            self._client = DAVClient(
                url=self.url,
                username=self.username,
                password=self._password,
                timeout=int(TIMEOUT_S),
                # A password is never sent in the clear, except to this machine itself.
                require_tls=host not in LOOPBACK,
                enable_rfc6764=False,
            )
        return self._client

    def _calendars(self) -> list[tuple[str, Any]]:
        principal = self._connect().principal()
        found = []
        for calendar in principal.calendars():
            name = calendar.get_display_name() or str(calendar.url).rstrip("/").rsplit("/")[-1]
            found.append((str(name), calendar))
        return found

    def _read(self, start: datetime, end: datetime, tags: Mapping[str, str]) -> Read:
        from caldav.elements import dav

        read = Read()
        broken = BrokenParts()
        calendars = self._calendars()
        by_name = {name.casefold(): (name, cal) for name, cal in calendars}
        picked: list[tuple[str, Any]] = calendars
        if self.picks:
            picked = []
            for wanted in self.picks:
                match = by_name.get(wanted.casefold())
                if match is None:
                    error = ConnectorError(Problem.NOT_FOUND, f"No calendar {wanted!r} here.")
                    broken.skip(wanted, error)
                    continue
                picked.append(match)
        for name, calendar in picked:
            token = calendar.get_properties([dav.SyncToken()]).get("{DAV:}sync-token")
            if token and tags.get(name) == str(token):
                continue  # nothing changed in it since the last read
            for resource in calendar.search(start=start, end=end, event=True):
                read.found += occurrences(resource.icalendar_instance, name, start, end)
            read.calendars.append(name)
            if token:
                read.tags[name] = str(token)
        read.problems = broken.settle(len(picked) + len(broken.problems))
        return read


def _translated(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with the CalDAV client's errors as ConnectorErrors for the owner."""
    from caldav.lib import error as dav_error

    try:
        return fn(*args)
    except ConnectorError:
        raise
    except dav_error.AuthorizationError:
        raise ConnectorError(
            Problem.AUTH, "The CalDAV server refused the user name or password."
        ) from None
    except dav_error.NotFoundError:
        raise ConnectorError(
            Problem.NOT_FOUND, "The CalDAV server has no calendars there."
        ) from None
    except dav_error.RateLimitError:
        raise ConnectorError(Problem.RATE_LIMITED, "The CalDAV server asks to slow down.") from None
    except dav_error.DAVError as exc:
        raise ConnectorError(
            Problem.UNAVAILABLE, f"The CalDAV server is having trouble ({type(exc).__name__})."
        ) from None
    except CalendarDataError as exc:
        raise ConnectorError(Problem.UNAVAILABLE, f"The CalDAV server sent {exc}.") from None
    except (OSError, ValueError) as exc:  # connection, TLS, a malformed answer
        raise ConnectorError(
            Problem.UNAVAILABLE, f"The CalDAV server cannot be reached ({type(exc).__name__})."
        ) from None


class IcsReader(Reader):
    """An iCalendar address, fetched with ``httpx`` (with its ETag when it has one)."""

    def __init__(self, address: str, name: str | None) -> None:
        self._address = "https://" + address[9:] if address.startswith("webcal://") else address
        self.name = name
        self._client = httpx.AsyncClient(timeout=TIMEOUT_S, follow_redirects=True)

    def describe(self) -> str:
        return f"iCalendar address at {urlsplit(self._address).hostname}"

    async def names(self) -> list[str]:
        _tag, calendar = await self._fetch(None)
        return [self._name(calendar)]

    async def read(self, start: datetime, end: datetime, tags: Mapping[str, str]) -> Read:
        read = Read()
        known_tag = next(iter(tags.values()), None)
        tag, calendar = await self._fetch(known_tag)
        if calendar is None:
            return read  # 304: unchanged since the last read
        name = self._name(calendar)
        try:
            read.found = occurrences(calendar, name, start, end)
        except ValueError as exc:
            raise ConnectorError(
                Problem.UNAVAILABLE,
                f"The calendar address sent events that cannot be read ({exc}).",
            ) from None
        read.calendars = [name]
        if tag:
            read.tags = {name: tag}
        return read

    async def aclose(self) -> None:
        await self._client.aclose()

    def _name(self, calendar: Any) -> str:
        return self.name or str(calendar.get("X-WR-CALNAME") or "") or "calendar"

    async def _fetch(self, tag: str | None) -> tuple[str | None, Any]:
        headers = {"If-None-Match": tag} if tag else {}
        try:
            response = await self._client.get(self._address, headers=headers)
        except httpx.HTTPError as exc:
            raise ConnectorError(
                Problem.UNAVAILABLE,
                f"The calendar address cannot be reached ({type(exc).__name__}).",
            ) from None
        status = response.status_code
        if status == 304:
            return tag, None
        if status in (401, 403, 404, 410):
            # Google answers 404 to a secret address that was reset.
            raise ConnectorError(
                Problem.AUTH,
                f"The calendar address was refused ({status}): it may have been reset; "
                "set the new one.",
            )
        if status != 200:
            raise ConnectorError(
                Problem.UNAVAILABLE, f"The calendar address is having trouble ({status})."
            )
        try:
            calendar = parse_calendar(response.content)
        except CalendarDataError as exc:
            raise ConnectorError(Problem.UNAVAILABLE, f"The calendar address sent {exc}.") from None
        return response.headers.get("ETag"), calendar


def _ics_account(address: str) -> str:
    """The account an address belongs to: Google's calendar id (an email) from
    ``/calendar/ical/<id>/private-…``, else the host (never the secret path)."""
    parts = urlsplit(address)
    match = re.match(r"/calendar/ical/([^/]+)/", parts.path)
    if match and "@" in unquote(match.group(1)):
        return unquote(match.group(1))
    return parts.hostname or "calendar"


def _days(options: Mapping[str, Any], key: str, default: float) -> float:
    try:
        value = float(options.get(key, default))
    except (TypeError, ValueError):
        raise ConnectorError(Problem.CONFIG, f"{key} must be a number of days.") from None
    if not 0 <= value <= 3660:
        raise ConnectorError(Problem.CONFIG, f"{key} must be 0 to 3660 days.")
    return value
