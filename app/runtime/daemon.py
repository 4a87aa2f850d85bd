"""``mama daemon``: the owner runtime without a window (no Qt is imported).

Opens the store with the key (environment or keyring; a daemon cannot ask for
a passphrase), loads the embedder and the engine, builds the configured agent
backend, starts the runtime and — when a bot token is configured — the
Telegram gateway, then runs until SIGTERM or SIGINT. It prints one ``ready``
line on stdout when serving, for supervisors and tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable

from app.backends.factory import make_backend
from app.keys import resolve_key
from app.logs import setup_file_logging
from app.paths import Paths
from app.runtime.context import ContextSettings
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.runtime.prompts import load_prompt
from app.runtime.transaction import RuntimeDb
from app.settings import Settings
from app.telegram.config import api_url, telegram_token
from mama_core.embeddings import load_embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import Store

log = logging.getLogger(__name__)


async def serve(
    paths: Paths,
    settings: Settings,
    stop: asyncio.Event,
    announce: Callable[[str], None] = print,
) -> None:
    """Run the runtime (and Telegram, if configured) until ``stop`` is set."""
    key = resolve_key(paths.db, None)
    store = Store.open(paths.db, key.key)
    try:
        embedder = await asyncio.to_thread(
            load_embedder, settings.embedding_model_path, paths.cache
        )
        engine = Engine(
            store, embedder, EngineConfig(tombstone_threshold=settings.tombstone_threshold)
        )
        state = RuntimeDb(store.reader(), store.path)
        try:
            await _run(paths, settings, engine, store, state, stop, announce)
        finally:
            engine.close()
            state.close()
    finally:
        store.close()


async def _run(
    paths: Paths,
    settings: Settings,
    engine: Engine,
    store: Store,
    state: RuntimeDb,
    stop: asyncio.Event,
    announce: Callable[[str], None],
) -> None:
    backend = make_backend(settings.agent_backend, paths.home, state, load_prompt())
    runtime_settings = RuntimeSettings(
        context=ContextSettings(guidance_budget_tokens=settings.guidance_budget_tokens)
    )
    runtime = OwnerRuntime(engine, store, backend, runtime_settings, db=state)
    token = telegram_token()
    gateway = None
    await runtime.start()
    try:
        if token:
            from app.telegram.gateway import TelegramGateway

            gateway = TelegramGateway(runtime, engine, token, api_url())
            await gateway.start()
        else:
            log.warning("no Telegram bot token: messages wait in the mailbox")
        announce(
            f"mama daemon: ready (agent {backend.name}, "
            f"telegram {'on' if gateway else 'off: no bot token'})"
        )
        await stop.wait()
    finally:
        # No new updates, then finish the turn's bookkeeping and any send in
        # flight, then close the Telegram client.
        if gateway is not None:
            await gateway.stop_receiving()
        await runtime.stop()
        if gateway is not None:
            await gateway.stop()


def run_daemon(paths: Paths, settings: Settings) -> None:
    """The command's body: log to the data folder and serve until a signal."""
    setup_file_logging(paths.log)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("mama daemon: %(levelname)s %(message)s"))
    logging.getLogger().addHandler(stderr)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)

        def announce(line: str) -> None:
            print(line, flush=True)

        await serve(paths, settings, stop, announce)

    asyncio.run(main())
