"""Code that fits the page: no code line of a chapter is longer than 88 characters.

At a 1280 px window the site's code box holds 88 characters of code (``_ext/posenc_site.css``
sets the font and the width for it); tests/test_browser.py checks the rendered pages
themselves (code, output and tables at 1280 px, the whole page at a 390 px phone width).
This test names the offending lines without a build. It covers every chapter listed in
``_toc.yml``.
"""

from __future__ import annotations

import json

import pytest
from conftest import BOOK, toc_pages

#: Characters of code that fit the rendered code box at a 1280 px window.
MAX_CODE_COLUMNS = 88
CHAPTERS = [BOOK / f"{p.removeprefix('book/').removesuffix('.html')}.ipynb"
            for p in toc_pages()]
CHAPTERS = [p for p in CHAPTERS if p.is_file()]


def params():
    return [pytest.param(p, id=p.name) for p in CHAPTERS]


def long_lines(path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        for line in "".join(cell["source"]).splitlines():
            if len(line) > MAX_CODE_COLUMNS:
                found.append(f"cell {i} ({len(line)} chars): {line}")
    return found


def test_every_notebook_chapter_is_checked():
    assert len(CHAPTERS) >= 9 and all(p.suffix == ".ipynb" for p in CHAPTERS)


@pytest.mark.parametrize("path", params())
def test_code_lines_fit_the_code_box(path):
    found = long_lines(path)
    assert not found, (
        f"{path.name}: code lines over {MAX_CODE_COLUMNS} characters (run `ruff format "
        f"--line-length {MAX_CODE_COLUMNS}` on the notebook, split long strings, then "
        "scripts/execute_notebooks.py):\n" + "\n".join(found)
    )
