"""How fast the mail connector reads: messages per second from a real Dovecot to items.

    python -m bench.mail_read [--messages 2000] [--limit 500]

Starts the tests' throwaway Dovecot (TLS on 127.0.0.1, ``tests/app/connectors``),
APPENDs ``--messages`` varied emails (plain, HTML-only, multipart/alternative, one
with a small attachment, in turn), then polls the connector from an empty cursor
with ``--limit`` per poll until it says there is no more. Reported: polls, items,
seconds, messages per second (IMAP round trips + TLS + parsing + item building; the
runtime's storage is not included), and bytes fetched. The APPEND time is not
counted. Needs ``dovecot`` (Debian ``dovecot-imapd``).
"""

from __future__ import annotations

import argparse
import asyncio
import imaplib
import time
from email.message import EmailMessage

from app.connectors.base import Item
from app.connectors.mail import build
from tests.app.connectors.dovecot_server import PASSWORD, running_dovecot


def message(n: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"Sender {n % 37} <sender{n % 37}@example.org>"
    msg["To"] = "owner@example.com"
    msg["Subject"] = f"Status update {n}: the {['api', 'ui', 'ops', 'docs'][n % 4]} track"
    msg["Date"] = f"Mon, 30 Nov 2026 {n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d} +0000"
    msg["Message-ID"] = f"<bench-{n}@example.org>"
    body = f"Message {n}. " + "We shipped the change and the numbers look fine. " * (5 + n % 20)
    kind = n % 4
    if kind == 1:
        msg.set_content(
            f"<html><body><p>{body}</p><a href='https://x'>link</a></body></html>", subtype="html"
        )
    else:
        msg.set_content(body)
        if kind == 2:
            msg.add_alternative(f"<p>{body}</p>", subtype="html")
        elif kind == 3:
            msg.add_attachment(
                b"x" * 2048, maintype="application", subtype="pdf", filename=f"report-{n}.pdf"
            )
    return msg.as_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description="Mail connector read speed from Dovecot.")
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=500)
    args = parser.parse_args()

    with running_dovecot() as server:
        started = time.perf_counter()
        imap = imaplib.IMAP4_SSL(server.host, server.port, ssl_context=server.ssl_context())
        imap.login(server.user, PASSWORD)
        for n in range(args.messages):
            imap.append("INBOX", None, None, message(n))
        imap.logout()
        appended = time.perf_counter() - started

        connector = build("bench", server.options(), lambda key: PASSWORD)

        async def read_all() -> tuple[list[Item], int, float]:
            items: list[Item] = []
            cursor: str | None = None
            polls = 0
            t0 = time.perf_counter()
            while True:
                batch = await connector.poll(cursor, args.limit)
                polls += 1
                items.extend(batch.items)
                cursor = batch.cursor
                if not batch.more:
                    break
            elapsed = time.perf_counter() - t0
            await connector.aclose()
            return items, polls, elapsed

        items, polls, elapsed = asyncio.run(read_all())

    assert len(items) == args.messages, (len(items), args.messages)
    assert len({i.external_id for i in items}) == args.messages
    print(f"appended {args.messages} messages in {appended:.1f} s (not counted)")
    print(
        f"read {len(items)} messages in {polls} polls (limit {args.limit}): {elapsed:.2f} s, "
        f"{len(items) / elapsed:.0f} messages/s, {connector.bytes_fetched / 1e6:.1f} MB fetched"
    )


if __name__ == "__main__":
    main()
