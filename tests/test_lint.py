"""The code base stays ruff-clean: the package, tests, scripts, benchmarks and notebooks.

The rules live in pyproject.toml ([tool.ruff]); this test makes `python -m pytest` enforce them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_ruff_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    proc = subprocess.run(
        [ruff, "check", "--no-cache", "--output-format", "concise", "."],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
