"""Where the store key comes from: env, the OS keyring, or a passphrase."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.backends.SecretService
import pytest

from app.local.keys import ENV_KEY, KEYRING_SERVICE, KeyOrigin, keyring_account, resolve_key
from mama_core.errors import KeyUnavailableError
from mama_core.store import Store


@pytest.fixture
def use_backend() -> Iterator[object]:
    original = keyring.get_keyring()

    def use(backend: keyring.backend.KeyringBackend) -> None:
        keyring.set_keyring(backend)

    yield use
    keyring.set_keyring(original)


def test_env_key_wins(clean_env: pytest.MonkeyPatch, db_path: Path, use_backend) -> None:
    use_backend(keyring.backends.fail.Keyring())
    clean_env.setenv(ENV_KEY, "a passphrase from the environment")
    resolved = resolve_key(db_path)
    assert resolved.origin is KeyOrigin.ENV
    assert resolved.key.reveal() == "a passphrase from the environment"
    assert "passphrase from" not in resolved.describe()


def test_no_keyring_and_no_terminal_is_a_clear_error(
    clean_env: pytest.MonkeyPatch, db_path: Path, use_backend
) -> None:
    use_backend(keyring.backends.fail.Keyring())
    with pytest.raises(KeyUnavailableError) as info:
        resolve_key(db_path, ask_passphrase=None)
    assert ENV_KEY in info.value.message


def test_no_keyring_falls_back_to_a_passphrase(
    clean_env: pytest.MonkeyPatch, db_path: Path, use_backend
) -> None:
    use_backend(keyring.backends.fail.Keyring())
    asked: list[tuple[str, bool]] = []

    def ask(prompt: str, confirm: bool) -> str:
        asked.append((prompt, confirm))
        return "owner typed this"

    resolved = resolve_key(db_path, ask)
    assert resolved.origin is KeyOrigin.PASSPHRASE
    assert asked and asked[0][1] is True  # a new store asks twice
    with Store.open(db_path, resolved.key):
        pass
    # An existing store asks once, and the same passphrase opens it.
    asked.clear()
    again = resolve_key(db_path, ask)
    assert asked[0][1] is False
    with Store.open(db_path, again.key) as store:
        assert store.schema_version > 0


def test_secret_service_keeps_a_generated_key(
    clean_env: pytest.MonkeyPatch, db_path: Path, use_backend, secret_service: dict[str, str]
) -> None:
    for name, value in secret_service.items():
        clean_env.setenv(name, value)
    use_backend(keyring.backends.SecretService.Keyring())
    first = resolve_key(db_path)
    assert first.origin is KeyOrigin.KEYRING
    assert first.key.raw and len(first.key.reveal()) == 64
    assert keyring.get_password(KEYRING_SERVICE, keyring_account(db_path)) == first.key.reveal()
    with Store.open(db_path, first.key):
        pass
    second = resolve_key(db_path)
    assert second.key == first.key
    # The key is nowhere in the data folder.
    secret = first.key.reveal().encode()
    for path in db_path.parent.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path
    # Positive control for that scan: it would see a key written in plain.
    (db_path.parent / "leak.txt").write_bytes(secret)
    assert any(secret in p.read_bytes() for p in db_path.parent.rglob("*") if p.is_file())
