"""Secrets of shapes no rule names: keyed assignments and random-looking tokens.

Vendors add formats faster than any list, so shape-free checks stand behind
the vendor rules:

* a credential word (in several languages) assigned a random-looking value:
  ``api_key = ...``, ``"client_secret": "..."``, ``Passwort: ...``,
  ``the token is ...``, ``<password>...</password>``, or directly followed by
  one (``api token u+...``);
* a lowercase vendor-style prefix followed by a long random tail
  (``abc_live_...``, ``xyz-...``), the shape most new tokens take;
* a long high-entropy token standing on its own: mixed case with digits, or
  (from 48 characters) lower case with digits beyond what hex can reach.

Not refused: hashes of commits and hex digests (too little entropy per
character), UUIDs, bech32 addresses, certificates and public keys, ids inside
links, e-mail and Message-ID local parts, tokens the text calls an id, and
values that name or measure a secret rather than hold it (``secret_name:``,
``token_ttl =``).
"""

from __future__ import annotations

import math
import re
from collections import Counter

from mama_core.memory.secret_text import base64_text

_KEY_WORDS = (
    r"(?:api|access|secret|wi-?fi|wlan|network|app|product)[._ -]?key|apikey|secret|"
    r"client[_ -]?secret|\bpat\b|personal access token|_key\b|"
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
    rf"(?:{_KEY_WORDS})"
    r"(?P<qualifier>(?:[ _-](?:d'|de |do |da |del |für |for |of )?[\w'\u2019-]+){0,2}?)"
    r"[\"'\]]*\s*(?:=|:=|:|=>|>|\uff1a|\s(?:is|was|ist|lautet|est|es|é|è|is:)\s)"
    r"\s*[\"'`\u00ab\u201c\u201e「]?(?P<value>[^\s\"'`,;\u00ab\u00bb\u201c\u201d\u201e「」]{6,})",
    re.IGNORECASE,
)
_ADJACENT = re.compile(
    rf"(?:{_KEY_WORDS})\s+[\"'`]?(?P<value>[^\s\"'`,;]{{16,}})",
    re.IGNORECASE,
)
"""``api token u+VjafQ4gG...``: a credential word right before a long value, no operator."""
_NOT_THE_VALUE = re.compile(
    r"(?:^|[ _-])(?:name|names|id|ids|ref|path|arn|file|var|field|type|len|length|ttl|count|min|max"
    r"|hint|policy|manager|store|vault|url|uri|endpoint|header|prefix|format|rotation|expiry"
    r"|expires|lifetime|budget|limit|usage|size)(?:$|[ _-])",
    re.IGNORECASE,
)
"""``secret_name:``, ``token_ttl =``, ``password_min_length``: the value names or
measures the secret, it is not the secret."""
_IDENTIFIED = re.compile(
    r"\b(?:id|ids|file|doc|document|sheet|folder|video|commit|sha|hash|ref|reference|order"
    r"|tracking|message|fingerprint|checksum|digest)\b\W*(?:\w+\W+){0,2}$",
    re.IGNORECASE,
)
"""A token introduced as an identifier ("the file id is ...")."""
_PUBLIC_MATERIAL = re.compile(
    r"-----BEGIN (?:CERTIFICATE(?: REQUEST)?|(?:RSA |EC |PGP )?PUBLIC KEY(?: BLOCK)?)-----"
    r".*?(?:-----END [A-Z ]+-----|\Z)"
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-(?:ssh|ecdsa)-\S+)\s+AAAA[A-Za-z0-9+/=]+",
    re.DOTALL,
)
"""Certificates and public keys: long random-looking runs that are public by design."""
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_.-])[a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{2,8})?[_-]([A-Za-z0-9]{28,})"
)
_BARE = re.compile(r"(?<![A-Za-z0-9+/=_.~%-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_.~%-])")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PUBLIC = re.compile(r"pk_(?:live|test)_|pk\.eyJ|pub_|publishable", re.IGNORECASE)
"""Keys that are public by design (Stripe and Mapbox publishable keys)."""
_BECH32 = re.compile(r"[a-z]{1,10}1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{38,}")
"""Bech32 strings (bc1…, age1…, npub1…): addresses and public keys."""
_PLACEHOLDER = re.compile(
    r"[<{$%(\[/~].*|\w+://.*|\*+|x+|\.+|[#\u2022\u00b7]+|(?:your|my|the|some|our)[_-].*"
    r"|.*(?:here|example|placeholder|redacted|changeme|1password|bitwarden|lastpass|keepass"
    r"|dashlane|keychain|vault).*",
    re.IGNORECASE,
)


_LOWER_PATH = re.compile(r"[a-z0-9_.-]+(?:/[a-z0-9_.-]+)+/?")
"""``prod/db/password``: where a secret is kept, not the secret."""


_PASSWORD_WORD = re.compile(
    r"pass|pwd|kennwort|mot de passe|mdp|contrase|senha|clave|wachtwoord|пароль|비밀번호|비번"
    r"|パスワード|密码|密碼",
    re.IGNORECASE,
)


def _password_value(value: str) -> bool:
    """After ``password=``, any value but a plain word, a placeholder or code is a
    password, even without a digit (``password=KEpFbSJoaTFNfm``)."""
    if len(value) < 6 or _PLACEHOLDER.fullmatch(value) or re.search(r"[(\[{]", value):
        return False
    return bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value[1:]))


def keyed_assignment(text: str) -> bool:
    """Whether a credential word is given a value that looks generated."""
    for match in _ASSIGNMENT.finditer(text):
        if _NOT_THE_VALUE.search(match.group("qualifier")):
            continue
        value = match.group("value").rstrip(".,;:!?)]}")
        if _LOWER_PATH.fullmatch(value):
            continue
        if _looks_random(value):
            return True
        if _PASSWORD_WORD.match(match.group(0)) and _password_value(value):
            return True
    for match in _ADJACENT.finditer(text):
        value = match.group("value").rstrip(".,;:!?)]}")
        plain_value = not _LOWER_PATH.fullmatch(value) and "://" not in value
        if len(value) >= 16 and re.search(r"\d", value) and _looks_random(value) and plain_value:
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
        if re.search(r"\d", tail) and len(tail) >= 32 and entropy(tail) >= 4.2:
            return True  # base32/base36 tails (lower case and digits)
        if re.fullmatch(r"[a-f0-9]{32,}", tail) and entropy(tail) >= 3.5:
            return True
    return False


def random_token(text: str) -> bool:
    """Whether ``text`` has a long random token on its own (not in a URL path)."""
    text = _UUID.sub(" ", _PUBLIC_MATERIAL.sub(" ", text))
    for match in _BARE.finditer(text):
        token = match.group()
        start = match.start()
        if text.startswith("@", match.end()) or _IDENTIFIED.search(
            text[max(0, start - 40) : start]
        ):
            continue  # an e-mail or Message-ID, or a token the text calls an identifier
        word_start = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
        if "://" in text[word_start:start] or text[word_start:start].startswith("www."):
            continue  # an id inside a link (a document, a video), not a credential
        if text[max(0, start - 7) : start].lower().endswith("base64,"):
            continue  # an inline image or file, not a credential
        core = token.strip("=")
        inner = base64_text(token)
        if _PUBLIC.match(token) or (inner is not None and re.search(r"\s", inner)):
            continue  # public by design, or encoded prose (its decoding is scanned itself)
        if _classes(core) >= 3 and re.search(r"\d.*\d", core) and entropy(core) >= 4.2:
            return True
        if _BECH32.fullmatch(core):
            continue  # a wallet address or an age public key: bech32, public by design
        if len(core) >= 48 and re.search(r"\d.*\d", core) and entropy(core) >= 4.5:
            return True  # base32/base36 (lower case and digits): more than hex can reach
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
    if not re.search(r"\d", value):
        # Without a digit, only a value mixing cases and symbols: "created_at_desc" or
        # "user_id" is an identifier (a random 32-character token lacks digits 1 time in 250).
        return _classes(value) >= 3 and len(value) >= 10 and entropy(value) >= 3.3
    return _classes(value) >= 2 and (entropy(value) >= 3.0 or len(value) >= 16)


def _classes(value: str) -> int:
    return sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))


def entropy(value: str) -> float:
    """Shannon entropy of ``value``, in bits per character."""
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())
