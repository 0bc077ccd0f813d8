"""The book builds with Sphinx's nitpicky mode and warnings as errors, and lists every chapter."""

from __future__ import annotations

import re

import yaml
from conftest import BOOK, ROOT, notebooks


def test_build_has_zero_warnings(book_build):
    code, log, html = book_build
    warnings = [line for line in log.splitlines() if re.search(r"WARNING|ERROR", line)]
    assert code == 0, f"jupyter-book build failed ({code}):\n{log[-4000:]}"
    assert not warnings, "build printed warnings:\n" + "\n".join(warnings)
    assert (html / "index.html").exists()


def test_every_chapter_is_rendered(book_build):
    _, _, html = book_build
    for nb in notebooks():
        page = html / "book" / (nb.stem + ".html")
        assert page.exists(), f"{nb.name} was not rendered to {page}"


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if "file" in node:
            files.append(node["file"])
        for value in node.values():
            files += _toc_files(value)
    elif isinstance(node, list):
        for item in node:
            files += _toc_files(item)
    return files


def test_toc_and_notebooks_agree():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = set(_toc_files(toc)) | {toc["root"]}
    on_disk = {f"book/{p.stem}" for p in notebooks()} | {
        f"book/{p.stem}" for p in BOOK.glob("*.md")
    }
    assert on_disk - listed == set(), "pages not in _toc.yml"
    assert listed - on_disk == set(), "_toc.yml lists missing pages"
