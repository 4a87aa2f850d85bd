"""How fast the desktop app starts: cold start to the tray icon, and the review window
shown (lists filled) over a store of 10,000 memories.

    python -m bench.startup [--memories 10000] [--runs 3] [--bundle dist/mama/mama]

Cold start runs ``python -m ui.entry`` in a fresh process (the console script
``mama``) with ``MAMA_STARTUP_PROBE`` set, so the app writes its milestones to a
file: the time to ``tray_shown`` is measured from just before the process is
spawned (interpreter, imports, QApplication and all). The review window is then
requested the way a person does it a second time, by launching ``mama`` again
(single instance: the first one shows its window), and timed from the request
reaching the app (``review_requested``: before the window is even built) to the
window shown with the tab in view filled (``review_first_tab``); the time until
every other tab, the audit log and the filters are filled too is printed beside.
Under Xvfb + trayer when they are installed (a real tray), else offscreen.
With ``--bundle PROGRAM`` (the ``mama`` of an unpacked PyInstaller bundle) each run
also cold-starts the bundle, right after the venv's app, and both are reported.

The 10,000 memories are saved through the real engine (owner saves, agent
proposals, retirements). To keep that fast, their texts repeat a few hundred
distinct sentences, each embedded once by the real model and remembered
(``MemoEmbedder``), so every stored vector is the real vector of its text.
The built store is cached (keyed by the schema's migrations) for later runs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mama_core.embeddings import Role

REPO = Path(__file__).resolve().parent.parent
TARGET_TRAY_S = 2.0
TARGET_WINDOW_S = 0.300
TARGET_BUNDLE_RATIO = 1.5
SEED_VERSION = "2"
BENCH_KEY = "5a" * 32

SUBJECTS = (
    "the release train",
    "the staging server",
    "the billing service",
    "code review",
    "the mobile app",
    "the on-call rota",
    "the data warehouse",
    "customer support",
    "the design system",
    "the quarterly report",
    "the hiring plan",
    "the public API",
    "the search index",
    "the marketing site",
    "the nightly backup",
    "the security audit",
    "the team offsite",
    "the invoice export",
    "the onboarding guide",
    "the test suite",
)
PREDICATES = (
    "ships on Thursdays after the smoke tests pass",
    "needs two approvals before anything merges",
    "is owned by the platform team in Berlin",
    "moved to the new Kubernetes cluster in March",
    "is paused until the budget review is done",
    "runs every night at two in the morning",
    "uses Postgres 16 with logical replication",
    "is documented in the engineering wiki",
    "has a weekly sync on Monday mornings",
    "was migrated from the old monolith last spring",
    "must stay below two hundred milliseconds at p95",
    "is reviewed by legal before each launch",
    "sends a summary to the owner every Friday",
    "depends on the vendor contract renewed in June",
    "keeps its secrets in the cloud key vault",
    "is frozen during the December holidays",
    "reports errors to the shared Sentry project",
    "prefers short written updates over meetings",
    "has its roadmap in the product board",
    "was rewritten in Rust for speed",
)
SCOPES = ("global", "global", "global", "project:web", "project:mobile", "user:owner")


DISTINCT = 200
"""How many distinct sentences the seed cycles through (each is embedded once)."""


def sentence(i: int) -> str:
    """One of ``DISTINCT`` sentences, by index."""
    i %= DISTINCT
    subject = SUBJECTS[i % len(SUBJECTS)]
    predicate = PREDICATES[(i // len(SUBJECTS)) % len(PREDICATES)]
    return f"{subject[0].upper()}{subject[1:]} {predicate}."


class MemoEmbedder:
    """The real embedder, remembering each text's vector (the seed repeats texts)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._memo: dict[str, dict[str, np.ndarray]] = {}

    @property
    def model_id(self) -> str:
        return str(self._inner.model_id)

    @property
    def dim(self) -> int:
        return int(self._inner.dim)

    def embed(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray:
        memo = self._memo.setdefault(role, {})  # a query vector is never a passage's
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            for text, vector in zip(missing, self._inner.embed(missing, role), strict=True):
                memo[text] = np.asarray(vector, dtype=np.float32)
        return np.stack([memo[t] for t in texts])

    def embed_one(self, text: str, role: Role = "passage") -> np.ndarray:
        return self.embed([text], role)[0]


def seed_payloads(n: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(who, memory.save payload) for ``n`` memories: mostly owner facts and decisions,
    some owner guidance, and one agent proposal in sixty."""
    for i in range(n):
        text = sentence(i)
        scope = SCOPES[i % len(SCOPES)]
        if i % 60 == 7:
            yield (
                "agent",
                {
                    "kind": "preference",
                    "summary": f"Mention that {text[0].lower()}{text[1:]}",
                    "applies_when": "reporting on work",
                    "scopes": [scope],
                },
            )
        elif i % 10 == 3:
            yield (
                "owner",
                {
                    "kind": "constraint",
                    "summary": text,
                    "applies_when": "planning work",
                    "scopes": [scope],
                },
            )
        else:
            yield (
                "owner",
                {"kind": "decision" if i % 4 == 0 else "fact", "summary": text, "scopes": [scope]},
            )


def build_store(path: Path, n: int, embedder: Any) -> dict[str, int]:
    """Save ``n`` memories into a new store at ``path`` through the engine; retire one in 40."""
    from mama_core.memory import (
        ActorKind,
        Engine,
        EngineConfig,
        Grant,
        SessionFacts,
        TurnKind,
    )
    from mama_core.store import DbKey, Store

    owner = (SessionFacts.owner_cli(), Grant.owner())
    agent = (
        SessionFacts(ActorKind.AGENT, "claude-code", turn=TurnKind.OWNER_MESSAGE),
        Grant.agent(["global", "project:web", "project:mobile", "user:owner"], "global"),
    )
    counts = {"saved": 0, "proposed": 0, "retired": 0}
    with (
        Store.open(path, DbKey.from_secret(BENCH_KEY)) as store,
        # The generated sentences are distinct records by construction: kept as given,
        # not merged as restatements of each other.
        Engine(store, MemoEmbedder(embedder), EngineConfig(check_restatements=False)) as engine,
    ):
        # Seeding only: no fsync per commit (the file is a throwaway until it is complete).
        store.conn.execute("PRAGMA synchronous = OFF")
        for i, (who, payload) in enumerate(seed_payloads(n)):
            receipt = engine.dispatch("memory.save", payload, *(agent if who == "agent" else owner))
            counts["saved"] += 1
            if receipt["status"] == "proposed":
                counts["proposed"] += 1
            elif i % 40 == 11:
                engine.dispatch(
                    "memory.retire",
                    {"id": receipt["judgment_id"], "reason": "no longer true"},
                    *owner,
                )
                counts["retired"] += 1
    return counts


def _schema_fingerprint() -> str:
    """The migrations and the seed's version: a cached store of another schema is rebuilt.
    (Engine code changes do not invalidate it: the rows are valid data for any engine
    that opens this schema, and rebuilding costs most of a minute.)"""
    digest = hashlib.sha256(SEED_VERSION.encode())
    for source in sorted((REPO / "mama_core" / "store" / "sql").glob("*.sql")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def cached_store(n: int, embedder: Any, cache_dir: Path) -> Path:
    """A store of ``n`` memories (key ``BENCH_KEY``), built once per schema version."""
    folder = cache_dir / "seeded-stores"
    target = folder / f"mama-{n}-{embedder.model_id}-{_schema_fingerprint()}.db"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"mama-{n}-*.db"):
        stale.unlink()
    with tempfile.TemporaryDirectory(dir=folder) as work:
        built = Path(work) / "mama.db"
        build_store(built, n, embedder)
        os.replace(built, target)
    return target


def copy_store(template: Path, home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    target = home / "mama.db"
    shutil.copyfile(template, target)
    return target


# --- measuring --------------------------------------------------------------------------


@dataclass(frozen=True)
class StartupFigures:
    tray_s: float
    memory_open_s: float
    window_s: float
    window_all_s: float
    platform: str


def _free_display() -> int:
    for number in range(90, 200):
        if (
            not Path(f"/tmp/.X11-unix/X{number}").exists()
            and not Path(f"/tmp/.X{number}-lock").exists()
        ):
            return number
    raise RuntimeError("no free X display number")


@contextmanager
def display() -> Iterator[dict[str, str]]:
    """Xvfb + trayer when installed (a real tray), else the offscreen platform."""
    if not (shutil.which("Xvfb") and shutil.which("trayer")):
        yield {"QT_QPA_PLATFORM": "offscreen"}
        return
    number = _free_display()
    xvfb = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {"DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
    try:
        _wait_for_socket(Path(f"/tmp/.X11-unix/X{number}"))
        trayer = subprocess.Popen(
            [
                "trayer",
                "--edge",
                "top",
                "--align",
                "right",
                "--widthtype",
                "pixel",
                "--width",
                "120",
                "--height",
                "32",
            ],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield env
        finally:
            trayer.terminate()
            trayer.wait(10)
    finally:
        xvfb.terminate()
        xvfb.wait(10)


def _wait_for_socket(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            probe = socket.socket(socket.AF_UNIX)
            try:
                probe.connect(str(path))
                return
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.02)
    raise TimeoutError(f"{path} did not appear")


def _wait_for_marks(
    probe: Path, names: Sequence[str], process: subprocess.Popen[bytes], timeout: float = 120.0
) -> dict[str, float]:
    from ui.startup_probe import read_marks

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        marks = read_marks(probe)
        if all(name in marks for name in names):
            return marks
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with {process.returncode} before {names}")
        time.sleep(0.01)
    raise TimeoutError(f"no {names} in {probe}")


def measure_once(
    template: Path,
    cache: Path,
    display_env: dict[str, str],
    command: Sequence[str] = (sys.executable, "-m", "ui.entry"),
) -> StartupFigures:
    """One cold start of the app (``command``) over a copy of ``template``."""
    with tempfile.TemporaryDirectory(prefix="mama-bench-startup-") as work:
        home = Path(work) / "home"
        copy_store(template, home)
        probe = Path(work) / "probe"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
        env.update(display_env)
        env.update(
            MAMA_HOME=str(home),
            MAMA_DB_KEY=BENCH_KEY,
            MAMA_CACHE_DIR=str(cache),
            MAMA_STARTUP_PROBE=str(probe),
            XDG_CONFIG_HOME=str(Path(work) / "config"),
        )
        command = list(command)
        began = time.time()
        app = subprocess.Popen(
            command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            marks = _wait_for_marks(probe, ["tray_shown", "memory_open"], app)
            subprocess.run(
                command,
                env=env,
                cwd=REPO,
                check=True,
                timeout=60,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            marks = _wait_for_marks(probe, ["review_shown", "review_loaded"], app)
        finally:
            app.terminate()
            app.wait(30)
    return StartupFigures(
        tray_s=marks["tray_shown"] - began,
        memory_open_s=marks["memory_open"] - began,
        window_s=marks["review_first_tab"] - marks["review_requested"],
        window_all_s=marks["review_loaded"] - marks["review_requested"],
        platform=display_env.get("QT_QPA_PLATFORM", "?"),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--bundle", type=Path, default=None, help="also start this bundled mama program"
    )
    args = parser.parse_args(argv)

    from mama_core.embeddings import load_embedder

    cache = Path(
        os.environ.get("MAMA_TEST_MODEL_CACHE", Path.home() / ".cache" / "mama-test-models")
    )
    embedder = load_embedder(None, cache)
    began = time.perf_counter()
    template = cached_store(args.memories, embedder, cache)
    print(
        f"store: {args.memories} memories ({template.name}, "
        f"ready in {time.perf_counter() - began:.1f} s)"
    )
    figures: list[StartupFigures] = []
    bundled: list[StartupFigures] = []
    bundle_command = [str(args.bundle.resolve())] if args.bundle else None
    with display() as env:
        measure_once(template, cache, env)  # warm the OS file cache; not counted
        if bundle_command:
            measure_once(template, cache, env, bundle_command)
        for _ in range(args.runs):
            figures.append(measure_once(template, cache, env))
            if bundle_command:
                bundled.append(measure_once(template, cache, env, bundle_command))
    tray = sorted(f.tray_s for f in figures)
    window = sorted(f.window_s for f in figures)
    opened = sorted(f.memory_open_s for f in figures)
    window_all = sorted(f.window_all_s for f in figures)
    print(f"platform: {figures[0].platform}, runs: {len(figures)} (median, worst)")
    print(
        f"cold start to tray icon shown: {_median(tray):.3f} s, {tray[-1]:.3f} s"
        f" (target <= {TARGET_TRAY_S:.1f} s)"
    )
    print(f"cold start to memory open:     {_median(opened):.3f} s, {opened[-1]:.3f} s")
    print(
        f"review window shown, tab in view filled, {args.memories} memories: "
        f"{_median(window) * 1000:.0f} ms, {window[-1] * 1000:.0f} ms"
        f" (target <= {TARGET_WINDOW_S * 1000:.0f} ms)"
    )
    print(
        f"  ... and every tab, the audit log and the filters filled: "
        f"{_median(window_all) * 1000:.0f} ms, {window_all[-1] * 1000:.0f} ms"
    )
    if bundled:
        bundle_tray = sorted(f.tray_s for f in bundled)
        ratio = _median(bundle_tray) / _median(tray)
        print(
            f"bundle ({args.bundle}) cold start to tray icon shown: "
            f"{_median(bundle_tray):.3f} s, {bundle_tray[-1]:.3f} s; "
            f"{ratio:.2f}x the venv's (target <= {TARGET_BUNDLE_RATIO}x)"
        )
    ok = _median(tray) <= TARGET_TRAY_S and _median(window) <= TARGET_WINDOW_S
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


if __name__ == "__main__":
    sys.exit(main())
