"""At 150 % and 200 % scaling (``QT_SCALE_FACTOR``) on a real X display of 1920 x 1080,
the review window opens within the screen and every action button is whole and
reachable (it used to open at 1100 x 680, larger than the 960 x 540 that 200 % leaves).

Without ``xvfb-run`` the test is skipped on a workstation and fails in CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.ui.conftest import ARTIFACTS

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_the_window_fits_the_screen_at_high_scaling(
    scale: str, tmp_path: Path, model_cache_dir: Path
) -> None:
    if shutil.which("xvfb-run") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must install xvfb (see .ci/run)")
        pytest.skip("needs xvfb-run")
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QT_SCALE_FACTOR": scale}
    result = subprocess.run(
        [
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1920x1080x24",
            sys.executable,
            "-m",
            "tests.ui.scale_probe",
            str(tmp_path),
            str(model_cache_dir),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0 and lines, result.stderr[-2000:]
    report = json.loads(lines[-1])
    logical = [round(1920 / float(scale)), round(1080 / float(scale))]
    assert report["area"][0] <= logical[0] and report["area"][1] <= logical[1]  # scaled
    assert report["fits"], report
    assert all(report["buttons"].values()), report
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(tmp_path / "review.png", ARTIFACTS / f"review-scale-{scale}.png")
