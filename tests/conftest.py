"""Shared fixtures: the project root, the notebooks, and one book build per test session."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"


def notebooks() -> list[Path]:
    return sorted(p for p in BOOK.glob("*.ipynb"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def book_build(tmp_path_factory):
    """Build the book once per session into a temp folder with warnings as errors.

    Returns ``(returncode, combined output, html_dir)``.
    """
    jb = shutil.which("jupyter-book") or str(Path(sys.executable).with_name("jupyter-book"))
    out = tmp_path_factory.mktemp("book")
    proc = subprocess.run(
        [jb, "build", str(ROOT), "--path-output", str(out), "-n", "-W", "--keep-going"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    return proc.returncode, proc.stdout + proc.stderr, out / "_build" / "html"
