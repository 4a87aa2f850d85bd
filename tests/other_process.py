"""Another MAMA process committing to a test's store: one engine action run in a
separate Python process, its receipt printed as JSON.

``commit_elsewhere`` runs ``python -m tests.other_process`` so a
test's own engine sees the commit only as a commit of another process would be.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT, TEST_KEY_HEX


def commit_elsewhere(
    db_path: Path,
    model_cache: Path,
    action: str,
    payload: dict[str, Any],
    *,
    as_agent: bool = False,
) -> dict[str, Any]:
    """Run ``action`` with ``payload`` in a new process (the owner at the CLI, or an
    agent through MCP with ``as_agent``); return its receipt."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.other_process",
            str(db_path),
            str(model_cache),
            "agent" if as_agent else "owner",
            action,
            json.dumps(payload),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def main(argv: list[str]) -> None:
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, EngineConfig, Grant, SessionFacts
    from mama_core.session import ActorKind, TurnKind
    from mama_core.store import DbKey, Store

    db, cache, who, action, payload = argv
    if who == "agent":
        session = SessionFacts(
            actor_kind=ActorKind.MCP_CLIENT, actor_name="codex", turn=TurnKind.MCP
        )
        grant = Grant.agent(("global",))
    else:
        session, grant = SessionFacts.owner_cli(), Grant.owner()
    with Store.open(Path(db), DbKey.from_secret(TEST_KEY_HEX)) as store:
        embedder = load_embedder(None, Path(cache))
        with Engine(store, embedder, EngineConfig(commit_poll_seconds=None)) as engine:
            receipt = engine.dispatch(action, json.loads(payload), session, grant)
    print(json.dumps(receipt))


if __name__ == "__main__":
    main(sys.argv[1:])
