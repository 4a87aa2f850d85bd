"""Secrets of shapes no rule names: keyed assignments and random-looking tokens.

Vendors add formats faster than any list, so three shape-free checks stand
behind the vendor rules:

* a credential word (in several languages) assigned a random-looking value:
  ``api_key = ...``, ``"client_secret": "..."``, ``Passwort: ...``,
  ``the token is ...``;
* a lowercase vendor-style prefix followed by a long random tail
  (``abc_live_...``, ``xyz-...``), the shape most new tokens take;
* a long token mixing upper case, lower case and digits with high entropy,
  standing on its own (not a path segment of a URL).

Hashes of commits, UUIDs, and hex digests are not refused: hex has too little
entropy per character to pass the random-token test, and a UUID's dashes
break it into short runs.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from mama_core.memory.secret_text import base64_text

_KEY_WORDS = (
    r"(?:api|access|secret|wi-?fi|wlan|network|app|product)[._ -]?key|apikey|secret|"
    r"client[_ -]?secret|\bpat\b|personal access token|"
    r"auth[_ -]?token|access[_ -]?token|refresh[_ -]?token|id[_ -]?token|session[_ -]?token|"
    r"token|password|passwd|pwd|passphrase|private[_ -]?key|credentials?|"
    r"signing[_ -]?key|encryption[_ -]?key|master[_ -]?key|license[_ -]?key|webhook[_ -]?secret|"
    r"passwort|kennwort|schl[üu]ssel|geheimnis|zugangsdaten|"
    r"mot de passe|mdp|cl[ée] (?:d'api|secr[èe]te|api)|jeton|"
    r"contrase[ñn]a|clave|llave|secreto|"
    r"senha|palavra[- ]passe|chave|segredo|"
    r"wachtwoord|sleutel|parola d'ordine|chiave|has[łl]o|пароль|ключ|токен|"
    r"비밀번호|비번|암호|토큰|パスワード|暗証番号|トークン|秘密鍵|密码|密碼|口令|令牌|密钥"
)

_ASSIGNMENT = re.compile(
    rf"(?:{_KEY_WORDS})(?:[ _-](?:d'|de |do |da |del |für |for |of )?[\w'\u2019-]+){{0,2}}?"
    r"[\"'\]]*\s*(?:=|:=|:|=>|\uff1a|\s(?:is|was|ist|lautet|est|es|é|è|is:)\s)"
    r"\s*[\"'`\u00ab\u201c\u201e「]?([^\s\"'`,;\u00ab\u00bb\u201c\u201d\u201e「」]{6,})",
    re.IGNORECASE,
)
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_.-])[a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{2,8})?[_-]([A-Za-z0-9]{28,})"
)
_BARE = re.compile(r"(?<![A-Za-z0-9+/=_.~%-])[A-Za-z0-9+/_=-]{32,}(?![A-Za-z0-9+/=_.~%-])")
_PUBLIC = re.compile(r"pk_(?:live|test)_|pk\.eyJ|pub_|publishable", re.IGNORECASE)
"""Keys that are public by design (Stripe and Mapbox publishable keys)."""
_PLACEHOLDER = re.compile(
    r"[<{$%(\[/~].*|\w+://.*|\*+|x+|\.+|[#\u2022\u00b7]+|(?:your|my|the|some|our)[_-].*"
    r"|.*(?:here|example|placeholder|redacted|changeme).*",
    re.IGNORECASE,
)


def keyed_assignment(text: str) -> bool:
    """Whether a credential word is given a value that looks generated."""
    for match in _ASSIGNMENT.finditer(text):
        value = match.group(1).rstrip(".,;:!?)]}")
        if _looks_random(value):
            return True
    return False


def prefixed_token(text: str) -> bool:
    """Whether ``text`` has a ``vendor_`` prefix followed by a long random tail."""
    for match in _PREFIXED.finditer(text):
        tail = match.group(1)
        if _PUBLIC.match(match.group()):
            continue
        if _classes(tail) >= 3 and entropy(tail) >= 4.0:
            return True
        if re.fullmatch(r"[a-f0-9]{32,}", tail) and entropy(tail) >= 3.5:
            return True
    return False


def random_token(text: str) -> bool:
    """Whether ``text`` has a long random token on its own (not in a URL path)."""
    for match in _BARE.finditer(text):
        token = match.group()
        start = match.start()
        word_start = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
        if "://" in text[word_start:start] or text[word_start:start].startswith("www."):
            continue  # an id inside a link (a document, a video), not a credential
        if text[max(0, start - 7) : start].lower().endswith("base64,"):
            continue  # an inline image or file, not a credential
        core = token.strip("=")
        if _PUBLIC.match(token) or base64_text(token) is not None:
            continue  # public by design, or encoded text (its decoding is scanned itself)
        if _classes(core) >= 3 and re.search(r"\d.*\d", core) and entropy(core) >= 4.2:
            return True
    return False


def _looks_random(value: str) -> bool:
    """A value that is plausibly a generated credential, not a word or a placeholder."""
    if len(value) < 6 or value.lower() in {"password", "changeme", "redacted", "xxxxxxxx", "none"}:
        return False
    if _PLACEHOLDER.fullmatch(value) or re.search(r"[(\[{]", value):
        return False  # a placeholder, a template or code (``os.environ[...]``, ``getpass()``)
    if re.fullmatch(r"[\d.,:/ -]+", value) and len(value) <= 12:
        return False  # a number, a date or a version
    if len(value) < 8:
        return _classes(value) >= 2 and bool(re.search(r"\d", value))
    return _classes(value) >= 2 and (entropy(value) >= 3.0 or len(value) >= 16)


def _classes(value: str) -> int:
    return sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))


def entropy(value: str) -> float:
    """Shannon entropy of ``value``, in bits per character."""
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())
