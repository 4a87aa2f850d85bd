"""A real Dovecot IMAP server on 127.0.0.1 for tests and the mail benchmark.

Throwaway config in a fresh directory: static passdb (any user, one known password)
plus an oauth2 passdb (XOAUTH2) against a fake RFC 7662 introspection endpoint here,
maildir storage, ``ssl = required`` with a CA and server certificate generated here,
implicit TLS on a free port, logs to a file. Run as root (CI), Dovecot's login
processes need an unprivileged user (Debian's ``dovenull``) and mail may not be owned
by uid 0, so the mail lives with ``nobody``; run as a normal user, everything is that
user's. Nothing touches the system's Dovecot config.
"""

from __future__ import annotations

import datetime as dt
import grp
import ipaddress
import json
import os
import pwd
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

USER = "owner@example.com"
PASSWORD = "correct-horse-battery-staple"
TOKEN_PREFIX = "test-oauth2-token-for:"


def oauth_token(user: str) -> str:
    """An OAuth2 access token the fake introspection endpoint accepts for ``user``."""
    return TOKEN_PREFIX + user


class _Introspection(BaseHTTPRequestHandler):
    """RFC 7662 token introspection, as Dovecot's oauth2 passdb asks it (POST token=...)."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        form = parse_qs(self.rfile.read(length).decode())
        token = (form.get("token") or [""])[0]
        if token.startswith(TOKEN_PREFIX):
            answer = {"active": "true", "username": token.removeprefix(TOKEN_PREFIX)}
        else:
            answer = {"active": "false"}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


def dovecot_binary() -> str | None:
    """The dovecot executable (Debian puts it in /usr/sbin, often not on PATH)."""
    return shutil.which("dovecot") or shutil.which("dovecot", path="/usr/sbin:/usr/local/sbin")


@dataclass(frozen=True)
class Dovecot:
    host: str
    port: int
    ca_file: str
    root: Path
    log: Path
    user: str = USER
    pid: int = 0
    """Dovecot's master process (its login, imap and auth processes are its children)."""

    def kick(self) -> None:
        """Disconnect this account's sessions, as a server does to idle clients."""
        doveadm = shutil.which("doveadm") or "/usr/bin/doveadm"
        subprocess.run(
            [doveadm, "-c", str(self.root / "dovecot.conf"), "kick", self.user],
            check=True,
            capture_output=True,
            timeout=30,
        )

    def cpu_seconds(self) -> float:
        """Dovecot's CPU time so far (user + system), from ``/proc``: every live process
        under the master, the master included, with the children each has reaped
        (an imap process that ended is in the master's ``cutime``)."""
        return process_tree_cpu_seconds(self.pid)

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.ca_file)

    def options(self, **extra: object) -> dict[str, object]:
        """Connector options for the test account."""
        return {
            "host": self.host,
            "port": self.port,
            "username": self.user,
            "ca_file": self.ca_file,
            **extra,
        }


def process_tree_cpu_seconds(root_pid: int) -> float:
    """CPU seconds of ``root_pid`` and its descendants, each with its reaped children's
    (``utime + stime + cutime + cstime`` of every live process in the tree, so an ended
    child counts once, in its parent's). Linux only."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:  # ended while we looked
            continue
        # the fields after "(comm)"; comm may hold spaces and parentheses
        stats[int(entry.name)] = raw[raw.rindex(")") + 2 :].split()
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    ticks, pending = 0, [root_pid]
    while pending:
        pid = pending.pop()
        fields = stats.get(pid)
        if fields is None:
            continue
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        pending.extend(children.get(pid, []))
    return ticks / os.sysconf("SC_CLK_TCK")


def _write_certificates(root: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1/localhost signed by it."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "MAMA test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = root / "ca.pem", root / "cert.pem", root / "key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_file.chmod(0o600)
    return ca_file, cert_file, key_file


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _users() -> tuple[str, str, int, int]:
    """(login user, internal user, mail uid, mail gid) for the current identity."""
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid()).pw_name
        return me, me, os.geteuid(), os.getegid()
    nobody = pwd.getpwnam("nobody")
    return "dovenull", "dovecot", nobody.pw_uid, nobody.pw_gid


@contextmanager
def running_dovecot(timeout: float = 20.0) -> Iterator[Dovecot]:
    """Start Dovecot in the foreground; stop it and remove its directory afterwards."""
    binary = dovecot_binary()
    if binary is None:
        raise RuntimeError("dovecot is not installed (Debian: dovecot-imapd)")
    # Not under pytest's tmp_path: as root, that is mode 0700 and the unprivileged
    # login and mail processes could not reach their sockets and maildir.
    root = Path(tempfile.mkdtemp(prefix="mama-dovecot-"))
    root.chmod(0o755)
    process: subprocess.Popen[bytes] | None = None
    introspection = ThreadingHTTPServer(("127.0.0.1", 0), _Introspection)
    threading.Thread(target=introspection.serve_forever, daemon=True).start()
    try:
        ca_file, cert_file, key_file = _write_certificates(root)
        login_user, internal_user, uid, gid = _users()
        internal_group = grp.getgrgid(pwd.getpwnam(internal_user).pw_gid).gr_name
        maildir = root / "mail"
        maildir.mkdir()
        os.chown(maildir, uid, gid)
        for sub in ("run", "state"):
            (root / sub).mkdir()
        port = _free_port()
        oauth2 = root / "oauth2.conf.ext"
        oauth2.write_text(
            "introspection_mode = post\n"
            f"introspection_url = http://127.0.0.1:{introspection.server_address[1]}/introspect\n"
            "force_introspection = yes\n"
            "username_attribute = username\n"
            "active_attribute = active\n"
            "active_value = true\n"
        )
        log = root / "dovecot.log"
        config = root / "dovecot.conf"
        config.write_text(
            f"""
base_dir = {root}/run
state_dir = {root}/state
log_path = {log}
protocols = imap
listen = 127.0.0.1
ssl = required
ssl_cert = <{cert_file}
ssl_key = <{key_file}
ssl_min_protocol = TLSv1.2
auth_mechanisms = plain login xoauth2 oauthbearer
auth_failure_delay = 0
stats_writer_socket_path =
default_internal_user = {internal_user}
default_internal_group = {internal_group}
default_login_user = {login_user}
first_valid_uid = 1
mail_location = maildir:{maildir}/%u
passdb {{
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = {oauth2}
}}
passdb {{
  # Any user name with the known password: each test takes a fresh, empty account.
  driver = static
  args = password={PASSWORD}
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={maildir}/%u
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    port = 0
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {port}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
  # No growing delay after a failed login: the wrong-password test would wait for it.
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
"""
        )
        with (root / "stderr.log").open("wb") as stderr:
            process = subprocess.Popen(
                [binary, "-F", "-c", str(config)], stdout=subprocess.DEVNULL, stderr=stderr
            )
        _wait_for_port(port, process, root, timeout)
        yield Dovecot("127.0.0.1", port, str(ca_file), root, log, pid=process.pid)
    finally:
        introspection.shutdown()
        introspection.server_close()
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(root, ignore_errors=True)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], root: Path, timeout: float) -> None:
    """Wait until the server accepts connections (or has died, with its log as the reason)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                "dovecot exited: " + (root / "stderr.log").read_text(errors="replace")[-2000:]
            )
        try:
            # A whole TLS greeting, not a bare connect: a login process left waiting on
            # a half-open connection makes Dovecot's shutdown take seconds.
            context = ssl.create_default_context(cafile=str(root / "ca.pem"))
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.recv(1024)
                    tls.sendall(b"a LOGOUT\r\n")
                    tls.recv(1024)
                return
        except OSError:
            # Not listening yet: block on the process briefly instead of spinning.
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)
    raise RuntimeError(f"dovecot did not listen on port {port} within {timeout} s")
