"""Trello through its REST API (``httpx``): the boards the owner picks, as readable items.

Each poll reads, per board, the board's actions since the cursor (the newest
action id stored), newest first, paging backwards with ``before`` until the
window is read; then returns them oldest first (up to the limit, with ``more``
when some are left). Card creations, moves between lists, renames, due dates,
descriptions, archiving and comments become one line each ("Anna moved 'Fix
login' from Doing to Done"). The first poll reads the last ``since_days`` days.

Scope: ``project:trello/<board name>`` (spaces as ``-``). Secrets: ``api_key``
and ``token`` (a read-only token is enough: MAMA never writes to Trello).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar

import httpx

from app.connectors.base import Batch, BrokenParts, ConnectorError, Item, Problem
from mama_core.json_types import JsonObject
from mama_core.scopes.names import is_scope_name

OPTIONS_HELP: dict[str, str] = {
    "boards": "the boards to read: names or ids, comma-separated (required)",
    "base_url": "the API's address (default https://api.trello.com/1)",
    "since_days": "how far back the first poll reads (default 14)",
    "page_size": "actions per request, 1 to 1000 (default 1000, Trello's maximum)",
    "secret:api_key": "your Trello API key (https://trello.com/power-ups/admin)",
    "secret:token": "a Trello token for that key (read access is enough)",
}
SECRETS = ("api_key", "token")

DEFAULT_BASE_URL = "https://api.trello.com/1"
PAGE_SIZE = 1000  # Trello's maximum for board actions
ACTION_TYPES = (
    "createCard",
    "updateCard",
    "commentCard",
    "deleteCard",
    "copyCard",
    "moveCardToBoard",
    "addMemberToCard",
    "removeMemberFromCard",
    "addChecklistToCard",
    "updateCheckItemStateOnCard",
    "addAttachmentToCard",
)
MAX_TEXT = 8000


def build(name: str, options: Mapping[str, Any], secret: Callable[[str], str | None]) -> Trello:
    """A Trello connector from the owner's options; ConnectorError(CONFIG) if incomplete."""
    raw = options.get("boards")
    boards = [b.strip() for b in raw.split(",")] if isinstance(raw, str) else list(raw or [])
    boards = [str(b) for b in boards if str(b).strip()]
    if not boards:
        raise ConnectorError(Problem.CONFIG, "Trello needs at least one board (option boards).")
    api_key, token = secret("api_key"), secret("token")
    if not api_key or not token:
        raise ConnectorError(
            Problem.CONFIG,
            f"Trello needs an API key and a token: mama connectors add trello {name} "
            "asks for them (or set MAMA_CONNECTOR_<NAME>_API_KEY / _TOKEN).",
        )
    try:
        since_days = float(options.get("since_days", 14))
    except (TypeError, ValueError):
        raise ConnectorError(Problem.CONFIG, "since_days must be a number of days.") from None
    try:
        page_size = int(options.get("page_size", PAGE_SIZE))
    except (TypeError, ValueError):
        page_size = 0
    if not 1 <= page_size <= PAGE_SIZE:
        raise ConnectorError(Problem.CONFIG, f"page_size must be 1 to {PAGE_SIZE}.")
    return Trello(
        name,
        boards,
        api_key,
        token,
        base_url=str(options.get("base_url") or DEFAULT_BASE_URL),
        since_days=since_days,
        page_size=page_size,
    )


def board_scope(board_name: str, board_id: str) -> str:
    """``project:trello/<board name>`` with spaces as ``-`` (the board id if unusable)."""
    scope = "project:trello/" + re.sub(r"\s+", "-", board_name.strip())
    return scope if is_scope_name(scope) else f"project:trello/{board_id}"


class Trello:
    """Reads board actions; never writes to Trello."""

    kind: ClassVar[str] = "trello"

    def __init__(
        self,
        name: str,
        boards: list[str],
        api_key: str,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        since_days: float = 14,
        page_size: int = PAGE_SIZE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.name = name
        self.boards = boards
        self.since_days = since_days
        self.page_size = page_size
        self.clock = clock
        self._auth = {"key": api_key, "token": token}
        self._client = httpx.AsyncClient(base_url=base_url.rstrip("/") + "/", timeout=30.0)
        self._resolved: list[tuple[str, str]] | None = None
        self._missing: list[str] = []
        """Picked boards the last resolution could not find (looked for again each poll)."""
        self._member: str | None = None
        self._backlog: dict[str, tuple[str, list[JsonObject]]] = {}

    # --- the protocol ---------------------------------------------------

    async def poll(self, cursor: str | None, limit: int) -> Batch:
        state: dict[str, str] = json.loads(cursor) if cursor else {}
        source = await self._source()
        pending: list[tuple[str, JsonObject, str, str]] = []
        broken = BrokenParts()
        boards = await self._boards(broken)
        for board_id, board_name in boards:
            try:  # a board deleted or closed to the token: the others are still read
                window = await self._window(board_id, state.get(board_id))
            except ConnectorError as error:
                named = ConnectorError(error.problem, f"Trello board {board_name!r}: {error}")
                if not broken.skip(board_name, named):
                    raise
                continue
            for action in window:
                pending.append((board_id, action, board_name, source))
        problems = broken.settle(len(boards) + len(self._missing))
        pending.sort(key=_order)
        taken = pending[: max(1, limit)]
        for board_id, action, _name, _source in taken:
            state[board_id] = str(action["id"])
        # What was read but not returned waits here for the next poll from this cursor
        # (in memory only: after a restart the window is simply read again).
        self._backlog = {}
        for board_id, action, _name, _source in pending[len(taken) :]:
            since = state.get(board_id, "")
            self._backlog.setdefault(board_id, (since, []))[1].append(action)
        items = tuple(
            _item(action, name, source, board_id) for board_id, action, name, source in taken
        )
        return Batch(
            items,
            json.dumps(state, sort_keys=True),
            more=len(pending) > len(taken),
            problems=problems,
        )

    async def check(self) -> str:
        boards = await self._boards()
        member = await self._source()
        names = ", ".join(name for _id, name in boards)
        return f"Trello as {member.removeprefix('trello:')}: {len(boards)} board(s): {names}"

    async def choices(self) -> list[str]:
        """The open boards this key and token can read, by name (for the owner to pick)."""
        mine = await self._get("members/me/boards", {"fields": "id,name,shortLink,closed"})
        names = {
            str(b["name"])
            for b in mine
            if isinstance(b, dict) and b.get("name") and not b.get("closed")
        }
        return sorted(names, key=str.casefold)

    async def aclose(self) -> None:
        await self._client.aclose()

    # --- the API --------------------------------------------------------

    async def _get(self, path: str, params: JsonObject | None = None) -> Any:
        try:
            response = await self._client.get(
                path.lstrip("/"), params={**(params or {}), **self._auth}
            )
        except httpx.HTTPError as exc:
            raise ConnectorError(
                Problem.UNAVAILABLE, f"Trello cannot be reached ({type(exc).__name__})."
            ) from None
        status = response.status_code
        if status == 200:
            try:
                return response.json()
            except ValueError:
                raise ConnectorError(
                    Problem.UNAVAILABLE, "Trello answered with something that is not JSON."
                ) from None
        if status == 401:
            raise ConnectorError(
                Problem.AUTH, "Trello refused the API key or token (401): set them again."
            )
        if status == 403:
            raise ConnectorError(
                Problem.PERMISSION, "The Trello token may not read this board (403)."
            )
        if status in (400, 404):
            raise ConnectorError(
                Problem.NOT_FOUND, f"Trello has no {path.split('/')[1]} there ({status})."
            )
        if status == 429:
            raise ConnectorError(
                Problem.RATE_LIMITED,
                "Trello asks to slow down (429).",
                retry_after=_retry_after(response.headers.get("Retry-After")),
            )
        raise ConnectorError(Problem.UNAVAILABLE, f"Trello is having trouble ({status}).")

    async def _source(self) -> str:
        if self._member is None:
            me = await self._get("members/me", {"fields": "id,username"})
            self._member = str(me.get("username") or me["id"])
        return f"trello:{self._member}"

    async def _boards(self, broken: BrokenParts | None = None) -> list[tuple[str, str]]:
        """The picked boards as (id, name), resolved by id, short link or name (once, while
        all are found). With ``broken``, a picked board not open to the token is noted
        there and the others returned; without, it fails the call (``check``)."""
        if self._resolved is None or self._missing:
            mine = await self._get("members/me/boards", {"fields": "id,name,shortLink,closed"})
            resolved: list[tuple[str, str]] = []
            missing: list[str] = []
            for wanted in self.boards:
                match = next(
                    (
                        b
                        for b in mine
                        if wanted in (b.get("id"), b.get("shortLink"))
                        or str(b.get("name", "")).casefold() == wanted.casefold()
                    ),
                    None,
                )
                if match is None:
                    missing.append(wanted)
                    continue
                resolved.append((str(match["id"]), str(match.get("name") or match["id"])))
            self._resolved, self._missing = resolved, missing
        for wanted in self._missing:
            error = ConnectorError(
                Problem.NOT_FOUND, f"No Trello board {wanted!r} is open to this token."
            )
            if broken is None or not broken.skip(wanted, error):
                raise error
        return self._resolved

    async def _window(self, board_id: str, since: str | None) -> list[JsonObject]:
        """The actions after ``since``: the backlog of the last poll (if it was read from
        this same cursor) plus what is newer than it, else the whole window."""
        backlog = self._backlog.get(board_id)
        if backlog is None or not backlog[1] or backlog[0] != (since or ""):
            return await self._actions(board_id, since)
        kept = backlog[1]
        newest = max(kept, key=lambda a: (str(a.get("date", "")), str(a.get("id", ""))))
        newer = await self._actions(board_id, str(newest["id"]))
        return kept + newer

    async def _actions(self, board_id: str, since: str | None) -> list[JsonObject]:
        """Every action of the window (since ``since``, or ``since_days`` ago), newest first."""
        params: JsonObject = {
            "filter": ",".join(ACTION_TYPES),
            "limit": self.page_size,
            "since": since or (self.clock() - timedelta(days=self.since_days)).isoformat(),
        }
        found: list[JsonObject] = []
        seen: set[str] = set()
        while True:
            page = await self._get(f"boards/{board_id}/actions", params)
            if not isinstance(page, list):
                raise ConnectorError(Problem.UNAVAILABLE, "Trello sent an unexpected answer.")
            fresh = [a for a in page if isinstance(a, dict) and str(a.get("id")) not in seen]
            for action in fresh:
                seen.add(str(action["id"]))
                found.append(action)
            if len(page) < self.page_size or not fresh:
                return found
            params = {**params, "before": str(fresh[-1]["id"])}


def _order(pending: tuple[str, JsonObject, str, str]) -> tuple[str, str]:
    return (str(pending[1].get("date", "")), str(pending[1].get("id", "")))


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
        except (TypeError, ValueError):
            return None


def _when(value: Any) -> datetime:
    try:
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _due(value: Any) -> str:
    if not value:
        return "none"
    return _when(value).strftime("%Y-%m-%d %H:%M UTC")


def describe(action: Mapping[str, Any]) -> str:
    """The action as one readable line (comments and descriptions with their text)."""
    data: Mapping[str, Any] = action.get("data") or {}
    who = str((action.get("memberCreator") or {}).get("fullName") or "Someone")
    card = f"'{(data.get('card') or {}).get('name', '?')}'"
    kind = str(action.get("type", ""))
    old: Mapping[str, Any] = data.get("old") or {}
    new_card: Mapping[str, Any] = data.get("card") or {}
    list_name = (data.get("list") or {}).get("name")
    if kind == "createCard":
        return f"{who} created {card}" + (f" in {list_name}" if list_name else "")
    if kind == "commentCard":
        return f"{who} commented on {card}: {data.get('text', '')}"
    if kind == "updateCard":
        if "listBefore" in data and "listAfter" in data:
            before = data["listBefore"].get("name", "?")
            after = data["listAfter"].get("name", "?")
            return f"{who} moved {card} from {before} to {after}"
        if "due" in old:
            due = new_card.get("due")
            if not due:
                return f"{who} removed the due date of {card}"
            return f"{who} set the due date of {card} to {_due(due)}"
        if "name" in old:
            return f"{who} renamed '{old['name']}' to {card}"
        if "closed" in old:
            return f"{who} {'archived' if new_card.get('closed') else 'restored'} {card}"
        if "desc" in old:
            return f"{who} changed the description of {card}: {new_card.get('desc', '')}"
        if "dueComplete" in old:
            done = "complete" if new_card.get("dueComplete") else "not complete"
            return f"{who} marked the due date of {card} {done}"
        return f"{who} updated {card}"
    if kind == "deleteCard":
        return f"{who} deleted a card" + (f" from {list_name}" if list_name else "")
    if kind in ("addMemberToCard", "removeMemberFromCard"):
        member = (data.get("member") or {}).get("name") or "a member"
        verb = "added" if kind.startswith("add") else "removed"
        return f"{who} {verb} {member} {'to' if verb == 'added' else 'from'} {card}"
    if kind == "updateCheckItemStateOnCard":
        item = (data.get("checkItem") or {}).get("name", "?")
        state = (data.get("checkItem") or {}).get("state", "?")
        return f"{who} marked '{item}' {state} on {card}"
    if kind == "addAttachmentToCard":
        return f"{who} attached '{(data.get('attachment') or {}).get('name', '?')}' to {card}"
    return f"{who} did {kind} on {card}"


def _item(action: Mapping[str, Any], board_name: str, source: str, board_id: str) -> Item:
    data: Mapping[str, Any] = action.get("data") or {}
    card: Mapping[str, Any] = data.get("card") or {}
    metadata: JsonObject = {"type": action.get("type"), "board_id": board_id}
    if card.get("id"):
        metadata["card_id"] = card["id"]
    if card.get("shortLink"):
        metadata["url"] = f"https://trello.com/c/{card['shortLink']}"
    text = describe(action)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters)"
    creator: Mapping[str, Any] = action.get("memberCreator") or {}
    return Item(
        source=source,
        external_id=str(action["id"]),
        channel=board_name,
        scope=board_scope(board_name, board_id),
        author=str(creator.get("fullName") or creator.get("username") or ""),
        at=_when(action.get("date")),
        text=text,
        metadata=metadata,
    )
