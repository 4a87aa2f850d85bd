"""``mama --version`` and doctor's install line: the commit, and bundle or not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.main import main
from app.local.build_info import BUILD_INFO_NAME, this_build
from tests.conftest import REPO_ROOT


def test_a_checkout_names_its_git_commit(capsys: pytest.CaptureFixture[str]) -> None:
    head = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = this_build()
    assert found.bundle is None
    assert found.commit == head
    assert "not a bundle" in found.describe()
    main(["--version"])
    assert capsys.readouterr().out.startswith(f"mama {found.version} (commit {head}")


def test_a_bundle_reads_what_was_baked_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "mama" / "_internal"
    data.mkdir(parents=True)
    info = {"version": "9.8.7", "commit": "0123456789ab", "modified": False}
    (data / BUILD_INFO_NAME).write_text(json.dumps(info), "utf-8")
    monkeypatch.setattr(sys, "_MEIPASS", str(data), raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "mama" / "mama"))
    found = this_build()
    assert found.bundle == (tmp_path / "mama").resolve()
    assert found.version_line() == "mama 9.8.7 (commit 0123456789ab)"
    assert found.describe().startswith(f"install: bundle in {(tmp_path / 'mama').resolve()};")
    assert found.as_fact()["bundle"] is True
