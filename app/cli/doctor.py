"""``mama doctor``: is this installation healthy, and where is everything?

Prints versions, the data folder, where the key comes from (never the key),
the schema version, the embedding model and how long a probe sentence takes
to embed. Exits 0 when all is well; otherwise the failing check's error.
"""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata

import click

from app.cli.context import CliContext
from app.cli.observations import purge_state_line
from mama_core.recall import count_missing
from mama_core.store import latest_version

PROBE_SENTENCE = "The owner prefers short answers on weekdays."


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _sqlcipher_versions(store_conn: object) -> str:
    conn = store_conn  # a sqlcipher3 connection
    cipher = conn.execute("PRAGMA cipher_version").fetchone()[0]  # type: ignore[attr-defined]
    sqlite = conn.execute("SELECT sqlite_version()").fetchone()[0]  # type: ignore[attr-defined]
    return f"SQLCipher {cipher}, SQLite {sqlite}"


@click.command()
@click.pass_obj
def doctor(obj: CliContext) -> None:
    """Check the installation: store, key and embedding model."""
    echo = click.echo
    echo(f"MAMA {_version('mama')} on Python {platform.python_version()} ({platform.system()})")
    echo(
        "  packages: "
        + ", ".join(
            f"{name} {_version(name)}"
            for name in ("sqlcipher3", "llama-cpp-python", "PySide6-Essentials", "numpy")
        )
    )
    echo(f"data folder: {obj.paths.home}")
    echo(f"cache folder: {obj.paths.cache}")
    key = obj.key
    echo(f"key: from {key.describe()}")
    store = obj.store()
    echo(
        f"store: {store.path} (schema {store.schema_version} of {latest_version()}, "
        f"{_sqlcipher_versions(store.conn)})"
    )
    echo(purge_state_line(store.conn))
    embedder = obj.embedder()
    vector = embedder.embed_one(PROBE_SENTENCE)  # the first call loads the model
    start = time.perf_counter()
    vector = embedder.embed_one(PROBE_SENTENCE)
    probe_ms = (time.perf_counter() - start) * 1000
    echo(f"model: {embedder.model_id} ({embedder.model_path}, dimension {embedder.dim})")
    echo(f"embed probe: {probe_ms:.1f} ms for one sentence (norm {float((vector**2).sum()):.3f})")
    cache = obj.engine().recall().cache
    if cache is not None:
        missing = count_missing(store.conn, embedder.model_id)
        echo(
            f"vector cache: {cache.vector_count} vectors, {cache.nbytes / 1e6:.1f} MB "
            f"({cache.dtype.name}); {missing} memories lack a vector"
            + (" (run 'mama reindex')" if missing else "")
        )
    _agent(obj)
    echo("all checks passed")


def _agent(obj: CliContext) -> None:
    """The agent backend, whether a runtime serves this folder, and Telegram's set-up."""
    from app.runtime.host import runtime_running
    from app.runtime.state import stored_pause
    from app.runtime.transaction import RuntimeDb
    from app.telegram.config import ENV_TOKEN, telegram_token
    from app.telegram.pairing import Pairing

    settings = obj.settings
    model = f", model {settings.local_model_path}" if settings.local_model_path else ""
    serving = (
        "running (the tray app or mama daemon)" if runtime_running(obj.paths) else "not running"
    )
    store = obj.store()
    db = RuntimeDb(store.reader(), store.path)
    try:
        owner = Pairing(db).owner()
        paused = " (paused)" if stored_pause(db) else ""
    finally:
        db.close()
    click.echo(f"agent: {settings.agent_backend}{model}{paused}; runtime {serving}")
    if os.environ.get(ENV_TOKEN, "").strip():
        token = f"bot token from {ENV_TOKEN}"
    elif telegram_token():
        token = "bot token from the keyring"
    else:
        token = "no bot token"
    paired = f"paired with @{owner.username}" if owner and owner.username else "not paired"
    click.echo(f"telegram: {token}, {paired}")
