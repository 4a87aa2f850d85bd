"""Vendor token formats: detect-secrets' maintained plugins plus our rule file.

detect-secrets (Yelp, Apache-2.0, pinned in pyproject) brings its regex
plugins; every one of them runs except ``ip_public`` (an address is not a
secret); a test fails when an upgrade brings a plugin this list lacks. Its
keyword and high-entropy plugins stay off: they are tuned for source code and
refuse ordinary sentences; the generic detection in
:mod:`mama_core.memory.secret_generic` takes their place. ``secret_rules.toml``
(shipped as package data, read once, never fetched) holds the vendor formats
detect-secrets does not know.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from mama_core.memory.secret_text import Joined

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
SKIPPED_PLUGINS = frozenset({"Public IP (ipv4)"})
"""detect-secrets regex plugins left out: an address is not a secret."""


@dataclass(frozen=True)
class Rule:
    """One vendor format: a kind a person understands and its pattern."""

    kind: str
    pattern: re.Pattern[str]
    prefixed: bool
    """Starts with a literal prose does not hold: also tried on the whitespace-free reading."""
    literal: str = ""
    """The text every match starts with ('' if none): a text without it cannot match."""

    def found_in(self, text: str) -> bool:
        """Whether the pattern matches at a left edge (no letter or digit just before).

        The edge is checked here, not with a look-behind, so that ``re`` can
        still jump to the rule's literal prefix. A text without that prefix is
        passed over before ``re`` is asked: most rules have one, and a save scans
        a few readings of each field against every rule.
        """
        if self.literal not in text:
            return False
        return any(
            match.start() == 0 or text[match.start() - 1] not in _WORD_CHARS
            for match in self.pattern.finditer(text)
        )


@cache
def rules() -> tuple[Rule, ...]:
    """The rules of ``secret_rules.toml``, compiled."""
    raw = resources.files("mama_core.memory").joinpath("secret_rules.toml").read_text("utf-8")
    loaded: list[Rule] = []
    for entry in tomllib.loads(raw)["rule"]:
        pattern = re.compile(str(entry["regex"]))
        prefixed = bool(entry.get("prefixed", False))
        loaded.append(Rule(str(entry["kind"]), pattern, prefixed, literal_prefix(pattern)))
    return tuple(loaded)


def literal_prefix(pattern: re.Pattern[str]) -> str:
    """The literal characters every match of ``pattern`` starts with ('' if none,
    or if the pattern ignores case), read from ``re``'s own parse of it."""
    if pattern.flags & re.IGNORECASE:
        return ""
    try:  # re's own parser (private, untyped): a parse error or change means no prefix
        parsed: list[tuple[Any, Any]] = list(
            importlib.import_module("re._parser").parse(pattern.pattern)
        )
        literal: Any = importlib.import_module("re._constants").LITERAL
    except Exception:
        return ""
    out: list[str] = []
    for op, value in parsed:
        if op is not literal or not isinstance(value, int):
            break
        out.append(chr(value))
    return "".join(out)


@cache
def plugins() -> tuple[RegexBasedDetector, ...]:
    """detect-secrets' regex plugins (all but the public-IP one).

    Imported at the first scan, not with the engine: detect-secrets brings requests,
    urllib3 and python-stdnum (~15 MB), which a tray that only idles never needs."""
    from detect_secrets.plugins.artifactory import ArtifactoryDetector
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
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

    return (
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


def vendor_kind(text: str) -> str | None:
    """The kind of the first vendor format found in ``text``, or None."""
    for rule in rules():
        if rule.found_in(text):
            return rule.kind
    for plugin in plugins():
        for _ in plugin.analyze_string(text):
            return str(plugin.secret_type)
    return None


def prefixed_kind(joined: Joined) -> str | None:
    """The kind of a prefixed vendor token starting at a word start of ``joined``."""
    kinds, combined = _prefixed()
    for start in joined.candidate_starts():
        match = combined.match(joined.text, start, joined.token_run_end(start))
        if match is not None:
            return kinds[match.lastgroup or ""]
    return None


@cache
def _prefixed() -> tuple[dict[str, str], re.Pattern[str]]:
    """The prefixed rules as one pattern (one C-level match per word start)."""
    loose = [rule for rule in rules() if rule.prefixed]
    kinds = {f"r{index}": rule.kind for index, rule in enumerate(loose)}
    sources = [f"(?P<r{index}>{rule.pattern.pattern})" for index, rule in enumerate(loose)]
    return kinds, re.compile("|".join(sources))
