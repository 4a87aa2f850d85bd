"""Passwords stated in words, in the languages owners write.

"My bank password is correct horse battery staple", "das Passwort für den
Router ist Sonnenblume2024", "le mot de passe du wifi est ...", "la contraseña
es ...", "a senha é ...", "비밀번호는 ...입니다", "パスワードは...です": a password
word, a few words naming what it opens, a copula or a colon, then a value.

Prose *about* a password ("remind me to change my bank password", "the
password is too short", "das Passwort ist abgelaufen") is not refused: the
value must look like a password, meaning it is quoted, or mixes letters with
digits or symbols, or is a PIN of four or more digits, or is a passphrase of
three or more plain words none of which is a function word or a predicate
("on", "the", "expired", "abgelaufen", "trop", ...).
"""

from __future__ import annotations

import re
from importlib import resources

_WORDS = (
    # Inside compounds too ("Bankpasswort", "wifi-password"), so no left edge here.
    r"(?:password|passwort|kennwort|passcode|passphrase|wachtwoord|passwd)\w*"
    r"|mot de passe|contrase[ñn]a|senha|palavra[- ]passe|parola d'ordine"
    r"|code (?:pin|secret|d'acc[èe]s)|c[óo]digo (?:pin|secreto|de acceso|de acesso)"
    r"|geheimzahl|zugangscode|пароль"
    r"|(?:seed|recovery|backup|mnemonic|secret) (?:phrase|words|codes?)|mnemonic"
    r"|\b(?:pin(?:[- ]?code|[- ]?nummer|[- ]?number)?|pw|pwd|mdp|clave)\b"
)
_BARE = re.compile(rf"(?:{_WORDS})\s+(?P<value>[^\s\"'`]{{6,}})", re.IGNORECASE)
"""``Passwort Sommer2024!``: a password word right before a value, no copula."""
_COPULAS = (
    r"\s(?:is(?: now)?|was|to|auf|will be|has been (?:changed|set) to|(?:changed|set) to|reads"
    r"|ist(?: jetzt)?|lautet|hei(?:ß|ss)t|war|wurde auf"
    r"|est|c'est|était|sera|es|era|será|é|è|sono|это)\s"
    r"|\s*[:=\uff1a]\s*|\s+[-\u2013\u2014]\s+"
)
_LATIN = re.compile(
    rf"(?:{_WORDS})(?P<mid>(?:\s+[^\s.!?,;:=]+){{0,5}}?)(?P<cop>{_COPULAS})\s*(?P<value>[^\n]{{1,120}})",
    re.IGNORECASE,
)
_LOGIN = re.compile(
    r"(?:log-?in|sign-?in|creds|credentials|zugangsdaten|anmeldedaten|identifiants"
    r"|credenciales|credenciais|accesso|로그인|ログイン|登录)"
    r"[^\n]{0,40}?(?:[:=\uff1a]|\s(?:are|is|sind|ist|sont|est|son|es|são|é)\s)"
    r"\s*[^\s/:]{2,40}\s*(?:/|\s:\s|,|\s\|\s)\s*(?P<value>\S+)",
    re.IGNORECASE,
)
"""A user name, a slash (or colon, comma, bar), then a password, after a login word."""
_ABOUT_IT = re.compile(
    r"\b(?:hint|hints|policy|policies|length|rules?|reset|manager|field|requirements?|expiry"
    r"|strength|format|prompt|question|change|rotation|tipp|hinweis|richtlinie|indice|règle"
    r"|pista|regla|dica|regra)\b",
    re.IGNORECASE,
)
"""Words between the password word and its copula that make the sentence about
something else than the password's value."""
_WHERE_KEPT = re.compile(
    r"1password|bitwarden|lastpass|keepass|dashlane|keychain|vault|schlüsselbund|tresor|coffre",
    re.IGNORECASE,
)
"""Password managers and vaults: where a password is kept, not the password."""
_RECOVERY = re.compile(r"seed|recovery|mnemonic|backup", re.IGNORECASE)
_CODES = re.compile(r"\d{3,}(?:[- ]\d{3,})+")
"""Backup or recovery codes: groups of digits ("1234-5678 8765-4321")."""
_APP_PASSWORD = re.compile(r"[a-z]{4}(?:[- ][a-z]{4}){3}")
"""Apple's and Google's app passwords: four groups of four lower-case letters."""
_NOT_A_VALUE = re.compile(r"\d+-\w+|v?\d+(?:\.\d+)*\w{0,3}|\d*[A-Za-z]{1,3}\d*")
"""After a bare password word: "8-character", "v2.3", "2FA" are not values."""
_CJK = re.compile(
    r"(?:비밀번호|비번|암호|패스워드|핀\s?번호|パスワード|暗証番号|合言葉|密码|密碼|口令)"
    r"\s*(?:는|은|이|가|は|が|是|为|為|:|\uff1a|=)\s*[「『\"'\u201c]?(?P<value>[!-~]+)"
)
_CJK_TAIL = re.compile(r"(?:입니다|이에요|예요|이야|야|이다|です|だ|である|でした)$")
_QUOTED = re.compile(
    r"[\"'`\u2018\u201c\u00ab\u201e「『]([^\"'`\u2019\u201d\u00bb\u201c」』]{4,80})"
    r"[\"'`\u2019\u201d\u00bb\u201c」』]"
)
_CLAUSE_END = re.compile(r"[.!?;,](?:\s|$)|[)\]]|\s[-\u2013\u2014]\s")
_UNITS = re.compile(
    r"(?:characters?|chars?|digits?|letters?|zeichen|stellen|ziffern|caract[eè]res|chiffres"
    r"|caracteres|d[íi]gitos|letras|days?|tage|jours|d[íi]as|weeks?|months?|years?)$",
    re.IGNORECASE,
)

_STOP = frozenset(
    word
    for line in resources.files("mama_core.memory")
    .joinpath("secret_stopwords.txt")
    .read_text("utf-8")
    .splitlines()
    if not line.startswith("#")
    for word in line.split()
)


def stated_password(text: str) -> bool:
    """Whether ``text`` states a password's value in words (or a login with one)."""
    if stated_login(text):
        return True
    for match in _LATIN.finditer(text):
        if _ABOUT_IT.search(match.group("mid")):
            continue  # "the password hint was ...", "password policy: ..."
        if _value_is_password(match.group("value")):
            return True
        if _RECOVERY.search(match.group(0)) and _recovery_phrase(match.group("value")):
            return True
    for match in _BARE.finditer(text):
        value = match.group("value").rstrip(".,;:!?)")
        if value.startswith(("$", "<", "{", "%")):
            continue
        if _mixed(value) and re.search(r"\d", value) and not _NOT_A_VALUE.fullmatch(value):
            return True
    for match in _CJK.finditer(text):
        value = _CJK_TAIL.sub("", match.group("value").rstrip("」』\"'\u201d.,。、!?"))
        if len(value) >= 4 and (_mixed(value) or value.isdigit() or len(value) >= 6):
            return True
    return False


def _value_is_password(rest: str) -> bool:
    quoted = _QUOTED.match(rest)
    if quoted:
        return quoted.group(1).strip().lower() not in _STOP
    clause = _CLAUSE_END.split(rest, maxsplit=1)[0]
    words = [w.strip("\"'`.,;:!?()[]") for w in clause.split()]
    words = [w for w in words if w]
    if not words:
        return False
    first = words[0]
    if first.lower() in _STOP or first.startswith(("$", "<", "{", "%")):
        return False  # prose, or a variable or placeholder ($DB_PASSWORD, <password>)
    if _WHERE_KEPT.search(first) or "(" in first:
        return False  # "password: 1Password", "password = PasswordField(...)"
    if re.fullmatch(r"\d+", first):
        return len(first) >= 4 and not (len(words) > 1 and _UNITS.match(words[1]))
    if re.fullmatch(r"\d{1,2}-[^\W\d_]+", first):
        return False  # "8-character", "2-step"
    if _APP_PASSWORD.fullmatch(" ".join(words[:4])) or _APP_PASSWORD.fullmatch(first):
        return True
    if _CODES.fullmatch(first) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", first):
        return True
    if len(first) >= 4 and _mixed(first):
        return True
    return _passphrase(words)


def _recovery_phrase(rest: str) -> bool:
    """Twelve or more lower-case words in a row: a wallet's recovery phrase."""
    words = _CLAUSE_END.split(rest, maxsplit=1)[0].split()
    return len(words) >= 12 and all(re.fullmatch(r"[a-z]{3,8}", word) for word in words)


def _mixed(word: str) -> bool:
    """Letters with digits, or with a symbol other than a hyphen or apostrophe."""
    letters = bool(re.search(r"[^\W\d_]", word))
    digits = bool(re.search(r"\d", word))
    symbols = bool(re.search(r"[^\w\-'\u2019]", word))
    return (letters and digits) or (symbols and (letters or digits))


def _passphrase(words: list[str]) -> bool:
    """Three to 24 plain words, none a function word, the first no participle."""
    if not 3 <= len(words) <= 24:  # up to a 24-word recovery phrase
        return False
    if re.search(r"(?:ing|ed|ly)$", words[0].lower()) and len(words[0]) > 4:
        return False  # "expiring next week", "stored in the safe", "usually ..."
    return all(
        word.isalpha() and word[1:].islower() and word.lower() not in _STOP for word in words
    )  # "KeePassXC entry NAS" is a name, not a passphrase


def stated_login(text: str) -> bool:
    """Whether ``text`` gives a user name and a password together
    ("the staging creds are admin / Zx9!qW2#eR", "Login: ann / Sonne#Mond77")."""
    for match in _LOGIN.finditer(text):
        value = match.group("value").rstrip(".,;:!?)")
        if len(value) >= 6 and _mixed(value) and not _NOT_A_VALUE.fullmatch(value):
            return True
    return False
