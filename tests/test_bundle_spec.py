"""The bundle's spec names every connector kind: kinds are imported by name when the
owner adds one (app/connectors/kinds.py), so PyInstaller cannot find them by itself and
a kind left out of ``hiddenimports`` is "not available in this build" only in the bundle."""

from __future__ import annotations

from app.connectors.kinds import KINDS
from tests.conftest import REPO_ROOT


def test_every_connector_kind_is_a_hidden_import_of_the_bundle() -> None:
    spec = (REPO_ROOT / "packaging" / "mama.spec").read_text("utf-8")
    hidden = spec[spec.index("hiddenimports=[") : spec.index("]", spec.index("hiddenimports=["))]
    assert '"app.connectors.slack"' in hidden  # the control: the block is the one read
    missing = [module for module in KINDS.values() if f'"{module}"' not in hidden]
    assert missing == []
