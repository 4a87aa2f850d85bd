"""Refuse secret-shaped strings in recallable writes.

detect-secrets' pattern plugins (AWS, GitHub, Slack, Stripe, JWT, private keys,
…) plus our own patterns for what it lacks (Anthropic, OpenAI without the
legacy marker, Google API keys, bearer headers, passwords in URLs, keyed
assignments of random-looking values). Its entropy and keyword plugins are
left out: on prose they refuse ordinary sentences. A finding names the pattern
and the field, never the value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

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
    ("Stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}")),
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
            r"aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
            re.IGNORECASE,
        ),
    ),
    ("Azure connection string", re.compile(r"AccountKey=[A-Za-z0-9+/=]{40,}", re.IGNORECASE)),
)

_ASSIGNMENT = re.compile(
    rf"(?:{_KEY_WORDS})[\"'\]]*\s*(?:=|:=|:|=>)\s*[\"'`]?([^\s\"'`,;]{{8,}})",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SecretFinding:
    """Where a secret shape was seen: the pattern's name and the field path."""

    pattern: str
    field: str


def find_secret(text: str) -> str | None:
    """The name of the first secret pattern ``text`` matches, or None."""
    for name, pattern in _OWN_PATTERNS:
        if pattern.search(text):
            return name
    for plugin in _PLUGINS:
        for _ in plugin.analyze_string(text):
            return str(plugin.secret_type)
    for match in _ASSIGNMENT.finditer(text):
        if _looks_random(match.group(1)):
            return "credential assignment"
    return None


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
        for key, item in value.items():
            key_name = find_secret(str(key))
            if key_name is not None:  # never put a secret-shaped key into the path
                yield SecretFinding(key_name, f"{path}.<key>" if path else "<key>")
                continue
            yield from scan_value(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
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
