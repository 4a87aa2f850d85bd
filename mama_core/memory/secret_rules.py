"""Vendor token formats: detect-secrets' maintained plugins plus our rule file.

detect-secrets (Yelp, Apache-2.0, pinned in pyproject) brings its regex
plugins; every one of them runs except ``ip_public`` (an address is not a
secret); a test fails when an upgrade brings a plugin this list lacks. Its keyword and high-entropy plugins stay off: they are tuned for
source code and refuse ordinary sentences; the generic detection in
:mod:`mama_core.memory.secret_generic` takes their place. ``secret_rules.toml``
(shipped as package data, read once, never fetched) holds the vendor formats
detect-secrets does not know.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from mama_core.memory.secret_text import Joined

_LEFT_EDGE = r"(?<![A-Za-z0-9])"
SKIPPED_PLUGINS = frozenset({"Public IP (ipv4)"})
"""detect-secrets regex plugins left out: an address is not a secret."""
_PLUGINS: tuple[RegexBasedDetector, ...] = (
    # Imported by name, not discovered: a frozen bundle must see every import.
    ArtifactoryDetector(),
    AWSKeyDetector(),
    AzureStorageKeyDetector(),
    BasicAuthDetector(),
    CloudantDetector(),
    DiscordBotTokenDetector(),
    GitHubTokenDetector(),
    GitLabTokenDetector(),
    IbmCloudIamDetector(),
    IbmCosHmacDetector(),
    JwtTokenDetector(),
    MailchimpDetector(),
    NpmDetector(),
    OpenAIDetector(),
    PrivateKeyDetector(),
    PypiTokenDetector(),
    SendGridDetector(),
    SlackDetector(),
    SoftlayerDetector(),
    SquareOAuthDetector(),
    StripeDetector(),
    TelegramBotTokenDetector(),
    TwilioKeyDetector(),
)


@dataclass(frozen=True)
class Rule:
    """One vendor format: a kind a person understands and its pattern."""

    kind: str
    pattern: re.Pattern[str]
    loose: re.Pattern[str] | None
    """The pattern without its left edge, for the whitespace-free reading (prefixed rules)."""


@cache
def rules() -> tuple[Rule, ...]:
    """The rules of ``secret_rules.toml``, compiled."""
    raw = resources.files("mama_core.memory").joinpath("secret_rules.toml").read_text("utf-8")
    loaded: list[Rule] = []
    for entry in tomllib.loads(raw)["rule"]:
        source = str(entry["regex"])
        loose = re.compile(source) if entry.get("prefixed", False) else None
        loaded.append(Rule(str(entry["kind"]), re.compile(_LEFT_EDGE + source), loose))
    return tuple(loaded)


def plugins() -> tuple[RegexBasedDetector, ...]:
    """detect-secrets' regex plugins (all but the public-IP one)."""
    return _PLUGINS


def vendor_kind(text: str) -> str | None:
    """The kind of the first vendor format found in ``text``, or None."""
    for rule in rules():
        if rule.pattern.search(text):
            return rule.kind
    for plugin in plugins():
        for _ in plugin.analyze_string(text):
            return str(plugin.secret_type)
    return None


def prefixed_kind(joined: Joined) -> str | None:
    """The kind of a prefixed vendor token starting at a word start of ``joined``."""
    loose = [rule for rule in rules() if rule.loose is not None]
    for start in joined.starts:
        for rule in loose:
            assert rule.loose is not None
            if rule.loose.match(joined.text, start):
                return rule.kind
    return None
