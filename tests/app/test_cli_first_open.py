"""A new store is never left empty or half made: a process killed (SIGKILL) at any
point of the first open, and three first commands started together on a new folder,
leave a store every later command opens. An empty file an older MAMA left that way is
kept aside and replaced; a truly emptied store (one that held data left its anchors)
is still refused, whichever copy of the anchor is left."""

from __future__ import annotations

from pathlib import Path

from mama_core.errors import NotADatabaseError
from mama_core.store import Store
from tests.app.test_cli_store_errors import assert_one_line_error, run_mama
from tests.first_open import KEY, kill_trials, problem_opening, race_first_commands


def test_a_kill_at_any_point_of_the_first_open_leaves_a_usable_folder(tmp_path: Path) -> None:
    tally = kill_trials(tmp_path, runs=40)
    assert tally.failures == []
    assert tally.killed >= 20, tally  # the kills did land inside the open
    # Control: the check itself sees an empty store left in place.
    emptied = tmp_path / "emptied" / "mama.db"
    emptied.parent.mkdir()
    emptied.write_bytes(b"")
    problem = problem_opening(emptied)
    assert problem is not None and "empty (0 bytes)" in problem


def test_a_leftover_of_a_killed_creation_is_removed_not_used(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    leftover = home / "mama.db.creating-4242"
    leftover.write_bytes(b"half a store")
    (home / "mama.db.creating-4242-wal").write_bytes(b"")
    assert problem_opening(home / "mama.db") is None
    assert sorted(p.name for p in home.iterdir() if "creating" in p.name) == []
    # Control: the store made in its place is a real one.
    with Store.open(home / "mama.db", KEY) as store:
        assert store.store_id


def test_three_first_commands_together_all_succeed(tmp_path: Path, model_cache_dir: Path) -> None:
    for round_ in range(3):
        home = tmp_path / f"round-{round_}"
        results, summaries = race_first_commands(home, model_cache_dir)
        assert [r.returncode for r in results] == [0, 0, 0], [r.stderr for r in results]
        assert summaries == [f"Race note {n} is kept" for n in range(3)]


def test_a_real_store_emptied_later_is_still_refused(tmp_path: Path, model_cache_dir: Path) -> None:
    home = tmp_path / "home"
    made = run_mama(home, "remember", "Medlars ripen late", "--kind", "fact", cache=model_cache_dir)
    assert made.returncode == 0, made.stderr  # control: a real store was made
    (home / "mama.db").write_bytes(b"")
    refused = run_mama(home, "search", "medlars", cache=model_cache_dir)
    assert refused.returncode == NotADatabaseError.exit_code, refused.stderr
    assert_one_line_error(refused, "not_a_database")
    assert "empty (0 bytes)" in refused.stderr
    assert (home / "mama.db").stat().st_size == 0


def test_an_empty_store_an_older_mama_left_serves_three_first_commands(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mama.db").write_bytes(b"")  # an older MAMA killed in its first open
    results, summaries = race_first_commands(home, model_cache_dir)
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr for r in results]
    assert summaries == [f"Race note {n} is kept" for n in range(3)]
    (aside,) = home.glob("mama.db.empty-*")  # kept aside once, by one of them
    assert aside.stat().st_size == 0
    said = [r.stderr for r in results if "was empty (0 bytes)" in r.stderr]
    assert len(said) == 1 and aside.name in said[0]


def test_an_emptied_store_is_refused_while_either_anchor_copy_is_left(
    tmp_path: Path, model_cache_dir: Path
) -> None:
    from app.local.chain_anchor import held_data_marks
    from app.local.paths import default_config

    home = tmp_path / "home"
    made = run_mama(home, "remember", "Quinces need frost", "--kind", "fact", cache=model_cache_dir)
    assert made.returncode == 0, made.stderr
    db = home / "mama.db"
    beside, *external = (m for m in held_data_marks(db, default_config()) if m.exists())
    assert beside.name == "mama.db.anchor.json" and len(external) == 1  # both copies kept
    db.write_bytes(b"")
    beside.unlink()  # the data folder's copy gone too: the config folder's still tells
    refused = run_mama(home, "search", "quinces", cache=model_cache_dir)
    assert refused.returncode == NotADatabaseError.exit_code, refused.stderr
    assert_one_line_error(refused, "not_a_database")
    assert external[0].name in refused.stderr
    assert db.stat().st_size == 0 and not list(home.glob("mama.db.empty-*"))
