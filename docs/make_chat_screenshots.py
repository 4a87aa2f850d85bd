"""The README's screenshots of the chat window, made from a real store.

    python -m docs.make_chat_screenshots [--out docs]

Seeds a temporary encrypted store with a conversation as the runtime stores it
(a Telegram exchange, two at the desk) and an agent proposal whose review card
was queued, then opens the chat window on it in a fresh process per picture:

- ``chat-window.png``: 100 % scaling, light palette (the one in the README);
- ``chat-window-150.png``: 150 % scaling (``QT_SCALE_FACTOR=1.5``);
- ``chat-window-dark.png``: 100 %, a dark palette (``ui.palette.dark_palette``).

Under Xvfb when it is installed, else offscreen (``docs.make_screenshots.display``).
Look at the pictures before committing them: nothing may be cut.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from docs.make_screenshots import KEY, REPO, display, model_cache

SHOTS: tuple[tuple[str, str, str], ...] = (
    ("chat-window.png", "1", "light"),
    ("chat-window-150.png", "1.5", "light"),
    ("chat-window-dark.png", "1", "dark"),
)
WINDOW_SIZE = (560, 680)

EXCHANGES: tuple[tuple[str, str, str], ...] = (
    ("telegram", "What did we decide about Friday deploys?",
     "#1 constraint: Never deploy on Fridays"),
    ("desk", "/remember fact The staging server is called kestrel", "Saved #2 (fact, active)."),
    ("desk", "/search staging", "#2 fact: The staging server is called kestrel"),
)  # fmt: skip


def seed(db: Path) -> None:
    """A conversation and one waiting proposal, stored as the runtime stores them."""
    from app.durable.desk import desk_input
    from app.durable.journal import DeliveryJournal
    from app.durable.mailbox import InputKind, Mailbox, NewInput
    from app.durable.schema import open_runtime_db
    from mama_core.embeddings import load_embedder
    from mama_core.memory import ActorKind, Engine, EngineConfig, Grant, SessionFacts, TurnKind
    from mama_core.store import DbKey, Store

    owner, owner_grant = SessionFacts.owner_cli(), Grant.owner()
    agent = SessionFacts(
        actor_kind=ActorKind.AGENT,
        actor_name="claude-code",
        turn=TurnKind.OWNER_MESSAGE,
        backend="claude-code",
    )
    with (
        Store.open(db, DbKey.from_secret(KEY)) as store,
        Engine(store, load_embedder(None, model_cache()), EngineConfig()) as engine,
    ):
        engine.dispatch(
            "memory.save",
            {
                "kind": "constraint",
                "summary": "Never deploy on Fridays",
                "applies_when": "releasing",
            },
            owner,
            owner_grant,
        )
        staging = {"kind": "fact", "summary": "The staging server is called kestrel"}
        engine.dispatch("memory.save", staging, owner, owner_grant)
        runtime_db = open_runtime_db(store)
        mailbox = Mailbox(runtime_db)
        for n, (where, asked, answer) in enumerate(EXCHANGES):
            new = (
                desk_input(asked)
                if where == "desk"
                else NewInput(InputKind.OWNER_MESSAGE, "telegram", f"42:{n}", asked)
            )
            mailbox.post(new)
            claimed = mailbox.claim()
            assert claimed is not None
            mailbox.complete(claimed, answer)
        proposed = engine.dispatch(
            "memory.save",
            {
                "kind": "preference",
                "summary": "Answer in short paragraphs unless asked for detail",
                "applies_when": "writing to the owner",
            },
            agent,
            Grant.agent(["global"]),
        )
        DeliveryJournal(runtime_db).enqueue_proposal(int(proposed["judgment_id"]))
        runtime_db.close()


def shoot(db: Path, out: Path, palette: str) -> None:
    """In this process: the chat window over ``db``."""
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, EngineConfig
    from mama_core.store import DbKey, Store
    from ui.bridge import EngineBridge
    from ui.chat_window import ChatWindow
    from ui.palette import dark_palette
    from ui.qt import QEventLoop, QtWidgets

    app = QtWidgets.QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    app.setStyle("Fusion")
    if palette == "dark":
        app.setPalette(dark_palette())
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    with (
        Store.open(db, DbKey.from_secret(KEY)) as store,
        Engine(store, load_embedder(None, model_cache()), EngineConfig()) as engine,
    ):
        bridge = EngineBridge(engine, store)
        window = ChatWindow(bridge, store, lambda: None)
        window.resize(*WINDOW_SIZE)

        async def scenario() -> None:
            window.show()
            await window.reload()
            window.box.setPlainText("Thanks! What is due this week?")
            if not window.grab().save(str(out), "PNG"):
                raise SystemExit(f"could not write {out}")
            window.close()
            await window.aclose()

        loop.run_until_complete(scenario())
        bridge.close()
        window.deleteLater()
    loop.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.make_chat_screenshots", description=__doc__
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--one", nargs=3, metavar=("DB", "PNG", "PALETTE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        db, png, palette = args.one
        shoot(Path(db), Path(png), palette)
        return 0
    with tempfile.TemporaryDirectory(prefix="mama-chat-shots-") as tmp, display() as env:
        db = Path(tmp) / "mama.db"
        seed(db)
        for name, scale, palette in SHOTS:
            out = args.out / name
            command = [
                sys.executable,
                "-m",
                "docs.make_chat_screenshots",
                "--one",
                str(db),
                str(out),
            ]
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
