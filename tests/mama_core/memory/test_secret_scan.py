"""Secret-shaped strings are refused in every recallable write, naming the
pattern and never echoing the secret; look-alikes (ids, hashes, dates, prose
about keys and tokens) pass. Corpus: 50 secret shapes, 50 look-alikes.

The secrets below are fabricated in their providers' formats (several are the
providers' own documentation examples); none is a live credential.
"""

from __future__ import annotations

import json
import logging

import pytest

from mama_core.memory import Engine, SecretRefusedError
from mama_core.memory.secrets_scan import find_secret
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, event_count

A36 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # 36 alphanumerics
A40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example secret
HEX32 = "9f86d081884c7d659a2feaa0c55ad015"
HEX64 = HEX32 * 2

SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    "our key id is ASIAY34FZKBOKMUTVV7A for the temp role",
    f'aws_secret_access_key = "{A40}"',
    f"AWS_SECRET_ACCESS_KEY={A40}",
    f"ghp_{A36}",
    f"gho_{A36}",
    f"ghs_{A36}",
    "github_pat_11ABCDEFG0" + "aB3dE5gH7jK9mN1pQ3sT5vX7z" * 3,
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "sk-ant-api03-" + "Xy9_Zw8-" * 11 + "AA",
    "sk-ant-admin01-" + "Qp7rSt6uVw5x" * 6,
    "sk-" + "A1b2C3d4E5f6G7h8I9j0" + "T3BlbkFJ" + "K1l2M3n4O5p6Q7r8S9t0",
    "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12" + "_Wx34-Yz56",
    "OPENAI=sk-" + "Zx8Cv7Bn6Mq5Wr4Ty3Ui2Op1As9Df8Gh7Jk6Ll5Qw4Er3Ty",
    "bot token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
    "7123456789:AAF" + "x" * 10 + "Y" * 10 + "z1-_" * 3 + "ab",
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_" + "51HnVzqLkJd8wP3mX9bR2tY6",
    "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "AIzaSyA-" + "1234567890abcdefghijklmnopqrstu" + "vw",
    "ya29.a0AfH6SMBx" + "Kq2w3e4r5t6y7u8i9o0p" * 2,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98...\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBk...\n-----END EC PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0...\n-----END PGP PRIVATE KEY BLOCK-----",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "Authorization: Bearer 0b79bab50daca910b000d4f1a2b675d604257e42",
    "curl -H 'Authorization: Bearer abcDEF123ghiJKL456mnoPQR789' https://api.example.com",
    "Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQxMjM0NTY3OA==",
    "clone https://ann:p4ssw0rd99@git.example.com/team/repo.git",
    "DATABASE_URL=postgres://admin:S3cr3tPass@10.0.0.5:5432/prod",
    f'api_key = "{HEX32}"',
    'API_KEY: "Zx9LkQ2mN8pR4tV7wY1bC3dF"',
    'password = "Tr0ub4dor&3xyz"',
    "client_secret: GOCSPX-1a2B3c4D5e6F7g8H9i0J",
    "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",
    f"//registry.npmjs.org/:_authToken=npm_{A36}",
    "pypi-AgEIcHlwaS5vcmc" + "CJGE0ZmQ2YWM4LTk5MjgtNGE1My1iZDc1LWQ3MGE0ZjE0ODQ0NgACJXsicGVy" * 2,
    "glpat-" + "xY7zW6vU5tS4rQ3pO2nM",
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12345678",
    "SK" + HEX32,
    "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.MnOpQrStUvWxYz0123456789abc",
    "mailchimp 0123456789abcdef0123456789abcdef-us12",
    "shpat_" + HEX32,
    "dop_v1_" + HEX64,
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "Q" * 86 + "==",
    "sq0csp-" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG",
]

LOOK_ALIKES = [
    "550e8400-e29b-41d4-a716-446655440000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
    "fixed in a1b2c3d on main",
    "2024-03-15T10:30:00Z",
    "upgrade to v2.14.3-rc1",
    "requires numpy>=1.26,<3",
    "The tokenizer splits text into tokens before embedding",
    "Keep API keys in the OS keyring, never in the repository",
    "The password policy requires at least 12 characters",
    "Rotate secrets every 90 days",
    "#ff8800",
    "Use colour #1e90ff for links",
    "Call +49 30 1234567 for the office",
    "(555) 123-4567",
    "/home/ann/projects/mama/src/main.py",
    "C:\\Users\\ann\\Documents\\report.docx",
    "The release checksum is sha256 "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "https://github.com/anthropics/claude-code/issues/123",
    "http://localhost:8080/api/v1/health",
    "ann@example.com",
    "192.168.1.10",
    "Meeting ID 845 2231 9876",
    "Order number 2024-000123",
    "The token budget for guidance is 800 tokens",
    "password: see the team vault",
    "api_key = os.environ['API_KEY']",
    "password = getpass()",
    "Set secret_key in settings to a random value",
    "token = None",
    "SGVsbG8=",
    "The Telegram bot is @mama_helper_bot",
    "Python 3.11.7 (main, Dec 2023)",
    "Slack channel #eng-backend",
    "The AWS region is eu-central-1",
    "arn:aws:s3:::my-bucket/reports",
    "Jira ticket PROJ-1234",
    "Check the sk- prefix in the validator",
    "Stripe test mode is enabled in staging",
    "The JWT expires after 15 minutes",
    "The bearer token is refreshed hourly",
    "ISBN 978-3-16-148410-0",
    "Credit limit 10000 EUR",
    "Coordinates 52.5200, 13.4050",
    "my_password_field is the form field name",
    "https://docs.python.org/3/library/secrets.html",
    "AKIA is the prefix of AWS access key ids",
    "Pneumonoultramicroscopicsilicovolcanoconiosis",
    "ghp_ is the prefix of GitHub tokens",
    "Basic internationalization support ships in 2.0",
    "MIT License, Copyright (c) 2024 Ann Example",
]


def test_corpus_sizes() -> None:
    assert len(SECRETS) >= 40
    assert len(LOOK_ALIKES) >= 40


@pytest.mark.parametrize("text", SECRETS)
def test_every_secret_shape_is_found(text: str) -> None:
    assert find_secret(text) is not None


def test_look_alikes_are_at_most_one_false_positive() -> None:
    refused = [t for t in LOOK_ALIKES if find_secret(t) is not None]
    assert len(refused) <= 1, refused


def test_refusal_names_the_pattern_and_never_echoes_the_secret(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    events = event_count(engine)
    for field in ("summary", "details", "topic", "applies_when"):
        secret = f"ghp_{A36}"
        payload = {"kind": "lesson", "summary": "ok", "applies_when": "deploying", field: secret}
        with pytest.raises(SecretRefusedError) as info:
            engine.dispatch("memory.save", payload, AGENT, agent_grant())
        assert info.value.details["field"] == field
        assert "GitHub" in info.value.details["pattern"]
        assert secret not in json.dumps(info.value.to_dict())
        assert secret not in str(info.value)
    assert all(f"ghp_{A36}" not in r.getMessage() for r in caplog.records)
    assert event_count(engine) == events


def test_every_recallable_write_is_scanned(engine: Engine) -> None:
    saved = engine.dispatch(
        "memory.save", {"kind": "decision", "summary": "Use the vault"}, OWNER, OWNER_GRANT
    )
    token = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
    refused = [
        (
            "memory.save",
            {
                "kind": "workflow",
                "summary": "Deploy",
                "applies_when": "deploying",
                "steps": ["login", f"export TOKEN={token}"],
            },
        ),
        ("memory.update_outcome", {"id": saved["judgment_id"], "outcome": f"used {token}"}),
        ("checkpoint.save", {"summary": "halfway", "state": {"env": {"SLACK": token}}}),
        ("checkpoint.save", {"summary": "halfway", "state": {token: "as a key"}}),
        ("memory.retire", {"id": saved["judgment_id"], "reason": f"leaked {token}"}),
    ]
    for action, payload in refused:
        with pytest.raises(SecretRefusedError) as info:
            engine.dispatch(action, payload, OWNER, OWNER_GRANT)
        assert token not in json.dumps(info.value.to_dict())
    fields = []
    for action, payload in refused[:3]:
        with pytest.raises(SecretRefusedError) as info:
            engine.dispatch(action, payload, OWNER, OWNER_GRANT)
        fields.append(info.value.details["field"])
    assert fields == ["steps[1]", "outcome", "state.env.SLACK"]
    # Positive control: the same writes without the token go through.
    assert (
        engine.dispatch(
            "checkpoint.save",
            {"summary": "halfway", "state": {"env": {"SLACK": "in vault"}}},
            OWNER,
            OWNER_GRANT,
        )["checkpoint_id"]
        >= 1
    )
