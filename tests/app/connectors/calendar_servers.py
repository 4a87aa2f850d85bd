"""Real servers for the calendar connector's tests: Radicale (a CalDAV server from PyPI)
started in a temporary folder on a free port, and a plain HTTP server handing out an
``.ics`` file with an ETag (as Google's secret address does)."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

PASSWORD = "radicale-test-password"
USERS = 50
"""Accounts in the throwaway htpasswd file: each test takes a fresh one of one server."""


@dataclass
class Account:
    """One user of the server: the fixture PUTs and DELETEs its events with plain HTTP."""

    url: str
    user: str
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.url, auth=(self.user, PASSWORD), timeout=30)

    def make_calendar(self, slug: str, name: str) -> str:
        """A new calendar collection (MKCALENDAR) with display name ``name``; its path."""
        path = f"/{self.user}/{slug}/"
        body = (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
            f"<D:set><D:prop><D:displayname>{name}</D:displayname></D:prop></D:set>"
            "</C:mkcalendar>"
        )
        response = self.client.request(
            "MKCALENDAR", path, content=body, headers={"Content-Type": "application/xml"}
        )
        assert response.status_code == 201, response.text
        return path

    def put(self, calendar: str, uid: str, ics: str) -> None:
        response = self.client.put(
            f"{calendar}{uid}.ics", content=ics, headers={"Content-Type": "text/calendar"}
        )
        assert response.status_code in (201, 204), response.text

    def delete(self, calendar: str, uid: str) -> None:
        response = self.client.delete(f"{calendar}{uid}.ics")
        assert response.status_code in (200, 204), response.text

    def close(self) -> None:
        self.client.close()


@dataclass
class Radicale:
    """A running Radicale with ``USERS`` accounts, handed out one by one."""

    url: str
    root: Path
    taken: int = 0
    accounts: list[Account] = field(default_factory=list)

    def account(self) -> Account:
        self.taken += 1
        assert self.taken <= USERS, "more accounts than the htpasswd file holds"
        account = Account(self.url, f"user{self.taken}")
        self.accounts.append(account)
        return account

    def requests(self, user: str, methods: tuple[str, ...]) -> int:
        """Requests by anyone with one of ``methods`` under ``user``'s collections, as
        Radicale logged them."""
        log = (self.root / "radicale.log").read_text(errors="replace")
        return sum(
            1
            for line in log.splitlines()
            if any(f"{m} request for '/{user}/" in line for m in methods)
        )

    def writes(self, user: str) -> int:
        """Requests that change something under ``user``'s collections."""
        return self.requests(user, WRITES)

    def close(self) -> None:
        for account in self.accounts:
            account.close()


WRITES = ("PUT", "DELETE", "PROPPATCH", "MKCALENDAR", "MKCOL", "MOVE", "COPY", "POST")


@contextmanager
def running_radicale(root: Path, timeout: float = 30.0) -> Iterator[Radicale]:
    """Radicale with a throwaway config (htpasswd, plain) in ``root``, on a free port."""
    port = _free_port()
    (root / "users").write_text("".join(f"user{i}:{PASSWORD}\n" for i in range(1, USERS + 1)))
    config = root / "config"
    config.write_text(
        f"""
[server]
hosts = 127.0.0.1:{port}
[auth]
type = htpasswd
htpasswd_filename = {root / "users"}
htpasswd_encryption = plain
delay = 0
[storage]
filesystem_folder = {root / "collections"}
[logging]
level = info
"""
    )
    log = root / "radicale.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "radicale", "--config", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_listening(port, process, log, timeout)
        server = Radicale(f"http://127.0.0.1:{port}", root)
        try:
            yield server
        finally:
            server.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """Wait until Radicale accepts connections (or has died, with its log as the reason)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("radicale exited: " + log.read_text(errors="replace")[-2000:])
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                return
        except OSError:
            # Not listening yet: block on the process briefly instead of spinning.
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)
    raise RuntimeError(f"radicale did not listen on port {port} within {timeout} s")


class IcsFile:
    """An ``.ics`` document served on 127.0.0.1 at a secret-looking path, with an ETag
    (``If-None-Match`` answered ``304``); counts full and not-modified answers."""

    SECRET_PATH = "/calendar/ical/anna%40corp.example/private-5ecret/basic.ics"

    def __init__(self, text: str) -> None:
        self.text = text
        self.full = 0
        self.not_modified = 0
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != served.SECRET_PATH:
                    self.send_response(404)
                    self.end_headers()
                    return
                body = served.text.encode()
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    served.not_modified += 1
                    self.send_response(304)
                    self.end_headers()
                    return
                served.full += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/calendar; charset=utf-8")
                self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.SECRET_PATH}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
