"""A new store under stress: a process killed (SIGKILL) while it makes the store, and
first commands started together on a new data folder. Shared by
``tests/mama_core/store/test_first_open.py`` and ``bench/first_open.py``.

Run as ``python -m tests.first_open DB``, it is the child that is killed: it prints
``opening`` when ``Store.open`` begins (imports done), then opens (creating) the store.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mama_core.errors import MamaError
from mama_core.store import DbKey, Store, latest_version
from tests.conftest import REPO_ROOT, TEST_KEY_HEX

KEY = DbKey.from_secret(TEST_KEY_HEX)
MAMA = Path(sys.executable).parent / "mama"
OPENING = "opening"


def _child(db: Path) -> None:
    print(OPENING, flush=True)
    Store.open(db, KEY).close()
    print("open", flush=True)


def _spawn(db: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.first_open", str(db)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # the child says when the open begins
    assert line == OPENING, f"the child did not start its open: {line!r}"
    return proc


def first_open_seconds(folder: Path) -> float:
    """How long one uninterrupted first open takes here: the span kills are spread over."""
    db = folder / "timing" / "mama.db"
    proc = _spawn(db)
    started = time.monotonic()
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "open"
    took = time.monotonic() - started
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    return took


@dataclass
class KillTally:
    killed: int = 0
    finished: int = 0
    failures: list[str] = field(default_factory=list[str])


def kill_during_first_open(folder: Path, offset_s: float) -> tuple[bool, str | None]:
    """SIGKILL a child ``offset_s`` after its first open of ``folder/mama.db`` began (if
    it has not finished by then); then open the store as a later command would.
    Returns (killed?, what went wrong or None)."""
    db = folder / "mama.db"
    proc = _spawn(db)
    try:
        proc.wait(timeout=offset_s)
        killed = False
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=60)
        killed = True
    if proc.stdout is not None:
        proc.stdout.close()
    return killed, problem_opening(db)


def problem_opening(db: Path) -> str | None:
    """What keeps a later command from using the store at ``db`` (None: nothing). An
    empty file is a failure even though a later open replaces it (that is for what an
    older MAMA left): this MAMA must never leave one."""
    if db.exists() and db.stat().st_size == 0:
        return f"the store {db} was left empty (0 bytes)"
    try:
        with Store.open(db, KEY) as store:
            if store.schema_version != latest_version() or not store.store_id:
                return f"half-made store: schema {store.schema_version}, id {store.store_id!r}"
    except MamaError as exc:
        return f"{exc.code}: {exc.message}"
    left = sorted(p.name for p in db.parent.glob(f"{db.name}.creating-*"))
    if left:
        return f"temporary files left after an open: {left}"
    return None


def kill_trials(root: Path, runs: int, seed: int = 23) -> KillTally:
    """``runs`` kills, each in a new folder, at offsets spread over a first open's span."""
    span = first_open_seconds(root)
    rng = random.Random(seed)
    tally = KillTally()
    for run in range(runs):
        killed, problem = kill_during_first_open(root / f"kill-{run}", rng.uniform(0, span))
        tally.killed += killed
        tally.finished += not killed
        if problem is not None:
            tally.failures.append(f"run {run}: {problem}")
    return tally


def race_first_commands(
    home: Path, cache: Path, count: int = 3
) -> tuple[list[subprocess.CompletedProcess[str]], list[str]]:
    """Start ``count`` ``mama remember`` on the new folder ``home`` at once; return their
    results and the summaries the store then holds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(MAMA_HOME=str(home), MAMA_DB_KEY=TEST_KEY_HEX, MAMA_CACHE_DIR=str(cache))
    procs = [
        subprocess.Popen(
            [str(MAMA), "remember", f"Race note {n} is kept", "--kind", "fact"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    results: list[subprocess.CompletedProcess[str]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    summaries: list[str] = []
    if (home / "mama.db").exists():
        with Store.open(home / "mama.db", KEY, check_writable=False) as store:
            rows = store.conn.execute("SELECT summary FROM judgments ORDER BY summary")
            summaries = [str(r[0]) for r in rows]
    return results, summaries


if __name__ == "__main__":
    _child(Path(sys.argv[1]))
