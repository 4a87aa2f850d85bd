"""One-time pairing codes: single use, short-lived, stored only as hashes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from app.cli.main import cli
from app.runtime.transaction import RuntimeDb
from app.telegram.pairing import CODE_TTL, Pairing, normalise_code
from tests.app.runtime.support import ManualClock
from tests.conftest import TEST_KEY_HEX


def test_a_code_pairs_once_and_only_while_fresh(runtime_db: RuntimeDb, clock: ManualClock) -> None:
    pairing = Pairing(runtime_db, clock)
    code = pairing.new_code()
    assert len(normalise_code(code)) == 8 and "-" in code
    stored = runtime_db.conn.execute("SELECT code_hash FROM pairing_codes").fetchall()
    assert normalise_code(code) not in str(stored)  # only its hash is kept

    assert not pairing.redeem("WRONG-CODE", 1, 1, "x")
    assert pairing.owner() is None
    assert pairing.redeem(code.lower().replace("-", " "), 10, 20, "owner")  # typed loosely
    owner = pairing.owner()
    assert owner is not None and (owner.chat_id, owner.user_id) == (10, 20)
    assert not pairing.redeem(code, 66, 66, "mallory")  # used
    assert pairing.owner() == owner

    late = pairing.new_code()
    clock.advance(CODE_TTL + timedelta(seconds=1))
    assert not pairing.redeem(late, 66, 66, "mallory")  # expired
    fresh = pairing.new_code()
    assert pairing.redeem(fresh, 11, 21, "new phone")  # a new code re-pairs (positive control)
    assert pairing.owner() is not None and pairing.owner().user_id == 21  # type: ignore[union-attr]


def test_mama_telegram_pair_code_prints_a_code_the_bot_accepts(
    tmp_path: Path, clean_env: object
) -> None:
    home = tmp_path / "home"
    result = CliRunner().invoke(
        cli, ["--home", str(home), "telegram", "pair-code"], env={"MAMA_DB_KEY": TEST_KEY_HEX}
    )
    assert result.exit_code == 0, result.output
    line = next(li for li in result.output.splitlines() if li.startswith("/pair "))
    code = line.split(" ", 1)[1]

    from mama_core.store import DbKey, Store

    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        db = RuntimeDb(store.reader(), store.path)
        try:
            assert Pairing(db).redeem(code, 5, 6, "owner")
        finally:
            db.close()
