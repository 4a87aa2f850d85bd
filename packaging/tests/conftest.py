"""The bundle as a person gets it: the archive ``make bundle`` built, unpacked into a
fresh folder far from the checkout, run with an empty home folder and a PATH that
holds no virtual environment.

``make bundle-test`` builds the archive once and passes it in ``MAMA_BUNDLE_ARCHIVE``;
these tests are not part of ``make test`` (they need the built bundle).
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest
from bundle_support import Bundle, Person, person_env

from tests.app.conftest import secret_service
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import x_display

# Fixtures shared with the main suite: a private keyring, and Xvfb with a real tray.
__all__ = ["secret_service", "x_display"]


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """The archive, unpacked into a new folder outside the checkout."""
    archive = os.environ.get("MAMA_BUNDLE_ARCHIVE")
    if not archive:
        if os.environ.get("CI") == "true":
            pytest.fail("run the bundle tests with `make bundle-test` (it builds the archive)")
        pytest.skip("no MAMA_BUNDLE_ARCHIVE: run `make bundle-test`")
    target = tmp_path_factory.mktemp("unpacked")
    assert not target.resolve().is_relative_to(REPO_ROOT.resolve())
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="tar")
    return Bundle(target / "mama")


@pytest.fixture
def person(bundle: Bundle, tmp_path: Path) -> Person:
    """A person with an empty home folder, in a folder of their own, with the store key set."""
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    env = {**person_env(home), "MAMA_DB_KEY": TEST_KEY_HEX}
    return Person(bundle, home, cwd, env)
