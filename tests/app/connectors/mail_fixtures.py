"""Putting mail into the test Dovecot with the standard library's imaplib (IMAP APPEND)."""

from __future__ import annotations

import imaplib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from email.message import EmailMessage

from imapclient import imap_utf7

from tests.app.connectors.dovecot_server import PASSWORD, USER, Dovecot


@contextmanager
def imap_session(server: Dovecot) -> Iterator[imaplib.IMAP4_SSL]:
    """A logged-in stdlib IMAP session: the test's own hands on the mailbox."""
    imap = imaplib.IMAP4_SSL(server.host, server.port, ssl_context=server.ssl_context())
    try:
        imap.login(server.user, PASSWORD)
        yield imap
    finally:
        imap.logout()


def _quote(folder: str) -> str:
    """A folder name as IMAP wants it: modified UTF-7, quoted."""
    return '"' + imap_utf7.encode(folder).decode("ascii") + '"'


def append(
    server: Dovecot,
    raw: bytes,
    folder: str = "INBOX",
    flags: str = "",
    received: datetime | None = None,
) -> None:
    """APPEND ``raw``; ``received`` sets its INTERNALDATE (default: now)."""
    with imap_session(server) as imap:
        when = imaplib.Time2Internaldate(received) if received else None
        typ, data = imap.append(_quote(folder), f"({flags})" if flags else None, when, raw)
        assert typ == "OK", data


def create_folder(server: Dovecot, folder: str) -> None:
    with imap_session(server) as imap:
        typ, data = imap.create(_quote(folder))
        assert typ == "OK", data


def delete_folder(server: Dovecot, folder: str) -> None:
    with imap_session(server) as imap:
        typ, data = imap.delete(_quote(folder))
        assert typ == "OK", data


def flags_by_subject(server: Dovecot, folder: str = "INBOX") -> dict[str, set[str]]:
    """Every message's flags, keyed by subject (read with EXAMINE + PEEK itself)."""
    with imap_session(server) as imap:
        typ, _ = imap.select(_quote(folder), readonly=True)
        assert typ == "OK"
        typ, data = imap.fetch("1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        assert typ == "OK"
    result: dict[str, set[str]] = {}
    for entry in data:
        if not isinstance(entry, tuple):
            continue
        head, header = entry
        flags = re.search(rb"FLAGS \(([^)]*)\)", head)
        subject = header.decode("utf-8", "replace").split(":", 1)[1].strip()
        result[subject] = set(flags.group(1).decode().split()) if flags else set()
    return result


def message_sizes(server: Dovecot, folder: str = "INBOX") -> list[int]:
    """RFC822.SIZE of each message as the server reports it."""
    with imap_session(server) as imap:
        imap.select(_quote(folder), readonly=True)
        typ, data = imap.fetch("1:*", "(RFC822.SIZE)")
        assert typ == "OK"
    sizes = []
    for entry in data:
        found = re.search(rb"RFC822.SIZE (\d+)", entry) if isinstance(entry, bytes) else None
        if found:
            sizes.append(int(found.group(1)))
    return sizes


def plain(subject: str, body: str = "Hello from the plain message.", **headers: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = headers.pop("sender", "Ada Lovelace <ada@example.org>")
    msg["To"] = headers.pop("to", USER)
    msg["Subject"] = subject
    msg["Date"] = headers.pop("date", "Mon, 30 Nov 2026 10:00:00 +0100")
    if "message_id" in headers:
        msg["Message-ID"] = headers.pop("message_id")
    else:
        msg["Message-ID"] = f"<{re.sub(r'[^a-z0-9]', '', subject.lower())}@example.org>"
    for key, value in headers.items():
        msg[key] = value
    msg.set_content(body)
    return msg.as_bytes()
