"""Refuse secret-shaped strings in recallable writes.

detect-secrets' pattern plugins (AWS, GitHub, Slack, Stripe, JWT, private keys,
…) plus our own patterns for what it lacks (Anthropic, OpenAI without the
legacy marker, Google API keys, Slack app tokens, Stripe webhook secrets, npm,
Vault, age, Sentry DSNs, Linear, Notion, Atlassian, bearer headers, passwords in
URLs, keyed assignments of random-looking values, passwords and AWS keys stated
in prose). Its entropy and keyword plugins are left out: on prose they refuse
ordinary sentences. A text is also scanned as it would read with zero-width
characters removed, URL-decoded and with its base64 runs decoded, so the
simple disguises of a token do not pass. A finding names the pattern and the
field, never the value.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from mama_core.memory.errors import SecretRefusedError

_PLUGINS: tuple[RegexBasedDetector, ...] = (
    AWSKeyDetector(),
    ArtifactoryDetector(),
    AzureStorageKeyDetector(),
    BasicAuthDetector(),
    DiscordBotTokenDetector(),
    GitHubTokenDetector(),
    GitLabTokenDetector(),
    JwtTokenDetector(),
    MailchimpDetector(),
    NpmDetector(),
    OpenAIDetector(),
    PrivateKeyDetector(),
    PypiTokenDetector(),
    SendGridDetector(),
    SlackDetector(),
    SquareOAuthDetector(),
    StripeDetector(),
    TelegramBotTokenDetector(),
    TwilioKeyDetector(),
)

_KEY_WORDS = (
    r"api[_-]?key|apikey|access[_-]?key|secret[_-]?key|secret|client[_-]?secret|"
    r"auth[_-]?token|access[_-]?token|refresh[_-]?token|token|password|passwd|pwd|"
    r"private[_-]?key|credentials?"
)

_OWN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Google OAuth token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    (
        "Slack webhook URL",
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"
        ),
    ),
    # Secret and restricted keys only: publishable keys (pk_) are meant to be public.
    ("Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("Stripe webhook secret", re.compile(r"\bwhsec_[A-Za-z0-9+/=]{24,}")),
    ("Slack app token", re.compile(r"\bxapp-\d-[A-Za-z0-9-]{20,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    ("Vault token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}")),
    ("age secret key", re.compile(r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b")),
    (
        "Sentry DSN",
        re.compile(r"\bhttps?://[0-9a-f]{32}(?::[0-9a-f]{32})?@[A-Za-z0-9.-]+(?::\d+)?/[\w./-]*\d"),
    ),
    ("Linear API key", re.compile(r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}")),
    (
        "Notion token",
        re.compile(
            r"\b(?:secret_(?=[A-Za-z]*\d)[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})(?![A-Za-z0-9_])"
        ),
    ),
    ("Atlassian API token", re.compile(r"\bAT(?:ATT|CTT)3[A-Za-z0-9_=-]{40,}")),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("Shopify token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}")),
    ("DigitalOcean token", re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}")),
    ("SendGrid key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("Telegram bot token", re.compile(r"\b\d{8,10}:[A-Za-z0-9_-]{35}\b")),
    ("private key block", re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----")),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    (
        "authorization header",
        re.compile(r"Authorization:\s*(?:Bearer|Basic|Token|Digest)\s+[^\s\"']{8,}", re.IGNORECASE),
    ),
    ("bearer token", re.compile(r"\bBearer\s+(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{20,}")),
    ("password in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s:/@]+@[^\s/]+")),
    (
        "AWS secret access key",
        re.compile(
            r"aws.{0,20}?(?:secret|key).{0,20}?(?:[=:]|\b(?:is|was)\b)\s*[\"']?"
            r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
            re.IGNORECASE,
        ),
    ),
    ("Azure connection string", re.compile(r"AccountKey=[A-Za-z0-9+/=]{40,}", re.IGNORECASE)),
)

_ASSIGNMENT = re.compile(
    rf"(?:{_KEY_WORDS})[\"'\]]*\s*(?:=|:=|:|=>)\s*[\"'`]?([^\s\"'`,;]{{8,}})",
    re.IGNORECASE,
)


_PROSE_PASSWORD = re.compile(
    r"\b(?:password|passphrase|passwd|passcode|pin(?:\s+code)?)\s+(?:is|was)\s*:?\s*"
    r"([\"'`\u2018\u201c]?)([^\s\"'`\u2019\u201d]{4,})",
    re.IGNORECASE,
)
""""the password is hunter2!": a password stated in words, not assigned."""

_DISGUISES = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""Zero-width, soft-hyphen and direction marks: invisible, so they can split a token."""
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True)
class SecretFinding:
    """Where a secret shape was seen: the pattern's name and the field path."""

    pattern: str
    field: str


def find_secret(text: str) -> str | None:
    """The name of the first secret pattern ``text`` matches, or None.

    ``text`` is scanned as written, then as it reads without invisible marks,
    URL-decoded, and with each base64 run decoded (one level: a decoded run is
    not decoded again).
    """
    for variant in _variants(text):
        found = _find_plain(variant)
        if found is not None:
            return found
    for run in _BASE64_RUN.findall(text):
        decoded = _decode_base64(run)
        if decoded is not None:
            found = _find_plain(decoded)
            if found is not None:
                return f"{found} (base64-encoded)"
    return None


def _variants(text: str) -> Iterator[str]:
    """``text``, then what it reads as with invisible marks dropped and URL-decoded."""
    yield text
    seen = {text}
    visible = _DISGUISES.sub("", text)
    candidates = [visible]
    if _PERCENT.search(visible):
        candidates.append(urllib.parse.unquote(visible))
    for candidate in candidates:
        if candidate not in seen:
            seen.add(candidate)
            yield candidate


def _decode_base64(run: str) -> str | None:
    """``run`` decoded as (URL-safe) base64 if that gives printable text, else None."""
    padded = run + "=" * (-len(run.rstrip("=")) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in decoded)
    if len(decoded) < 16 or printable < len(decoded):
        return None
    return decoded


def _find_plain(text: str) -> str | None:
    for name, pattern in _OWN_PATTERNS:
        if pattern.search(text):
            return name
    for plugin in _PLUGINS:
        for _ in plugin.analyze_string(text):
            return str(plugin.secret_type)
    for match in _ASSIGNMENT.finditer(text):
        if _looks_random(match.group(1)):
            return "credential assignment"
    for match in _PROSE_PASSWORD.finditer(text):
        if _stated_password(match.group(2), quoted=bool(match.group(1))):
            return "password stated in prose"
    return None


def _stated_password(value: str, *, quoted: bool) -> bool:
    """Whether the word after "the password is" is a password, not more prose.

    A quoted value, or one with a digit or a symbol inside it, is taken as a
    password ("hunter2!", "'correct-horse-battery-9'", a PIN "4821"); a plain
    word ("stored", "required", "at") is prose about passwords.
    """
    value = value.rstrip(".,;:!?)")
    if len(value) < 4:
        return False
    if quoted:
        return True
    return bool(re.search(r"\d", value) or re.search(r"[^A-Za-z0-9\-]", value))


def _looks_random(value: str) -> bool:
    """A value that is plausibly a generated credential, not a word or a placeholder."""
    if len(value) < 8 or value.lower() in {"password", "changeme", "redacted", "xxxxxxxx"}:
        return False
    if re.fullmatch(r"[<{$%(\[].*|\*+|x+|\.+", value, re.IGNORECASE) or re.search(r"[(\[{]", value):
        return False  # a placeholder, a template or code (``os.environ[...]``, ``getpass()``)
    classes = sum(
        bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]")
    )
    return classes >= 2 and (_entropy(value) >= 3.0 or len(value) >= 16)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def scan_value(value: Any, path: str = "") -> Iterator[SecretFinding]:
    """Every secret finding among the strings (and dict keys) inside ``value``."""
    if isinstance(value, str):
        name = find_secret(value)
        if name is not None:
            yield SecretFinding(name, path or "(value)")
    elif isinstance(value, dict):
        for key, item in cast(dict[Any, Any], value).items():
            key_name = find_secret(str(key))
            if key_name is not None:  # never put a secret-shaped key into the path
                yield SecretFinding(key_name, f"{path}.<key>" if path else "<key>")
                continue
            yield from scan_value(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(cast(list[Any] | tuple[Any, ...], value)):
            yield from scan_value(item, f"{path}[{index}]")


def refuse_secrets(
    payload: dict[str, Any], skip: frozenset[str] = frozenset({"command_id"})
) -> None:
    """Raise ``secret_refused`` if any string in ``payload`` looks like a secret."""
    for key, value in payload.items():
        if key in skip:
            continue
        for finding in scan_value(value, key):
            raise SecretRefusedError(
                f"Refused: field '{finding.field}' contains something shaped like a secret "
                f"({finding.pattern}). Secrets are never stored in memory; remove it and retry.",
                details={"pattern": finding.pattern, "field": finding.field},
            )
