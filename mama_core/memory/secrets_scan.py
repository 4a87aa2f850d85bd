"""Refuse secret-shaped strings in recallable writes.

What is refused, and on whose authority:

* vendor token formats: detect-secrets' maintained regex plugins plus the
  formats in ``secret_rules.toml`` (see :mod:`mama_core.memory.secret_rules`);
* payment card numbers (Luhn) and IBANs (mod 97), validated with
  ``python-stdnum`` so look-alike numbers pass
  (:mod:`mama_core.memory.secret_numbers`);
* passwords stated in prose in English, German, French, Spanish, Portuguese,
  Italian, Dutch, Korean, Japanese and Chinese (:mod:`mama_core.memory.secret_prose`);
* shapes no rule names: a credential word assigned a generated value, a
  vendor-style prefix with a random tail, a long high-entropy token
  (:mod:`mama_core.memory.secret_generic`).

A text is read as written, after NFKC and homoglyph folding, with its
whitespace removed (for prefixed tokens split across spaces or lines) and with
its URL, hex and base64 runs decoded (:mod:`mama_core.memory.secret_text`). A
finding names the kind of secret and the field, never the value.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from mama_core.errors import SecretRefusedError
from mama_core.json_types import JsonObject
from mama_core.memory.secret_generic import keyed_assignment, prefixed_token, random_token
from mama_core.memory.secret_numbers import bank_account, card_number
from mama_core.memory.secret_prose import stated_password
from mama_core.memory.secret_rules import prefixed_kind, vendor_kind
from mama_core.memory.secret_text import compact, decoded, normal

_CHECKS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("payment card number", card_number),
    ("IBAN", bank_account),
    ("password stated in prose", stated_password),
    ("credential assignment", keyed_assignment),
    ("prefixed access token", prefixed_token),
    ("random-looking token", random_token),
)


@dataclass(frozen=True)
class SecretFinding:
    """Where a secret shape was seen: the kind of secret and the field path."""

    pattern: str
    field: str


def find_secret(text: str) -> str | None:
    """The kind of the first secret ``text`` holds, or None.

    ``text`` is scanned as written, then normalised (NFKC, look-alike letters
    folded, invisible marks dropped), then without whitespace for prefixed
    vendor tokens, then with each URL, hex or base64 run decoded (one level).
    """
    if not text.strip():
        return None
    plain = unicodedata.normalize("NFKC", text)
    folded = normal(text)
    readings = tuple(dict.fromkeys((text, plain, folded)))
    for reading in readings:
        found = vendor_kind(reading)
        if found is not None:
            return found
    for reading in readings:
        for kind, check in _CHECKS:
            if check(reading):
                return kind
    joined = compact(folded)
    found = prefixed_kind(joined)
    if found is not None:
        return f"{found} (split)"
    for how, inner, spaced in _decodings(folded, joined.text):
        found = vendor_kind(inner) or prefixed_kind(compact(normal(inner)))
        if found is None and spaced and (keyed_assignment(inner) or stated_password(inner)):
            found = "credential"
        if found is not None:
            return f"{found} ({how})"
    return None


def _decodings(folded: str, joined: str) -> Iterator[tuple[str, str, bool]]:
    """(how, decoded text, whether it kept its spaces) for every encoded run.

    The whitespace-free reading only brings encoded runs that were split: it
    is not URL-decoded as a whole, and what it decodes is checked for vendor
    formats only, since words run together there."""
    seen: set[str] = set()
    for source, spaced in ((folded, True), (joined, False)):
        for how, inner in decoded(source, whole=spaced):
            if inner not in seen:
                seen.add(inner)
                yield how, inner, spaced


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


def refuse_secrets(payload: JsonObject, skip: frozenset[str] = frozenset({"command_id"})) -> None:
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
