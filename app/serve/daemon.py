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
import json
import logging
import signal
import sys
from collections.abc import Callable

from app.admin.copies import follow_purges
from app.durable.journal import reply_observations
from app.local.chain_anchor import StoreAnchors, held_data_marks
from app.local.keys import resolve_key
from app.local.log_redaction import RedactingFormatter
from app.local.logs import setup_file_logging
from app.local.paths import Paths
from app.local.settings import Settings
from app.serve.host import RuntimeHost
from mama_core.embeddings import load_embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import Store

log = logging.getLogger(__name__)


async def serve(
    paths: Paths,
    settings: Settings,
    stop: asyncio.Event,
    announce: Callable[[str], None] = print,
    as_json: bool = False,
) -> None:
    """Run the runtime (and Telegram, if configured) until ``stop`` is set.

    ``announce`` gets the ready line: words, or with ``as_json`` one JSON object.
    """
    key = resolve_key(paths.db, None)
    store = Store.open(paths.db, key.key, held_data_marks=held_data_marks(paths.db, paths.config))
    try:
        embedder = await asyncio.to_thread(
            load_embedder,
            settings.embedding_model_path,
            paths.cache,
            builtin=settings.embedding_model,
        )
        engine = Engine(
            store,
            embedder,
            EngineConfig(tombstone_threshold=settings.tombstone_threshold),
            StoreAnchors(paths.db, paths.config, store.store_id),
            replies=reply_observations,
        )
        follow_purges(engine, paths.home)
        try:
            host = RuntimeHost(paths, settings, engine, store)
            await host.start()
            try:
                status = await host.status()
                paused = ", paused from the tray" if status.paused else ""
                if as_json:
                    ready = {
                        "ready": True,
                        "agent": status.backend,
                        "paused": status.paused,
                        "telegram": status.telegram,
                    }
                    announce(json.dumps(ready, ensure_ascii=False, sort_keys=True))
                else:
                    announce(
                        f"mama daemon: ready (agent {status.backend}{paused}, "
                        f"telegram {status.telegram})"
                    )
                # Memories without a vector of this model (the default changed in an
                # update) are embedded in the background; the log says how far it got.
                await asyncio.to_thread(engine.catch_up_vectors)
                await stop.wait()
            finally:
                await host.stop()
        finally:
            engine.close()
    finally:
        store.close()


def run_daemon(paths: Paths, settings: Settings, as_json: bool = False) -> None:
    """The command's body: log to the data folder and serve until a signal."""
    setup_file_logging(paths.log)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(RedactingFormatter("mama daemon: %(levelname)s %(message)s"))
    logging.getLogger().addHandler(stderr)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)

        def announce(line: str) -> None:
            print(line, flush=True)

        await serve(paths, settings, stop, announce, as_json)

    asyncio.run(main())
