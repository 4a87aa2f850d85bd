"""Mail through IMAP over TLS (Gmail or any server): read-only, from a UID cursor.

Library: ``imapclient`` (pinned). It is maintained, parses the hard parts of IMAP for
us (literals, BODYSTRUCTURE, SEARCH and FETCH responses, modified UTF-7 folder names,
tz-aware INTERNALDATE) and has ``oauth2_login`` for XOAUTH2. It is synchronous, so
each poll runs in one worker thread (``asyncio.to_thread``) while the app's loop goes
on. ``aioimaplib`` is async but hands back raw response lines, leaving the FETCH and
BODYSTRUCTURE parsing to us -- the error-prone part we would rather not write.

Rules:

- TLS always: implicit TLS (port 993 by default), certificate and host name checked.
  There is no plain-text or STARTTLS option, so a password never crosses in clear.
- Read-only: folders are opened with EXAMINE and bodies fetched with ``BODY.PEEK``,
  so flags (``\\Seen``) never change; nothing is stored, moved or deleted.
- Cursor: JSON ``{"v": 1, "folders": {name: {"uidvalidity": V, "last_uid": U}}}``.
  A folder seen for the first time is read from ``initial_days`` back (default 30:
  an owner adding an account wants this month's mail, not ten years of it). When a
  folder's UIDVALIDITY changes, its UIDs mean nothing any more and that same window
  is read again.
- ``external_id`` is ``<folder>/<Message-ID>`` (or ``<folder>/sha256:<hash of the
  header block>`` when a message has none), not ``<folder>/<uidvalidity>/<uid>``: a
  re-read after a UIDVALIDITY change then yields the same ids, and the runtime's
  de-duplication by ``(source, external_id)`` stores nothing twice -- without any
  state kept here. The price: two messages with one Message-ID in one folder are kept
  once (the first). UIDVALIDITY and UID are in the metadata.
- Size: a message up to ``max_fetch_bytes`` is fetched whole (``BODY.PEEK[]``) and
  parsed by ``email``. A larger one (a big attachment) is not: its BODYSTRUCTURE says
  where the text part is; only that part is fetched, and only its first
  ``max_fetch_bytes`` (``BODY.PEEK[<section>]<0.N>``). Attachments are listed by name
  and size and never downloaded or stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import imaplib
import json
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Literal

from imapclient import IMAPClient
from imapclient.exceptions import LoginError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.connectors.base import Batch, BrokenParts, ConnectorError, Item, Problem, listed
from app.connectors.mail_parse import (
    Body,
    Envelope,
    Structure,
    parse_headers,
    parse_message,
    part_text,
    read_structure,
)

OPTIONS_HELP: dict[str, str] = {
    "host": "IMAP server name, e.g. imap.gmail.com (implicit TLS only).",
    "port": "IMAP over TLS port (default 993).",
    "username": "The mail account's login, usually its address.",
    "folders": 'Folders to read (default ["INBOX"]), e.g. ["INBOX", "Projects"].',
    "auth": '"password" (an app password in the keyring) or "xoauth2" (an OAuth2 token).',
    "ca_file": "Optional PEM file of a CA to trust (a self-hosted server's own CA).",
    "max_text_chars": "Body text kept per message (default 20000); the rest is cut with a note.",
    "initial_days": (
        "On the first poll (and after the server renumbers a folder) read only this many "
        "days back (default 30; 0 = everything)."
    ),
    "max_fetch_bytes": (
        "Largest download per message (default 262144); bigger mail is read part by part."
    ),
}

GMAIL: dict[str, Any] = {"host": "imap.gmail.com", "port": 993, "folders": ["INBOX"]}
"""Options for Gmail: add ``username`` (the address)."""

GMAIL_NOTE = (
    "Gmail: imap.gmail.com:993 over TLS. Use an app password (Google account > Security > "
    "App passwords; needs 2-step verification) with auth=password, or an OAuth2 access "
    "token with the https://mail.google.com/ scope with auth=xoauth2."
)

_TIMEOUT = 30.0
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_FETCH_CHUNK = 100


class MailOptions(BaseModel):
    """The connector's JSON settings, checked once when it is built."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(min_length=1)
    port: int = Field(default=993, ge=1, le=65535)
    username: str = Field(min_length=1)
    folders: tuple[str, ...] = Field(default=("INBOX",), min_length=1)
    _folders_listed = field_validator("folders", mode="before")(listed)
    auth: Literal["password", "xoauth2"] = "password"
    ca_file: str | None = None
    max_text_chars: int = Field(default=20_000, ge=200)
    max_fetch_bytes: int = Field(default=256 * 1024, ge=4096)
    initial_days: int = Field(default=30, ge=0)


@dataclass
class _FolderState:
    uidvalidity: int
    last_uid: int


def _load_cursor(cursor: str | None) -> dict[str, _FolderState]:
    if not cursor:
        return {}
    try:
        data = json.loads(cursor)
        return {
            name: _FolderState(int(v["uidvalidity"]), int(v["last_uid"]))
            for name, v in data["folders"].items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConnectorError(Problem.CONFIG, f"mail cursor is not readable: {exc}") from exc


def _dump_cursor(state: Mapping[str, _FolderState]) -> str:
    folders = {n: {"uidvalidity": s.uidvalidity, "last_uid": s.last_uid} for n, s in state.items()}
    return json.dumps({"v": 1, "folders": folders}, sort_keys=True)


class MailConnector:
    """Reads the picked folders of one IMAP account; see the module docstring."""

    kind: ClassVar[str] = "mail"

    def __init__(
        self, name: str, options: MailOptions, secret: Callable[[str], str | None]
    ) -> None:
        self.name = name
        self.options = options
        self._secret = secret
        self._client: IMAPClient | None = None
        self._lock = threading.Lock()
        self.bytes_fetched = 0
        """Message bytes downloaded (headers and bodies), to show big mail stays unread."""

    @property
    def source(self) -> str:
        return f"mail:{self.options.username}"

    # --- the Connector protocol ---------------------------------------------------------

    async def poll(self, cursor: str | None, limit: int) -> Batch:
        """Read up to ``limit`` messages newer than ``cursor`` across the folders."""
        state = _load_cursor(cursor)
        return await asyncio.to_thread(self._guarded, self._poll_sync, state, max(1, limit))

    async def check(self) -> str:
        """Log in and examine every folder; one line with their message counts."""
        return await asyncio.to_thread(self._guarded, self._check_sync)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._guarded, self._close_sync)

    # --- worker-thread side ---------------------------------------------------------------

    def _guarded(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn`` with the connection to ourselves; translate errors to ConnectorError."""
        with self._lock:
            try:
                return fn(*args)
            except ConnectorError:
                raise
            except LoginError as exc:
                self._drop()
                raise ConnectorError(
                    Problem.AUTH,
                    f"{self.options.host} refused the login for {self.options.username}: "
                    f"{_one_line(exc)}",
                ) from exc
            except ssl.SSLCertVerificationError as exc:
                self._drop()
                raise ConnectorError(
                    Problem.UNAVAILABLE,
                    f"TLS certificate of {self.options.host} is not trusted: {exc.verify_message}",
                ) from exc
            except (OSError, imaplib.IMAP4.abort) as exc:  # TimeoutError and SSLError are OSError
                self._drop()
                raise ConnectorError(
                    Problem.UNAVAILABLE,
                    f"cannot reach {self.options.host}:{self.options.port} over TLS: "
                    f"{_one_line(exc)}",
                ) from exc
            except imaplib.IMAP4.error as exc:
                self._drop()
                raise ConnectorError(
                    Problem.UNAVAILABLE, f"{self.options.host} said: {_one_line(exc)}"
                ) from exc
            except Exception:  # a bug (the runtime reports it): the session may be mid-command
                self._drop()
                raise

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):  # already broken: nothing to release
                client.shutdown()

    def _close_sync(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.logout()
            except Exception:  # logging out of a dead connection: closing is all we want
                client.shutdown()

    def _connect(self) -> IMAPClient:
        if self._client is not None:
            try:
                self._client.noop()  # servers drop idle connections; find out before reading
                return self._client
            except (OSError, imaplib.IMAP4.error):
                self._drop()
        opts = self.options
        key = "oauth_token" if opts.auth == "xoauth2" else "password"
        secret = self._secret(key)
        if not secret:
            raise ConnectorError(
                Problem.CONFIG,
                f"no {key.replace('_', ' ')} for {opts.username} in the keyring "
                f"(mama connectors add mail sets it)",
            )
        try:
            context = ssl.create_default_context(cafile=opts.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConnectorError(
                Problem.CONFIG, f"ca_file {opts.ca_file!r} is not a readable PEM file: {exc}"
            ) from exc
        client = IMAPClient(
            opts.host, port=opts.port, ssl=True, ssl_context=context, timeout=_TIMEOUT
        )
        client.normalise_times = False
        try:
            if opts.auth == "xoauth2":
                client.oauth2_login(opts.username, secret)
            else:
                client.login(opts.username, secret)
        except BaseException:
            client.shutdown()
            raise
        self._client = client
        return client

    def _examine(self, client: IMAPClient, folder: str) -> dict[bytes, Any]:
        try:
            return client.select_folder(folder, readonly=True)
        except imaplib.IMAP4.abort:
            raise
        except imaplib.IMAP4.error as exc:
            if not client.folder_exists(folder):
                raise ConnectorError(
                    Problem.NOT_FOUND,
                    f"folder {folder!r} does not exist on {self.options.host}",
                ) from exc
            raise

    def _check_sync(self) -> str:
        client = self._connect()
        counts = []
        for folder in self.options.folders:
            info = self._examine(client, folder)
            counts.append(f"{folder} {int(info.get(b'EXISTS', 0))} messages")
        return f"{self.options.username} on {self.options.host}: " + ", ".join(counts)

    def _poll_sync(self, state: dict[str, _FolderState], limit: int) -> Batch:
        client = self._connect()
        items: list[Item] = []
        more = False
        folders = self.options.folders
        broken = BrokenParts()
        for index, folder in enumerate(folders):
            try:
                info = self._examine(client, folder)
            except ConnectorError as error:
                if not broken.skip(folder, error):  # a folder gone: the others go on
                    raise
                continue
            uidvalidity = int(info[b"UIDVALIDITY"])
            known = state.get(folder)
            if known is not None and known.uidvalidity == uidvalidity:
                last = known.last_uid
                uids = sorted(u for u in client.search(f"UID {last + 1}:*") if u > last)
            else:  # first look at this folder, or its UIDs were renumbered
                uids, last = self._recent(client, info)
            state[folder] = _FolderState(uidvalidity, last)
            room = limit - len(items)
            if len(uids) > room:
                more = True
                uids = uids[:room]
            for start in range(0, len(uids), _FETCH_CHUNK):
                chunk = uids[start : start + _FETCH_CHUNK]
                items.extend(self._read(client, folder, uidvalidity, chunk))
                state[folder] = _FolderState(uidvalidity, chunk[-1])
            if len(items) >= limit:
                more = more or index < len(folders) - 1  # later folders not looked at yet
                break
        problems = broken.settle(len(set(folders)))
        return Batch(items=tuple(items), cursor=_dump_cursor(state), more=more, problems=problems)

    def _recent(self, client: IMAPClient, info: Mapping[bytes, Any]) -> tuple[list[int], int]:
        """UIDs of the last ``initial_days`` of mail, and the UID to count on from."""
        days = self.options.initial_days
        if days == 0:
            return sorted(client.search("ALL")), 0
        since = datetime.now(UTC).date() - timedelta(days=days)
        month = _MONTHS[since.month - 1]
        uids = sorted(client.search(f"SINCE {since.day:02d}-{month}-{since.year}"))
        if uids:
            return uids, min(uids) - 1
        # Nothing recent: start after what is there now.
        return [], max(0, _int(info.get(b"UIDNEXT")) - 1)

    def _read(
        self, client: IMAPClient, folder: str, uidvalidity: int, uids: list[int]
    ) -> list[Item]:
        cap = self.options.max_fetch_bytes
        meta = client.fetch(uids, ["RFC822.SIZE", "INTERNALDATE"])
        small = [u for u in uids if u in meta and _int(meta[u].get(b"RFC822.SIZE")) <= cap]
        large = sorted(set(meta) & set(uids) - set(small))
        whole = client.fetch(small, ["BODY.PEEK[]"]) if small else {}
        shapes = client.fetch(large, ["BODYSTRUCTURE"]) if large else {}
        items = []
        for uid in uids:
            if uid in whole:
                raw = _get(whole[uid], b"BODY[]")
                self.bytes_fetched += len(raw)
                env, body = _parse_or_keep(raw)
                header = raw.split(b"\r\n\r\n", 1)[0]
            elif uid in shapes:
                env, body, header = self._read_large(client, uid, shapes[uid][b"BODYSTRUCTURE"])
            else:  # expunged while we read
                continue
            internal = meta[uid].get(b"INTERNALDATE")
            items.append(self._item(folder, uidvalidity, uid, env, body, header, internal))
        return items

    def _read_large(
        self, client: IMAPClient, uid: int, structure: Any
    ) -> tuple[Envelope, Body, bytes]:
        """Headers, the first ``max_fetch_bytes`` of the text part, attachments listed."""
        cap = self.options.max_fetch_bytes
        try:
            found = read_structure(structure)
        except Exception:  # an odd BODYSTRUCTURE: read the headers, list nothing
            found = Structure(None, None, ())
        section = found.text_section or found.html_section
        mime = "HEADER" if section == "TEXT" else f"{section}.MIME"
        wanted = ["BODY.PEEK[HEADER]"]
        if section is not None:
            wanted += [f"BODY.PEEK[{mime}]", f"BODY.PEEK[{section}]<0.{cap}>"]
        data = client.fetch([uid], wanted).get(uid, {})
        header = _get(data, b"BODY[HEADER]")
        part = b""
        if section is not None:
            part = _get(data, f"BODY[{section}]<0>".encode()) or _get(
                data, f"BODY[{section}]".encode()
            )
        self.bytes_fetched += len(header) + len(part)
        try:
            env = parse_headers(header)
            text = part_text(_get(data, f"BODY[{mime}]".encode()), part) if part else ""
        except Exception as exc:  # as in _parse_or_keep: keep it readable, never skip it
            env, kept = _parse_or_keep_failed(header + b"\r\n\r\n" + part, exc)
            text = kept.text
        return env, Body(text=text, attachments=list(found.attachments)), header

    def _item(
        self,
        folder: str,
        uidvalidity: int,
        uid: int,
        env: Envelope,
        body: Body,
        header: bytes,
        internal: Any,
    ) -> Item:
        opts = self.options
        if env.message_id:
            external_id = f"{folder}/{env.message_id}"
        else:
            external_id = f"{folder}/sha256:{hashlib.sha256(header).hexdigest()}"
        at = env.date
        if at is None:
            at = internal if isinstance(internal, datetime) else datetime.now(UTC)
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)
        return Item(
            source=self.source,
            external_id=external_id,
            channel=folder,
            scope=f"channel:mail/{opts.username}/{folder}",
            author=env.sender or "(no sender)",
            at=at,
            text=_text(env, body, opts.max_text_chars),
            metadata={
                "subject": env.subject,
                "message_id": env.message_id,
                "to": env.to,
                "cc": env.cc,
                "attachments": [a.as_json() for a in body.attachments],
                "uidvalidity": uidvalidity,
                "uid": uid,
            },
        )


def _parse_or_keep(raw: bytes) -> tuple[Envelope, Body]:
    """Parse a message; one the parser chokes on is kept as raw text, never skipped.

    A poll that raised on one odd message would stop its folder's cursor there forever.
    """
    try:
        return parse_message(raw)
    except Exception as exc:  # any parser bug: the message must still pass
        return _parse_or_keep_failed(raw, exc)


def _parse_or_keep_failed(raw: bytes, exc: Exception) -> tuple[Envelope, Body]:
    env = Envelope("", "", "", "", None, "", "")
    text = f"[not parseable ({type(exc).__name__}); raw text follows]\n"
    return env, Body(text=text + raw.decode("utf-8", "replace"))


def _text(env: Envelope, body: Body, max_chars: int) -> str:
    lines = [f"From: {env.sender}", f"To: {env.to}"]
    if env.cc:
        lines.append(f"Cc: {env.cc}")
    lines += [f"Subject: {env.subject}", f"Date: {env.date_text}"]
    if body.attachments:
        listed = ", ".join(f"{a.name} ({_size(a.size)})" for a in body.attachments)
        lines.append(f"Attachments (not stored): {listed}")
    text = body.text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if len(text) > max_chars:
        cut = len(text) - max_chars
        text = text[:max_chars] + f"\n[... {cut} more characters not kept]"
    return "\n".join(lines) + "\n\n" + text


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _get(data: Mapping[bytes, Any], key: bytes) -> bytes:
    value = data.get(key)
    return value if isinstance(value, bytes) else b""


def _one_line(exc: BaseException) -> str:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return " ".join(str(text).split()) or type(exc).__name__


def build(
    name: str, options: Mapping[str, Any], secret: Callable[[str], str | None]
) -> MailConnector:
    """Make a mail connector from its JSON settings; bad settings raise CONFIG."""
    try:
        parsed = MailOptions.model_validate(dict(options))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "options"
        raise ConnectorError(Problem.CONFIG, f"mail option {where}: {first['msg']}") from exc
    return MailConnector(name, parsed, secret)
