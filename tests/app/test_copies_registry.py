"""Every file MAMA writes is either a registered copy of the owner's text (``app.admin.copies``:
purge erases it, doctor lists it) or named here as holding none, with why.

The code of ``mama_core``, ``app`` and ``ui`` is scanned for file-writing calls
(``tests.app.file_writes``); a new one — a second ``shutil.copy`` of the store, an
export to a new place, a cache of texts — fails this test until it is registered
or explained.
"""

from __future__ import annotations

from pathlib import Path

from app.admin.copies import KINDS
from tests.app.file_writes import sites_in_source, sites_in_tree

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("mama_core", "app", "ui")

NOT_OWNER_TEXT: dict[str, str] = {
    "app.backends.claude_code:ClaudeCodeBackend._write_mcp_config": (
        "the MCP config of the agent bridge: a socket path and a per-run token"
    ),
    "app.local.chain_anchor:FileAnchorKeeper.save": "the chain anchor: event ids and keyed hashes",
    "app.mcp.project_scope:adopt_legacy": (
        "the claim of an old folder-name project scope: a project identity, empty file"
    ),
    "app.mcp.hook_state:SeenFiles.add": (
        "the Claude Code hook's per-session list of file paths already looked up (cache)"
    ),
    "app.mcp.wire_guard:claimed_stdin": "opens /dev/null to guard the MCP wire",
    "app.local.settings:Settings.save": (
        "settings.json: options the owner set (times, names of boards and channels); "
        "never a memory, a message or a secret"
    ),
    "app.team.membership:save_membership": (
        "team.json: the team member's role name, the server's host and database, and the "
        "granted scope names; the password stays in the keyring, no memory text"
    ),
    "mama_core.embeddings.convert:convert_bert_to_gguf": "the embedding model, built in the cache",
    "mama_core.embeddings.convert_e5:convert_e5_to_gguf": (
        "the multilingual embedding model, built in the cache"
    ),
    "mama_core.embeddings.convert:write_bundled_manifest": "the embedding model's manifest",
    "mama_core.store.store:Store._create": (
        "the store itself, built under a temporary name and renamed into place (not a copy)"
    ),
    "mama_core.store.store:_fsync": "flushes a file MAMA already wrote; writes nothing new",
    "mama_core.store.store:Store._replace_empty": (
        "renames an empty (0-byte) store an older MAMA left aside: it never held a text"
    ),
    "ui.autostart:set_enabled": "the desktop autostart entry (the launch command)",
    "ui.settings.data_location:set_chosen_home": "the path of the chosen data folder",
    "ui.startup_probe:StartupProbe.mark": "start-up milestone times, for the benchmark",
}


def registered_sites() -> dict[str, str]:
    return {site: kind.name for kind in KINDS for site in kind.written_by}


def test_every_file_write_is_a_registered_copy_or_holds_no_owner_text() -> None:
    found = sites_in_tree(REPO, PACKAGES)
    registered = registered_sites()
    unknown = sorted(set(found) - set(registered) - set(NOT_OWNER_TEXT))
    assert unknown == [], (
        "new file writes: register them in app.admin.copies (a purge erases them) or, if they "
        f"can never hold the owner's text, name them in NOT_OWNER_TEXT with why: {unknown}"
    )
    # No stale entry: each one still names a place that writes.
    assert sorted(set(registered) - set(found)) == []
    assert sorted(set(NOT_OWNER_TEXT) - set(found)) == []
    # The control: the store's backups are found where they are written, and registered.
    assert "mama_core.store.store:Store.copy_aside" in found
    assert registered["mama_core.store.store:Store.copy_aside"] == "store_backup"


def test_the_scan_catches_a_new_copy_of_the_store() -> None:
    source = """
import shutil, sqlite3
from pathlib import Path

def snapshot(db: Path) -> None:
    shutil.copy(db, db.with_suffix(".snap"))

class Keeper:
    def dump(self, conn, out: Path) -> None:
        conn.execute("VACUUM INTO ?", (str(out),))
        conn.backup(sqlite3.connect(out))
        with out.open("a") as fh:
            fh.write("x")
        out.with_suffix(".tmp").replace(out)

def harmless(p: Path) -> str:
    with open(p) as fh:
        text = fh.read()
    return text.replace("a", "b") + p.read_text()
"""
    found = {}
    for site, what in sites_in_source(source, "mod"):
        found.setdefault(site, set()).add(what)
    assert found == {
        "mod:snapshot": {"shutil.copy"},
        "mod:Keeper.dump": {"sql:VACUUM INTO", ".backup", ".open", ".replace"},
    }
