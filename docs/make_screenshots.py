"""The README's screenshots of the review window, made from a real store.

    python -m docs.make_screenshots [--out docs]

Seeds a temporary encrypted store through the real engine (owner memories, one
retired, and agent proposals, one a workflow with steps), then opens the
review window on it in a fresh process per picture, each with the workflow
proposal selected:

- ``review-window.png``: 100 % scaling, light palette (the one in the README);
- ``review-window-150.png``: 150 % scaling (``QT_SCALE_FACTOR=1.5``);
- ``review-window-dark.png``: 100 %, a dark palette (``ui.palette.dark_palette``).

Under Xvfb (the xcb platform, as on a desktop) when it is installed, else
offscreen. Look at the pictures before committing them: nothing may be cut.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEY = "5c" * 32
SHOTS: tuple[tuple[str, str, str], ...] = (
    ("review-window.png", "1", "light"),
    ("review-window-150.png", "1.5", "light"),
    ("review-window-dark.png", "1", "dark"),
)
WINDOW_SIZE = (1200, 720)
"""Logical pixels (at 150 %: 1800 x 1080 on Xvfb's 1920 x 1200 screen)."""
SELECTED_SUMMARY = "Run the linters before every commit"


def model_cache() -> Path:
    return Path(
        os.environ.get("MAMA_TEST_MODEL_CACHE", Path.home() / ".cache" / "mama-test-models")
    )


def seed(db: Path) -> None:
    """A small memory as an owner has it after a few days."""
    from mama_core.embeddings import load_embedder
    from mama_core.memory import ActorKind, Engine, EngineConfig, Grant, SessionFacts, TurnKind
    from mama_core.store import DbKey, Store

    agent = SessionFacts(
        actor_kind=ActorKind.AGENT,
        actor_name="claude-code",
        actor_version="2.1.332",
        turn=TurnKind.OWNER_MESSAGE,
        backend="claude-code",
        message_ref="telegram:812",
    )
    owner, owner_grant = SessionFacts.owner_cli(), Grant.owner()
    embedder = load_embedder(None, model_cache())
    with (
        Store.open(db, DbKey.from_secret(KEY)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        agent_grant = Grant.agent(["global"])
        for facts, grant, payload in (
            (owner, owner_grant, {"kind": "constraint", "summary": "Never deploy on Fridays",
                                  "applies_when": "planning a release"}),
            (owner, owner_grant, {"kind": "preference", "summary": "Reply in English",
                                  "applies_when": "writing to anyone"}),
            (owner, owner_grant, {"kind": "fact", "topic": "infrastructure",
                                  "summary": "The staging server is called kestrel"}),
            (agent, agent_grant, {"kind": "preference", "applies_when": "writing to the owner",
                                  "summary": "Answer in short paragraphs unless asked for detail"}),
            (agent, agent_grant, {"kind": "workflow", "summary": SELECTED_SUMMARY,
                                  "applies_when": "committing code",
                                  "steps": ["ruff check .", "ruff format --check .", "pyright"]}),
            (agent, agent_grant, {"kind": "preference", "topic": "formatting",
                                  "summary": "Prefer tables when comparing options",
                                  "applies_when": "comparing options"}),
        ):  # fmt: skip
            engine.dispatch("memory.save", payload, facts, grant)
        old = engine.dispatch(
            "memory.save", {"kind": "fact", "summary": "Standup is at 9:30"}, owner, owner_grant
        )
        retire = {"id": old["judgment_id"], "reason": "moved to 10:00"}
        engine.dispatch("memory.retire", retire, owner, owner_grant)


@contextmanager
def display() -> Iterator[dict[str, str]]:
    """Xvfb when installed (the environment to run under), else the offscreen platform."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAMA_", "QT_"))}
    if not shutil.which("Xvfb"):
        yield {**env, "QT_QPA_PLATFORM": "offscreen"}
        return
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1920x1200x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as chosen:
        number = chosen.readline().strip()
    try:
        yield {**env, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
    finally:
        xvfb.terminate()
        xvfb.wait(10)


def shoot(db: Path, out: Path, palette: str) -> None:
    """In this process: the review window over ``db``, the workflow proposal selected."""
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, EngineConfig
    from mama_core.store import DbKey, Store
    from ui.bridge import EngineBridge
    from ui.palette import dark_palette
    from ui.qt import QEventLoop, QtWidgets
    from ui.review.window import TAB_PROPOSED, ReviewWindow

    app = QtWidgets.QApplication([sys.argv[0]])
    app.setStyle("Fusion")
    if palette == "dark":
        app.setPalette(dark_palette())
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    embedder = load_embedder(None, model_cache())
    with (
        Store.open(db, DbKey.from_secret(KEY)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        bridge = EngineBridge(engine, store)
        window = ReviewWindow(bridge)
        window.resize(*WINDOW_SIZE)
        window.show()

        async def scenario() -> None:
            await window.load()
            window.show_tab(TAB_PROPOSED)
            model = window.lists[TAB_PROPOSED].model
            target = next(
                int(row["id"])
                for at in range(model.rowCount())
                if (row := model.record(at)) and row.get("summary") == SELECTED_SUMMARY
            )
            shown = loop.create_future()

            def seen(judgment_id: int) -> None:
                if judgment_id == target and not shown.done():
                    shown.set_result(judgment_id)

            window.detail_shown.connect(seen)
            window.select_id(target)
            await asyncio.wait_for(shown, 30)
            if not window.grab().save(str(out), "PNG"):
                raise SystemExit(f"could not write {out}")
            await window.aclose()

        loop.run_until_complete(scenario())
        bridge.close()
        window.close()
        window.deleteLater()
    loop.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.make_screenshots", description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--one", nargs=3, metavar=("DB", "PNG", "PALETTE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        db, png, palette = args.one
        shoot(Path(db), Path(png), palette)
        return 0
    with tempfile.TemporaryDirectory(prefix="mama-shots-") as tmp, display() as env:
        db = Path(tmp) / "mama.db"
        seed(db)
        for name, scale, palette in SHOTS:
            out = args.out / name
            command = [sys.executable, "-m", "docs.make_screenshots", "--one", str(db), str(out)]
            subprocess.run(
                [*command, palette],
                env={**env, "QT_SCALE_FACTOR": scale},
                cwd=REPO,
                check=True,
                timeout=300,
            )
            print(f"{out} ({scale}x, {palette})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
