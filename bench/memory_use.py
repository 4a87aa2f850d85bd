"""How much memory the tray holds while it idles, and what each part of it costs.

    python -m bench.memory_use [--model minilm|e5] [--idle 20] [--memories 20] [--no-imports]

The desktop app (``python -m ui.entry``, the ``mama`` console script) is started over a
tiny store with the chosen built-in embedding model, under Xvfb + trayer when they are
installed (a real tray; else offscreen), with ``MAMA_STARTUP_PROBE`` set. Once it marks
``tray_shown`` and has opened the memory, it is left alone for ``--idle`` seconds (20:
the benchmark's definition of "idle") and then its resident set is read from
``/proc/PID/smaps``: the total (the figure held to the target), and each mapping grouped by
what it belongs to (Qt's libraries, numpy's, llama.cpp's, the model file, the system's
libraries, and the anonymous heap that every Python object and llama.cpp buffer lives
in). The heap cannot say whose it is, so a second table measures each piece the tray
might load, each in a fresh interpreter: RSS after ``import X`` less a bare
interpreter's (``/proc/self/smaps_rollup``), and the embedding model loaded and used.
The tray's own ``sys.modules`` once its agent has started (the probe's ``modules``
line) says which of those it holds. Last, the review window is asked for as a person
does it (a second ``mama``), which loads the embedding model: the time until it is
loaded and the RSS then are printed beside (the tray frees the model after
``MODEL_IDLE_RELEASE_S`` without a search or a save).

``rss_mb()`` is this process's RSS, for the other benchmarks' reports.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS_MB = {"minilm": 150.0, "e5": 200.0}
MODELS = {"minilm": "all-MiniLM-L6-v2", "e5": "multilingual-e5-small"}
HEAVY_MODULES = (
    "mcp",
    "telegram",
    "slack_sdk",
    "httpx",
    "anyio",
    "jinja2",
    "llama_cpp",
    "gguf",
    "detect_secrets",
    "keyring",
    "pydantic",
    "numpy",
)
"""Top-level modules whose presence in the idle tray the report names."""
SETTLE_S = 3.0
"""Seconds after the model has loaded for the review window before the second reading."""


def rss_mb() -> float:
    """Resident set size in MiB (Linux ``/proc``; 0 where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


# --- the running tray, by mapping ------------------------------------------------------

_PARTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("model file (mmap)", re.compile(r"\.gguf$")),
    ("Qt (PySide6, shiboken, libQt6)", re.compile(r"PySide6|shiboken6|libQt6|libicu")),
    ("llama.cpp (libllama, libggml)", re.compile(r"llama_cpp|libllama|libggml")),
    ("numpy (+ its OpenBLAS)", re.compile(r"numpy")),
    ("pydantic-core", re.compile(r"pydantic_core")),
    ("SQLCipher", re.compile(r"sqlcipher3")),
    ("Python (interpreter, lib-dynload)", re.compile(r"libpython|/python3\.\d+$|lib-dynload")),
    ("other site-packages", re.compile(r"site-packages")),
    ("fonts, icons, locale", re.compile(r"\.(ttf|otf|pcf|cache-\d+|mo)$|/fonts/|locale")),
    ("system libraries (X11, GL, libc…)", re.compile(r"^/(usr/)?lib")),
    ("heap + anonymous (Python objects, llama.cpp and Qt buffers)", re.compile(r"^$|^\[")),
)


def smaps_parts(pid: int) -> dict[str, float]:
    """RSS in MiB of each part of process ``pid``, from ``/proc/PID/smaps``."""
    parts: dict[str, float] = defaultdict(float)
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if not fields[0].endswith(":"):  # a mapping's header: range, perms, …, path
            name = fields[5] if len(fields) == 6 else ""
        elif fields[0] == "Rss:":
            parts[_part_of(name)] += int(fields[1]) / 1024
    return dict(parts)


def _part_of(mapping: str) -> str:
    for part, pattern in _PARTS:
        if pattern.search(mapping):
            return part
    return "other files"


def status_mb(pid: int) -> dict[str, float]:
    """VmRSS and its anonymous / file-backed halves, in MiB."""
    wanted = {"VmRSS", "RssAnon", "RssFile", "RssShmem"}
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in wanted:
            values[key] = int(rest.split()[0]) / 1024
    return values


def measure_tray(model: str, idle_s: float, memories: int, cache: Path) -> dict[str, object]:
    """Start the tray over a tiny store with ``model``, idle, and read its memory."""
    from bench.startup import BENCH_KEY, REPO, _wait_for_marks, cached_store, copy_store, display
    from mama_core.embeddings import load_embedder

    embedder = load_embedder(None, cache, builtin=MODELS[model])
    template = cached_store(memories, embedder, cache)
    embedder.close()
    with tempfile.TemporaryDirectory(prefix="mama-bench-memory-") as work, display() as shown:
        home = Path(work) / "home"
        copy_store(template, home)
        (home / "settings.json").write_text(json.dumps({"embedding_model": MODELS[model]}))
        probe = Path(work) / "probe"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
        env.update(shown)
        env.update(
            MAMA_HOME=str(home),
            MAMA_DB_KEY=BENCH_KEY,
            MAMA_CACHE_DIR=str(cache),
            MAMA_STARTUP_PROBE=str(probe),
            MAMA_CONFIG_DIR=str(Path(work) / "config"),
            XDG_CONFIG_HOME=str(Path(work) / "config"),
        )
        app = subprocess.Popen(
            [sys.executable, "-m", "ui.entry"],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for_marks(probe, ["tray_shown"], app)
            time.sleep(idle_s)  # the benchmark's definition of idle, not a wait for an event
            _wait_for_marks(probe, ["memory_open"], app)
            status = status_mb(app.pid)
            parts = smaps_parts(app.pid)
            modules = _probe_modules(probe)
            # Then as a person searches: the review window asked for (a second ``mama``),
            # which loads the model; read again once it is loaded and a grown context
            # had its CONTEXT_IDLE_S to go.
            subprocess.run(
                [sys.executable, "-m", "ui.entry", "open", "review"],
                env=env,
                cwd=REPO,
                check=True,
                timeout=60,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            marks = _wait_for_marks(probe, ["model_loaded", "review_loaded"], app)
            time.sleep(SETTLE_S)  # part of the definition, like the idle time
            searching = status_mb(app.pid)
            model_parts = smaps_parts(app.pid)
        finally:
            app.terminate()
            app.wait(30)
    return {
        "platform": shown.get("QT_QPA_PLATFORM", "?"),
        "status": status,
        "parts": parts,
        "modules": modules,
        "searching": searching,
        "searching_parts": model_parts,
        "model_load_s": marks["model_loaded"] - marks["review_requested"],
    }


def _probe_modules(probe: Path) -> list[str] | None:
    """The heavy modules the tray held (the probe's ``modules`` line), if it wrote one."""
    if not probe.exists():
        return None
    lines = [line for line in probe.read_text("utf-8").splitlines() if line.startswith("modules ")]
    return lines[-1].split()[2:] if lines else None


# --- what each piece costs on its own ---------------------------------------------------

_ROLLUP = """
import pathlib
def rss():
    for line in pathlib.Path('/proc/self/smaps_rollup').read_text().splitlines():
        if line.startswith('Rss:'):
            return int(line.split()[1]) / 1024
"""

IMPORT_PIECES: tuple[tuple[str, str], ...] = (
    ("numpy", "import numpy"),
    ("pydantic (+ pydantic-core)", "import pydantic"),
    ("Qt: PySide6 QtWidgets", "from PySide6 import QtWidgets"),
    (
        "Qt: + a QApplication and a tray icon",
        "from PySide6 import QtWidgets, QtGui\n"
        "app = QtWidgets.QApplication([])\n"
        "icon = QtWidgets.QSystemTrayIcon(QtGui.QIcon())",
    ),
    ("SQLCipher (sqlcipher3)", "import sqlcipher3"),
    ("llama_cpp (the library)", "import llama_cpp"),
    ("httpx", "import httpx"),
    ("python-telegram-bot", "import telegram.ext"),
    ("MCP SDK", "import mcp.server"),
    ("slack-sdk", "import slack_sdk"),
    ("mama_core.memory (the engine)", "import mama_core.memory"),
    ("ui.desktop (the tray's modules)", "import ui.desktop"),
)


def _model_piece(model: str, cache: Path) -> str:
    return (
        "from pathlib import Path\n"
        "from mama_core.embeddings import load_embedder\n"
        f"e = load_embedder(None, Path({str(cache)!r}), builtin={MODELS[model]!r})\n"
        "import llama_cpp\n"
        "before = rss()\n"
        "e.embed_one('warm-up', 'query')\n"
    )


def piece_cost_mb(code: str, env: dict[str, str]) -> float:
    """RSS a fresh interpreter gains by running ``code`` (``before`` may be set in it)."""
    script = f"{_ROLLUP}\nbefore = rss()\n{code}\nprint(rss() - before)\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def measure_pieces(model: str, cache: Path, display_env: dict[str, str]) -> list[tuple[str, float]]:
    env = {**os.environ, **display_env}
    rows = [(label, piece_cost_mb(code, env)) for label, code in IMPORT_PIECES]
    model_cost = piece_cost_mb(_model_piece(model, cache), env)
    rows.append((f"{MODELS[model]} loaded + one query embedded", model_cost))
    return rows


# --- report ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory_use", description=__doc__)
    parser.add_argument("--model", choices=sorted(MODELS), default="e5")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds idle after tray_shown")
    parser.add_argument("--memories", type=int, default=20, help="memories in the tiny store")
    parser.add_argument("--no-imports", action="store_true", help="skip the per-piece table")
    args = parser.parse_args(argv)

    from bench.startup import display

    cache = Path(
        os.environ.get("MAMA_TEST_MODEL_CACHE", Path.home() / ".cache" / "mama-test-models")
    )
    result = measure_tray(args.model, args.idle, args.memories, cache)
    status: dict[str, float] = result["status"]  # type: ignore[assignment]
    parts: dict[str, float] = result["parts"]  # type: ignore[assignment]
    print(
        f"tray idle {args.idle:.0f} s after tray_shown, model {MODELS[args.model]}, "
        f"{args.memories} memories, platform {result['platform']}"
    )
    print("part of the tray's resident set (from /proc/PID/smaps)            MiB")
    for part, mb in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {part:<64} {mb:6.1f}")
    print(
        f"  (anonymous {status.get('RssAnon', 0):.1f}, file-backed {status.get('RssFile', 0):.1f}, "
        f"shared memory {status.get('RssShmem', 0):.1f})"
    )
    modules = result["modules"]
    if modules is not None:
        held = [m for m in HEAVY_MODULES if m in modules]
        absent = [m for m in HEAVY_MODULES if m not in modules]
        print(f"heavy modules the idle tray holds: {', '.join(held) or 'none'}")
        print(f"  ... and does not: {', '.join(absent) or 'none'}")
    if not args.no_imports:
        with display() as shown:
            rows = measure_pieces(args.model, cache, shown)
        print("what a piece costs on its own (fresh interpreter, RSS gained)    MiB")
        for label, mb in rows:
            print(f"  {label:<64} {mb:6.1f}")
    searching: dict[str, float] = result["searching"]  # type: ignore[assignment]
    searching_parts: dict[str, float] = result["searching_parts"]  # type: ignore[assignment]
    print(
        f"review window open, model loaded ({result['model_load_s']:.2f} s from the request "
        f"to the model ready): {searching['VmRSS']:.1f} MiB, of which"
    )
    for part in sorted(searching_parts, key=lambda p: -searching_parts[p])[:3]:
        print(f"  {part:<64} {searching_parts[part]:6.1f}")
    print("  (the tray frees the model again after MODEL_IDLE_RELEASE_S without a search)")
    total = status["VmRSS"]
    target = TARGETS_MB[args.model]
    verdict = "target met" if total <= target else "TARGET MISSED"
    print(f"tray idle RSS: {total:.1f} MiB (target <= {target:.0f} MB): {verdict}")
    return 0 if total <= target else 1


if __name__ == "__main__":
    sys.exit(main())
