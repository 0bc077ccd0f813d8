"""The whole book as one PDF (scripts/build_pdf.py, the README's PDF command).

The PDF is built once per session into a temporary folder, exactly as the README's command
builds it (Sphinx's single page, printed by Debian's Chromium), then read back with
poppler's ``pdfinfo`` and ``pdftotext`` (apt package ``poppler-utils``, installed by
``.ci/run``). It must have a book's length, every chapter's title in its text, math
typeset (no raw ``$$``, ``\\frac``, ``\\(`` or ``\\[`` left) and links inside the document.
Without Chromium or poppler the tests are skipped with a message, or fail under ``CI=true``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from conftest import BOOK, SITE_REPORT, load_build_pdf, missing_tool, toc_pages

#: A book of ten chapters with figures prints to well over a hundred A4 pages (221 when
#: this test was written); far fewer means chapters went missing.
MIN_PAGES = 100
RAW_TEX = ("$$", "\\frac", "\\(", "\\[", "\\begin{")


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    """``(path, text, pdfinfo fields)`` of a fresh build of the book's PDF."""
    build_pdf = load_build_pdf()
    if build_pdf.find_chromium() is None:
        missing_tool("PDF check", "no Chromium found (apt-get install chromium)")
    for tool in ("pdfinfo", "pdftotext"):
        if shutil.which(tool) is None:
            missing_tool("PDF check", f"no {tool} (apt-get install poppler-utils)")
    work = tmp_path_factory.mktemp("pdf")
    path = build_pdf.build_pdf(work / "book.pdf", work=work)
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in info.stdout.splitlines())
    )
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True,
        check=True,
    ).stdout
    SITE_REPORT["pdf: pages"] = fields.get("Pages")
    SITE_REPORT["pdf: MiB"] = round(path.stat().st_size / 2**20, 1)
    return path, text, fields


def chapter_titles() -> list[str]:
    """The first ``# `` heading of every page in ``_toc.yml``."""
    titles = []
    for page in toc_pages():
        stem = page.removeprefix("book/").removesuffix(".html")
        nb, md = BOOK / f"{stem}.ipynb", BOOK / f"{stem}.md"
        if nb.is_file():
            cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
            text = "".join(cells[0]["source"])
        elif md.is_file():
            text = md.read_text(encoding="utf-8")
        else:
            continue
        heading = next(line for line in text.splitlines() if line.startswith("# "))
        titles.append(heading[2:].replace("`", "").strip())
    return titles


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00ad", "")).strip()


def test_pdf_has_a_books_length(pdf):
    _, _, fields = pdf
    assert int(fields["Pages"]) >= MIN_PAGES, f"only {fields['Pages']} pages"


def test_every_chapter_title_is_in_the_pdf(pdf):
    _, text, _ = pdf
    flat = _flat(text)
    titles = chapter_titles()
    assert len(titles) >= 10
    missing = [t for t in titles if _flat(t) not in flat]
    assert not missing, f"chapter titles not found in the PDF's text: {missing}"


def test_no_raw_tex_in_the_pdf(pdf):
    _, text, _ = pdf
    found = {
        token: text[max(0, text.index(token) - 60): text.index(token) + 60]
        for token in RAW_TEX if token in text
    }
    assert not found, f"raw TeX left in the PDF (MathJax did not typeset it): {found}"


def test_pdf_has_internal_links(pdf):
    """Chromium writes a link to an anchor on the same page as a named destination."""
    path, _, _ = pdf
    data = path.read_bytes()
    links, dests = data.count(b"/Subtype /Link"), data.count(b"/Dest")
    assert links > 0 and dests >= len(chapter_titles()), (links, dests)
