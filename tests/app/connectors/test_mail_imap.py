"""The mail connector against a real Dovecot over TLS, mail put in with IMAP APPEND."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import pytest

from app.connectors.base import Batch, ConnectorError, Item, Problem
from app.connectors.mail import MailConnector, build
from tests.app.connectors.dovecot_server import (
    PASSWORD,
    USER,
    Dovecot,
    dovecot_binary,
    oauth_token,
    running_dovecot,
)
from tests.app.connectors.mail_fixtures import (
    append,
    create_folder,
    delete_folder,
    flags_by_subject,
    message_sizes,
    plain,
)

pytestmark = pytest.mark.skipif(
    dovecot_binary() is None,
    reason="dovecot is not installed (Debian package dovecot-imapd; .ci/run installs it)",
)


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    with running_dovecot() as running:
        yield running


_accounts = itertools.count(1)


@pytest.fixture
def server(dovecot: Dovecot) -> Dovecot:
    """The shared server seen through a fresh, empty account of this test's own."""
    return dataclasses.replace(dovecot, user=f"owner{next(_accounts)}@example.com")


def keyring(password: str | None = PASSWORD) -> Callable[[str], str | None]:
    return lambda key: password if key == "password" else None


def connector(server: Dovecot, password: str | None = PASSWORD, **options: Any) -> MailConnector:
    return build("work-mail", server.options(**options), keyring(password))


def run(coro_fn: Callable[[], Any]) -> Any:
    return asyncio.run(coro_fn())


def poll(conn: MailConnector, cursor: str | None = None, limit: int = 100) -> Batch:
    async def go() -> Batch:
        return await conn.poll(cursor, limit)

    return asyncio.run(go())


def close(conn: MailConnector) -> None:
    asyncio.run(conn.aclose())


def problem_of(conn: MailConnector, cursor: str | None = None) -> ConnectorError:
    with pytest.raises(ConnectorError) as caught:
        poll(conn, cursor)
    close(conn)
    return caught.value


def by_subject(items: tuple[Item, ...]) -> dict[str, Item]:
    return {str(i.metadata["subject"]): i for i in items}


def html_only() -> bytes:
    msg = EmailMessage()
    msg["From"] = '"Grace Hopper" <grace@example.org>'
    msg["To"] = USER
    msg["Subject"] = "HTML only"
    msg["Date"] = "Mon, 30 Nov 2026 11:00:00 +0000"
    msg["Message-ID"] = "<html-only@example.org>"
    msg.set_content(
        "<html><head><style>p{color:red}</style><script>alert('x')</script></head>"
        "<body><p>Quarterly   numbers are <b>in</b>.</p>"
        '<p>See <a href="https://example.org/q3">the Q3 report</a> &amp; reply.</p></body></html>',
        subtype="html",
    )
    return msg.as_bytes()


def alternative() -> bytes:
    msg = EmailMessage()
    msg["From"] = "Linus <linus@example.org>"
    msg["To"] = f"{USER}, Other <other@example.org>"
    msg["Cc"] = "cc@example.org"
    msg["Subject"] = "Multipart alternative"
    msg["Date"] = "Mon, 30 Nov 2026 12:00:00 +0000"
    msg["Message-ID"] = "<alt@example.org>"
    msg.set_content("The plain version wins.")
    msg.add_alternative("<p>The <i>HTML</i> version loses.</p>", subtype="html")
    return msg.as_bytes()


def with_attachment(subject: str, size: int, message_id: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Ada Lovelace <ada@example.org>"
    msg["To"] = USER
    msg["Subject"] = subject
    msg["Date"] = "Mon, 30 Nov 2026 13:00:00 +0000"
    msg["Message-ID"] = message_id
    msg.set_content("Numbers attached; the summary is in this text.")
    blob = bytes(range(256)) * (size // 256) + bytes(size % 256)
    msg.add_attachment(blob, maintype="application", subtype="octet-stream", filename="data.bin")
    return msg.as_bytes()


def test_plain_html_and_multipart_become_readable_items(server: Dovecot) -> None:
    append(server, plain("Plain hello", "Hello from the plain message.\nSecond line."))
    append(server, html_only())
    append(server, alternative())
    create_folder(server, "Équipe")
    append(server, plain("In a UTF-7 folder"), folder="Équipe")
    conn = connector(server, folders=["INBOX", "Équipe"])
    batch = poll(conn)
    close(conn)

    items = by_subject(batch.items)
    assert set(items) == {"Plain hello", "HTML only", "Multipart alternative", "In a UTF-7 folder"}
    assert batch.more is False

    hello = items["Plain hello"]
    assert hello.source == f"mail:{server.user}"
    assert hello.channel == "INBOX"
    assert hello.scope == f"channel:mail/{server.user}/INBOX"
    assert hello.author == "Ada Lovelace <ada@example.org>"
    assert hello.at.isoformat() == "2026-11-30T10:00:00+01:00"
    assert hello.external_id == "INBOX/<plainhello@example.org>"
    assert hello.metadata["message_id"] == "<plainhello@example.org>"
    assert hello.metadata["to"] == USER
    assert hello.metadata["attachments"] == []
    assert hello.text.startswith(
        "From: Ada Lovelace <ada@example.org>\nTo: owner@example.com\n"
        "Subject: Plain hello\nDate: Mon, 30 Nov 2026 10:00:00 +0100\n\n"
    )
    assert hello.text.endswith("Hello from the plain message.\nSecond line.")

    html = items["HTML only"].text
    assert html.endswith("Quarterly numbers are in.\n\nSee the Q3 report & reply.")
    assert "alert" not in html and "color" not in html and "<" not in html.split("\n\n", 1)[1]

    alt = items["Multipart alternative"]
    assert alt.text.endswith("The plain version wins.")
    assert "HTML" not in alt.text.split("\n\n", 1)[1]
    assert alt.metadata["to"] == f"{USER}, Other <other@example.org>"
    assert "Cc: cc@example.org" in alt.text

    folder = items["In a UTF-7 folder"]
    assert folder.channel == "Équipe"
    assert folder.scope == f"channel:mail/{server.user}/Équipe"
    json.dumps([dict(i.metadata) for i in batch.items])  # JSON-ready for the store


def test_a_10_mb_attachment_is_listed_but_never_downloaded(server: Dovecot) -> None:
    ten_mb = 10 * 1024 * 1024
    append(server, with_attachment("Big", ten_mb, "<big@example.org>"))
    append(server, with_attachment("Small", 3000, "<small@example.org>"))
    big_size, small_size = message_sizes(server)
    assert big_size > ten_mb  # the server really holds the 10 MB

    conn = connector(server)
    batch = poll(conn)
    close(conn)

    items = by_subject(batch.items)
    big, small = items["Big"], items["Small"]
    assert big.text.endswith("Numbers attached; the summary is in this text.")
    assert "Attachments (not stored): data.bin (10.0 MB)" in big.text
    [listed] = big.metadata["attachments"]
    assert listed["name"] == "data.bin"
    assert abs(listed["size"] - ten_mb) < ten_mb // 100
    # Positive control: the small one was fetched whole and its size is exact.
    assert small.metadata["attachments"] == [{"name": "data.bin", "size": 3000}]
    assert small.text.endswith("Numbers attached; the summary is in this text.")
    # Everything downloaded: the small message whole plus the big one's header and text.
    assert small_size < conn.bytes_fetched < small_size + 64 * 1024
    assert len(big.text) < 1000


def test_broken_encodings_are_stored_readably(server: Dovecot) -> None:
    latin1_as_utf8 = (
        b"From: =?utf-8?q?Ren=C3=A9?= <rene@example.org>\r\n"
        b"To: owner@example.com\r\nSubject: Caf\xe9 menu\r\n"
        b"Date: Mon, 30 Nov 2026 09:00:00 +0000\r\nMessage-ID: <latin@example.org>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n\r\n"
        b"Caf\xe9 au lait \xe0 3 \x80.\r\n"
    )
    invalid_utf8 = (
        b"From: bytes@example.org\r\nTo: owner@example.com\r\nSubject: Invalid UTF-8\r\n"
        b"Date: not a date at all\r\nMessage-ID: <invalid@example.org>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\n"
        b"T0sgc3RhcnQg/8D+IGVuZA==\r\n"  # "OK start \xff\xc0\xfe end"
    )
    no_headers_at_all = b"\r\njust a body, not even a From line\r\n"
    for raw in (latin1_as_utf8, invalid_utf8, no_headers_at_all):
        append(server, raw)
    conn = connector(server)
    batch = poll(conn)
    close(conn)

    assert len(batch.items) == 3
    latin, invalid, bare = batch.items
    assert latin.author == "René <rene@example.org>"
    assert latin.metadata["subject"] == "Café menu"
    assert latin.text.endswith("Café au lait à 3 €.")
    assert invalid.text.endswith("OK start ÿÀþ end")
    assert invalid.at.tzinfo is not None  # the bad Date fell back to INTERNALDATE
    assert bare.author == "(no sender)"
    assert bare.external_id.startswith("INBOX/sha256:")
    assert bare.text.endswith("just a body, not even a From line")
    for item in batch.items:  # storable: no lone surrogates, valid JSON
        item.text.encode("utf-8")
        json.dumps(dict(item.metadata)).encode("utf-8")


def test_the_next_poll_returns_only_new_mail(server: Dovecot) -> None:
    append(server, plain("First"))
    append(server, plain("Second"))
    conn = connector(server)
    first = poll(conn)
    assert [i.metadata["subject"] for i in first.items] == ["First", "Second"]
    again = poll(conn, first.cursor)
    assert again.items == ()
    assert json.loads(again.cursor) == json.loads(first.cursor)
    append(server, plain("Third"))  # positive control: new mail does appear
    third = poll(conn, again.cursor)
    close(conn)
    assert [i.metadata["subject"] for i in third.items] == ["Third"]


def test_a_dropped_connection_is_reopened_on_the_next_poll(server: Dovecot) -> None:
    append(server, plain("Before"))
    conn = connector(server)
    first = poll(conn)
    server.kick()  # the server closes the connection the connector keeps between polls
    append(server, plain("After"))
    second = poll(conn, first.cursor)
    close(conn)
    assert [i.metadata["subject"] for i in second.items] == ["After"]


def test_a_new_account_starts_from_recent_mail(server: Dovecot) -> None:
    long_ago = datetime.now(UTC) - timedelta(days=400)
    append(server, plain("Last year"), received=long_ago)
    append(server, plain("This week"))
    recent = connector(server)
    assert [i.metadata["subject"] for i in poll(recent).items] == ["This week"]
    close(recent)
    everything = connector(server, initial_days=0)  # positive control: the old one is there
    assert [i.metadata["subject"] for i in poll(everything).items] == ["Last year", "This week"]
    close(everything)


def test_a_quiet_folder_counts_on_from_its_newest_mail(server: Dovecot) -> None:
    append(server, plain("Old only"), received=datetime.now(UTC) - timedelta(days=90))
    conn = connector(server)
    first = poll(conn)
    assert first.items == ()
    append(server, plain("New arrival"))
    second = poll(conn, first.cursor)
    close(conn)
    assert [i.metadata["subject"] for i in second.items] == ["New arrival"]


def test_reading_never_changes_flags(server: Dovecot) -> None:
    append(server, plain("Unread one"))
    append(server, plain("Already read"), flags="\\Seen")
    before = flags_by_subject(server)
    assert "\\Seen" not in before["Unread one"]
    assert "\\Seen" in before["Already read"]  # positive control: the check sees \Seen
    conn = connector(server)
    assert len(poll(conn).items) == 2
    close(conn)
    assert flags_by_subject(server) == before


def test_limit_is_respected_and_nothing_is_skipped(server: Dovecot) -> None:
    create_folder(server, "Projects")
    for n in range(6):  # two full polls: the second ends exactly at INBOX's end
        append(server, plain(f"Inbox {n}"))
    for n in range(3):
        append(server, plain(f"Project {n}"), folder="Projects")
    conn = connector(server, folders=["INBOX", "Projects"])
    seen: list[str] = []
    cursor: str | None = None
    sizes: list[int] = []
    for _ in range(10):
        batch = poll(conn, cursor, limit=3)
        sizes.append(len(batch.items))
        seen += [str(i.metadata["subject"]) for i in batch.items]
        cursor = batch.cursor
        if not batch.more:
            break
    close(conn)
    assert max(sizes) == 3 and sizes[0] == 3
    assert seen == [f"Inbox {n}" for n in range(6)] + [f"Project {n}" for n in range(3)]


def test_a_uidvalidity_change_rereads_without_duplicates(server: Dovecot) -> None:
    create_folder(server, "Projects")
    originals = [
        plain("Kickoff"),
        plain("Budget"),
        b"From: nomid@example.org\r\nSubject: No Message-ID\r\n\r\nno id here\r\n",
    ]
    for raw in originals:
        append(server, raw, folder="Projects")
    conn = connector(server, folders=["Projects"])
    first = poll(conn)
    store: dict[tuple[str, str], Item] = {(i.source, i.external_id): i for i in first.items}
    assert len(store) == 3

    # The server loses its UID map: the folder is recreated and the same mail restored.
    delete_folder(server, "Projects")
    create_folder(server, "Projects")
    for raw in originals:
        append(server, raw, folder="Projects")
    append(server, plain("After the rebuild"), folder="Projects")

    second = poll(conn, first.cursor)
    close(conn)
    old_validity = json.loads(first.cursor)["folders"]["Projects"]["uidvalidity"]
    new_validity = json.loads(second.cursor)["folders"]["Projects"]["uidvalidity"]
    assert new_validity != old_validity
    assert len(second.items) == 4  # the whole folder was read again
    fresh = [i for i in second.items if (i.source, i.external_id) not in store]
    assert [i.metadata["subject"] for i in fresh] == ["After the rebuild"]
    for item in second.items:
        store.setdefault((item.source, item.external_id), item)
    assert sorted(str(i.metadata["subject"]) for i in store.values()) == [
        "After the rebuild",
        "Budget",
        "Kickoff",
        "No Message-ID",
    ]


def test_a_wrong_password_is_an_auth_problem(server: Dovecot) -> None:
    error = problem_of(connector(server, password="wrong"))
    assert error.problem is Problem.AUTH
    assert error.owner_must_act
    assert "\n" not in str(error) and server.user in str(error)
    good = connector(server)  # positive control: the right password gets in
    assert asyncio.run(good.check()) == f"{server.user} on 127.0.0.1: INBOX 0 messages"
    close(good)


def test_a_missing_folder_is_not_found(server: Dovecot) -> None:
    error = problem_of(connector(server, folders=["Gone"]))
    assert error.problem is Problem.NOT_FOUND
    assert str(error) == "folder 'Gone' does not exist on 127.0.0.1"
    # Beside a folder that exists, it is that folder's own problem: the other is read.
    append(server, plain("Still here"))
    partly = connector(server, folders=["INBOX", "Gone"])
    batch = poll(partly)
    close(partly)
    assert [i.metadata["subject"] for i in batch.items] == ["Still here"]
    assert [(p.part, p.problem) for p in batch.problems] == [("Gone", Problem.NOT_FOUND)]
    ok = connector(server, folders=["INBOX"])  # positive control
    assert poll(ok).problems == ()
    close(ok)


def test_a_missing_secret_and_bad_options_are_config_problems(server: Dovecot) -> None:
    error = problem_of(connector(server, password=None))
    assert error.problem is Problem.CONFIG
    assert str(error).startswith(f"no password for {server.user} in the keyring")
    with pytest.raises(ConnectorError) as bad:
        build("x", {"host": "h", "username": "u", "folders": []}, keyring())
    assert bad.value.problem is Problem.CONFIG
    assert str(bad.value).startswith("mail option folders:")
    with pytest.raises(ConnectorError) as unknown:
        build("x", {"host": "h", "username": "u", "tls": False}, keyring())
    assert unknown.value.problem is Problem.CONFIG  # there is no way to turn TLS off
    no_ca = problem_of(connector(server, ca_file=str(server.root / "missing.pem")))
    assert no_ca.problem is Problem.CONFIG
    assert str(no_ca).startswith("ca_file ") and "missing.pem" in str(no_ca)


def test_an_untrusted_certificate_or_closed_port_is_unavailable(server: Dovecot) -> None:
    options = server.options()
    del options["ca_file"]  # the system's CAs do not know the test CA
    untrusted = build("m", options, keyring())
    error = problem_of(untrusted)
    assert error.problem is Problem.UNAVAILABLE
    assert "not trusted" in str(error)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    error = problem_of(connector(server, port=closed_port))
    assert error.problem is Problem.UNAVAILABLE
    assert str(error).startswith(f"cannot reach 127.0.0.1:{closed_port} over TLS")


def test_a_plain_text_server_never_sees_the_password() -> None:
    """A server that speaks IMAP without TLS gets a TLS handshake, never a LOGIN."""
    received = bytearray()
    done = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] plain server ready\r\n")
            conn.settimeout(5)
            try:
                while chunk := conn.recv(4096):
                    received.extend(chunk)
                    conn.sendall(b"* OK still plain\r\n")
            except OSError:
                pass
        done.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    conn = build("m", {"host": "127.0.0.1", "port": port, "username": USER}, keyring("s3cret-pass"))
    error = problem_of(conn)
    assert done.wait(10)
    listener.close()
    assert error.problem is Problem.UNAVAILABLE
    assert received  # positive control: the client did talk to it ...
    assert b"s3cret-pass" not in received and b"LOGIN" not in received.upper()
    assert received[0] == 0x16  # ... and what it sent was a TLS handshake record


def test_long_text_is_cut_with_a_marker(server: Dovecot) -> None:
    append(server, plain("Long", "word " * 1000))
    append(server, plain("Short", "word " * 10))
    conn = connector(server, max_text_chars=200)
    items = by_subject(poll(conn).items)
    close(conn)
    body = items["Long"].text.split("\n\n", 1)[1]
    assert body.startswith("word word") and len(body) < 260
    assert body.endswith("\n[... 4799 more characters not kept]")
    assert items["Short"].text.endswith("word " * 9 + "word")  # positive control: not cut


def test_xoauth2_logs_in_with_the_token_from_the_keyring(server: Dovecot) -> None:
    only_password = build("m", server.options(auth="xoauth2"), keyring())
    error = problem_of(only_password)
    assert error.problem is Problem.CONFIG
    assert str(error).startswith(f"no oauth token for {server.user} in the keyring")

    revoked = build("m", server.options(auth="xoauth2"), lambda key: "revoked-token")
    assert problem_of(revoked).problem is Problem.AUTH

    append(server, plain("Via OAuth2"))  # positive control: a valid token reads mail
    token = oauth_token(server.user)
    good = build(
        "m", server.options(auth="xoauth2"), lambda k: token if k == "oauth_token" else None
    )
    assert [i.metadata["subject"] for i in poll(good).items] == ["Via OAuth2"]
    close(good)
