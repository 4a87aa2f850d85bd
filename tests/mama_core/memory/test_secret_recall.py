"""The secret scan on the corpus in ``tests/mama_core/secrets_corpus/``: every
positive (vendor formats, passwords stated in ten languages, cards, IBANs,
split, homoglyph and encoded tokens, shapes no rule names) is refused, and at
most 1 in 40 of the ordinary owner notes (several languages, IDs, hashes,
phone and order numbers, prose about passwords) is.

Every value in the corpus is fabricated in its vendor's public format; none
is a live credential. ``bench/secret_scan.py`` prints the per-shape table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

from mama_core.memory import Engine, SecretRefusedError
from mama_core.memory.secret_rules import SKIPPED_PLUGINS, plugins
from mama_core.memory.secrets_scan import find_secret
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, event_count

CORPUS = Path(__file__).resolve().parent.parent / "secrets_corpus"

ISSUE_SHAPES = (
    "Docker PAT",
    "Grafana service account token",
    "Databricks token",
    "Doppler service token",
    "Supabase access token",
    "Terraform Cloud token",
    "Mailgun private key",
    "Azure AD client secret",
    "PuTTY key file",
    "kubeconfig client-key-data",
    "redis URL with password only",
    "German prose password",
    "split token (spaces)",
    "split token (newline)",
    "split token (zero-width)",
    "homoglyph token (Cyrillic)",
    "homoglyph token (fullwidth)",
    "hex-encoded token",
    "English passphrase in prose",
    "card number with CVC",
    "IBAN",
)
"""The shapes issue 23 found saved; each failed on the scan before this corpus."""


def positives() -> list[dict[str, str]]:
    with (CORPUS / "positives.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def negatives() -> list[str]:
    lines = (CORPUS / "negatives.txt").read_text(encoding="utf-8").splitlines()
    # One note per line; a note of several lines writes its breaks as \n.
    return [
        line.replace("\\n", "\n") for line in lines if line.strip() and not line.startswith("#")
    ]


def test_every_positive_is_refused_and_ordinary_notes_pass() -> None:
    pos, neg = positives(), negatives()
    assert len(pos) >= 100 and len(neg) >= 200
    missed = [row["shape"] for row in pos if find_secret(row["text"]) is None]
    false_alarms = [(text, find_secret(text)) for text in neg if find_secret(text) is not None]
    print(
        f"\nsecret scan: refused {len(pos) - len(missed)} of {len(pos)} positives, "
        f"{len(false_alarms)} of {len(neg)} ordinary notes"
    )
    assert missed == []
    assert len(false_alarms) * 40 <= len(neg), false_alarms


def test_ordinary_notes_joined_into_one_long_text_still_pass() -> None:
    """Joining split tokens must not make tokens out of many ordinary words
    ("ghp_ is the prefix of GitHub tokens" followed by more notes)."""
    notes = negatives()
    assert find_secret("\n".join(notes)) is None
    assert find_secret(" ".join(notes)) is None
    secret = next(row["text"] for row in positives() if row["shape"] == "split token (newline)")
    assert find_secret("\n".join([*notes[:100], secret, *notes[100:]])) is not None


def test_the_issues_shapes_are_in_the_corpus_and_refused() -> None:
    by_shape = {row["shape"]: row["text"] for row in positives()}
    assert set(ISSUE_SHAPES) <= set(by_shape)
    assert [s for s in ISSUE_SHAPES if find_secret(by_shape[s]) is None] == []


@pytest.mark.parametrize(
    ("secret", "look_alike"),
    [
        # Luhn: the same card with its last digit changed is an ordinary number.
        ("Visa 4539 1488 0343 6467 CVC 737", "Order 4539 1488 0343 6468 CVC 737"),
        ("card 5425233430109903", "ref 5425233430109904"),
        ("Amex 3714 496353 98431", "Amex 3714 496353 98432"),
        # IBAN: a wrong check pair, or a number of the wrong length for its country.
        ("IBAN DE89 3704 0044 0532 0130 00", "IBAN DE88 3704 0044 0532 0130 00"),
        ("GB29NWBK60161331926819", "GB29NWBK6016133192681"),
        # A bank python-stdnum's registry does not list (Belgian code 539): the IBAN's own
        # check decides, not a bank directory that is always behind.
        ("IBAN BE68 5390 0754 7034", "IBAN BE68 5390 0754 7035"),
        # Passwords stated vs. prose about them, per language.
        (
            "my bank password is correct horse battery staple",
            "remind me to change my bank password",
        ),
        (
            "Das Passwort für das WLAN ist Sonnenblume2024",
            "Das Passwort für das WLAN ist abgelaufen",
        ),
        ("le mot de passe du NAS est Soleil-Rouge-77", "le mot de passe du NAS est trop court"),
        ("la contraseña del correo es Girasol2024", "la contraseña del correo es demasiado corta"),
        ("a senha do banco é Tartaruga#88", "a senha do banco é muito curta"),
        ("비밀번호는 qwerty123!입니다", "비밀번호는 8자 이상이어야 합니다"),
        ("パスワードは「sakura2024」です", "パスワードは定期的に変更してください"),
        # Publishable keys are public; secret keys of the same vendor are not.
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "pk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        # A commit hash, a UUID: random-looking but not credentials.
        (
            "token: a7Kq2LmN9pR4sT8vW1xY5zB3cD6fG0hJ",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        ),
    ],
)
def test_a_secret_is_refused_and_its_look_alike_passes(secret: str, look_alike: str) -> None:
    assert find_secret(secret) is not None
    assert find_secret(look_alike) is None


def test_a_refusal_names_the_kind_never_the_value_and_writes_nothing(engine: Engine) -> None:
    by_shape = {row["shape"]: row["text"] for row in positives()}
    events = event_count(engine)
    kinds: dict[str, str] = {}
    for shape in (
        "Docker PAT",
        "card number with CVC",
        "German prose password",
        "hex-encoded token",
    ):
        text = by_shape[shape]
        with pytest.raises(SecretRefusedError) as info:
            engine.dispatch(
                "memory.save", {"kind": "fact", "summary": f"note: {text}"}, OWNER, OWNER_GRANT
            )
        shown = str(info.value) + json.dumps(info.value.to_dict())
        for word in text.split():
            if len(word) >= 8 and any(ch.isdigit() for ch in word):
                assert word not in shown, shape
        kinds[shape] = info.value.details["pattern"]
    assert kinds["Docker PAT"] == "Docker access token"
    assert kinds["card number with CVC"] == "payment card number"
    assert kinds["German prose password"] == "password stated in prose"
    assert kinds["hex-encoded token"].endswith("(hex-encoded)")
    assert event_count(engine) == events
    # Control: the same note without the secret is saved.
    saved = engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "note: the Docker token is in the vault"},
        OWNER,
        OWNER_GRANT,
    )
    assert saved["status"] == "active"
    assert event_count(engine) > events


def test_every_regex_plugin_of_detect_secrets_runs() -> None:
    """An upgrade of detect-secrets that brings a plugin fails here until it is listed."""
    running = {str(p.secret_type) for p in plugins()}
    available = {
        secret_type
        for secret_type, cls in get_mapping_from_secret_type_to_class().items()
        if issubclass(cls, RegexBasedDetector)
    }
    assert running == available - SKIPPED_PLUGINS
    assert running  # control: the mapping found plugins at all
