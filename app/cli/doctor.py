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
from pathlib import Path
from typing import Any

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.cli.observations import purge_state_line
from app.local.build_info import this_build
from mama_core.embeddings import PASSAGE
from mama_core.memory.purge_pending import pending_purge
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


class DoctorReport:
    """What doctor found: lines for a person, or with ``--json`` one object at the end."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.facts: dict[str, Any] = {}

    def add(self, name: str, value: Any, line: str) -> None:
        """Record fact ``name``; print ``line`` now unless the report is JSON."""
        self.facts[name] = value
        if not self.as_json:
            # Each line on its own: escaping the whole text would show a report of several
            # lines (the connectors) as one line with literal ``\x0a`` in it.
            click.echo("\n".join(terminal_text(part) for part in line.split("\n")))

    def finish(self) -> None:
        if self.as_json:
            click.echo(json_text({"ok": True, **self.facts}))
        else:
            click.echo("all checks passed")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@click.pass_obj
def doctor(obj: CliContext, as_json: bool = False) -> None:
    """Check the installation: store, key and embedding model."""
    report = DoctorReport(as_json)
    packages = {
        name: _version(name)
        for name in ("sqlcipher3", "llama-cpp-python", "PySide6-Essentials", "numpy")
    }
    report.add(
        "mama",
        {"version": _version("mama"), "python": platform.python_version(), "os": platform.system()},
        f"MAMA {_version('mama')} on Python {platform.python_version()} ({platform.system()})",
    )
    report.add(
        "packages",
        packages,
        "  packages: " + ", ".join(f"{name} {version}" for name, version in packages.items()),
    )
    install = this_build()
    report.add("install", install.as_fact(), install.describe())
    report.add("data_folder", str(obj.paths.home), f"data folder: {obj.paths.home}")
    report.add("cache_folder", str(obj.paths.cache), f"cache folder: {obj.paths.cache}")
    key = obj.key
    report.add("key_source", key.describe(), f"key: from {key.describe()}")
    store = obj.store()
    versions = _sqlcipher_versions(store.conn)
    report.add(
        "store",
        {
            "path": str(store.path),
            "schema": store.schema_version,
            "latest_schema": latest_version(),
            "engine": versions,
        },
        f"store: {store.path} (schema {store.schema_version} of {latest_version()}, {versions})",
    )
    report.add("purge_pending", pending_purge(store.conn) is not None, purge_state_line(store.conn))
    _copies(obj, report)
    embedder = obj.embedder()
    vector = embedder.embed_one(PROBE_SENTENCE, PASSAGE)  # the first call loads the model
    start = time.perf_counter()
    vector = embedder.embed_one(PROBE_SENTENCE, PASSAGE)
    probe_ms = (time.perf_counter() - start) * 1000
    report.add(
        "model",
        {"id": embedder.model_id, "path": str(embedder.model_path), "dimension": embedder.dim},
        f"model: {embedder.model_id} ({embedder.model_path}, dimension {embedder.dim})",
    )
    norm = float((vector**2).sum())
    report.add(
        "embed_probe",
        {"ms": round(probe_ms, 1), "norm": round(norm, 3)},
        f"embed probe: {probe_ms:.1f} ms for one sentence (norm {norm:.3f})",
    )
    cache = obj.engine().recall().cache
    if cache is not None:
        missing = count_missing(store.conn, embedder.model_id)
        report.add(
            "vector_cache",
            {
                "vectors": cache.vector_count,
                "bytes": cache.nbytes,
                "dtype": cache.dtype.name,
                "missing": missing,
            },
            f"vector cache: {cache.vector_count} vectors, {cache.nbytes / 1e6:.1f} MB "
            f"({cache.dtype.name}); {missing} memories lack a vector"
            + (
                " (they are embedded in the background while MAMA runs, or run 'mama reindex')"
                if missing
                else ""
            ),
        )
    _connectors(obj, report)
    _coding_project(obj, report)
    problem = _agent(obj, report)
    if problem is not None:
        from app.backends.base import BackendUnavailableError

        raise BackendUnavailableError(f"The agent backend cannot run: {problem}")
    report.finish()


def _copies(obj: CliContext, report: DoctorReport) -> None:
    """The files outside the store that may hold the owner's text (what a purge reaches)."""
    from app.admin.copies import Where, owner_copies

    copies = owner_copies(Where.for_store(obj.paths.home, obj.db_path), obj.store().conn)
    header = f"copies of your text outside the store: {len(copies)} (a purge erases them)"
    report.add("copies", [c.as_dict() for c in copies], header)
    if not report.as_json:
        for copy in copies:
            click.echo(terminal_text(f"  {copy.kind}: {copy.path}"))


def _agent(obj: CliContext, report: DoctorReport) -> str | None:
    """The agent backend, whether a runtime serves this folder, and Telegram's set-up;
    returns what keeps the backend from running here (a CLI not installed), if anything."""
    from app.backends.factory import backend_problem, make_backend
    from app.durable.state import stored_pause
    from app.durable.transaction import RuntimeDb
    from app.serve.host import runtime_running
    from app.telegram.config import ENV_TOKEN, telegram_token
    from app.telegram.pairing import Pairing

    settings = obj.settings
    model = f", model {settings.local_model_path}" if settings.local_model_path else ""
    serving = (
        "running (the tray app or mama daemon)" if runtime_running(obj.paths) else "not running"
    )
    store = obj.store()
    db = RuntimeDb(store.new_connection(), store.path)
    try:
        owner = Pairing(db).owner()
        paused = " (paused)" if stored_pause(db) else ""
        backend = make_backend(
            settings.agent_backend, obj.paths.home, db, "", local_model=settings.local_model_path
        )
        problem = backend_problem(backend)
    finally:
        db.close()
    report.add(
        "agent",
        {
            "backend": settings.agent_backend,
            "paused": bool(paused),
            "runtime_running": serving.startswith("running"),
            "problem": problem,
        },
        f"agent: {settings.agent_backend}{model}{paused}; runtime {serving}",
    )
    if os.environ.get(ENV_TOKEN, "").strip():
        token = f"bot token from {ENV_TOKEN}"
    elif telegram_token():
        token = "bot token from the keyring"
    else:
        token = "no bot token"
    paired = f"paired with @{owner.username}" if owner and owner.username else "not paired"
    report.add(
        "telegram",
        {"token": token, "paired": owner is not None, "owner": owner.username if owner else None},
        f"telegram: {token}, {paired}",
    )
    return problem


def _coding_project(obj: CliContext, report: DoctorReport) -> None:
    """Which project a coding agent started here is bound to (``mama mcp`` and its
    hooks), and how it was identified; looked at without claiming an older scope."""
    from app.mcp.project_scope import ProjectNameError, claims_folder, resolve_binding

    try:
        binding = resolve_binding(Path.cwd(), claims=claims_folder(obj.paths.home), adopt=False)
    except (ProjectNameError, OSError) as exc:
        report.add("coding_project", None, f"coding agent project here: none ({exc})")
        return
    report.add(
        "coding_project",
        {
            "scope": binding.project_scope,
            "adopted": binding.adopted,
            "from": binding.source,
        },
        f"coding agent project here: {binding.explain()}",
    )


def _connectors(obj: CliContext, report: DoctorReport) -> None:
    """Each connector's health (last poll, items, last error), as `connectors list`."""
    from app.durable.connector_store import ConnectorStore
    from app.durable.schema import open_runtime_db

    configs = obj.settings.connectors
    if not configs:
        report.add("connectors", [], "connectors: none")
        return
    db = open_runtime_db(obj.store())
    try:
        health = {h.name: h for h in ConnectorStore(db).all_health()}
    finally:
        db.close()
    rows: list[dict[str, Any]] = []
    lines = ["connectors:"]
    for config in configs:
        state = health.get(config.name)
        rows.append(
            state.to_wire()
            if state
            else {"name": config.name, "kind": config.kind, "state": "idle", "items_stored": 0}
        )
        line = state.line() if state else f"{config.name} ({config.kind}): not polled yet"
        lines.append("  " + terminal_text(line))  # a newline in a stored error stays escaped
    report.add("connectors", rows, "\n".join(lines))
