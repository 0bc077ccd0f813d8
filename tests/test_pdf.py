"""The whole book as one PDF (booktools.pdf: scripts/build_pdf.py, the README's PDF command).

The PDF is built once per session as the README's command builds it (Sphinx's single
page, printed by Debian's Chromium), into the session's book build (the ``book_build``
fixture), so Sphinx reuses the doctrees that build has just read instead of reading every
notebook again; it is then read back with poppler's ``pdfinfo`` and ``pdftotext`` (apt
package ``poppler-utils``, installed by ``.ci/run``). It must have a book's length, every
chapter's title in its text, math typeset (no raw ``$$``, ``\\frac``, ``\\(`` or ``\\[``
left), links inside the document, and wide printed outputs whose rows read as rows.
Without Chromium or poppler the tests are skipped with a message, or fail under ``CI=true``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time

import pytest
from conftest import BOOK, SITE_REPORT, missing_tool, toc_pages

from booktools import pdf as build_pdf

#: A book of ten chapters with figures prints to well over a hundred A4 pages (221 when
#: this test was written); far fewer means chapters went missing.
MIN_PAGES = 100
RAW_TEX = ("$$", "\\frac", "\\(", "\\[", "\\begin{")


@pytest.fixture(scope="module")
def pdf(book_build, tmp_path_factory):
    """``(path, text, layout text, pdfinfo fields)`` of a fresh build of the book's PDF."""
    if build_pdf.find_chromium() is None:
        missing_tool("PDF check", "no Chromium found (apt-get install chromium)")
    for tool in ("pdfinfo", "pdftotext"):
        if shutil.which(tool) is None:
            missing_tool("PDF check", f"no {tool} (apt-get install poppler-utils)")
    code, _, html = book_build
    if code != 0:
        pytest.fail("the book build failed: see test_book_build.py", pytrace=False)
    start = time.perf_counter()
    path = tmp_path_factory.mktemp("pdf") / "book.pdf"
    build_pdf.build_pdf(path, work=html.parent.parent)  # the build's --path-output
    SITE_REPORT["pdf: build seconds"] = round(time.perf_counter() - start, 1)
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in info.stdout.splitlines())
    )

    def pdftotext(*flags: str) -> str:
        return subprocess.run(
            ["pdftotext", *flags, "-enc", "UTF-8", str(path), "-"], capture_output=True,
            text=True, check=True,
        ).stdout

    SITE_REPORT["pdf: pages"] = fields.get("Pages")
    SITE_REPORT["pdf: MiB"] = round(path.stat().st_size / 2**20, 1)
    return path, pdftotext(), pdftotext("-layout"), fields


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
    *_, fields = pdf
    assert int(fields["Pages"]) >= MIN_PAGES, f"only {fields['Pages']} pages"


def test_every_chapter_title_is_in_the_pdf(pdf):
    _, text, _, _ = pdf
    flat = _flat(text)
    titles = chapter_titles()
    assert len(titles) >= 10
    missing = [t for t in titles if _flat(t) not in flat]
    assert not missing, f"chapter titles not found in the PDF's text: {missing}"


def test_no_raw_tex_in_the_pdf(pdf):
    _, text, _, _ = pdf
    found = {
        token: text[max(0, text.index(token) - 60): text.index(token) + 60]
        for token in RAW_TEX if token in text
    }
    assert not found, f"raw TeX left in the PDF (MathJax did not typeset it): {found}"


def test_pdf_has_internal_links(pdf):
    """Chromium writes a link to an anchor on the same page as a named destination."""
    path, *_ = pdf
    data = path.read_bytes()
    links, dests = data.count(b"/Subtype /Link"), data.count(b"/Dest")
    assert links > 0 and dests >= len(chapter_titles()), (links, dests)


#: Printed lines this long wrapped in the middle before the PDF shrank wide outputs to fit
#: (88 characters fill the printed code box); up to MAX_ROW they fit at the smallest font.
MIN_ROW, MAX_ROW = 89, 150
#: A column table from a chapter no other work is rewriting (chapter 8's last buckets per
#: direction and max_distance): its rows must be among the rows checked.
KNOWN_TABLE = ("08_relative_bias.ipynb", "last bucket")


def wide_rows() -> dict[str, list[str]]:
    """Per notebook, the printed lines of MIN_ROW..MAX_ROW characters in its committed
    text outputs (streams and plain-text results; not those shown as HTML)."""
    rows: dict[str, list[str]] = {}
    for path in sorted(BOOK.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if out.get("output_type") == "stream":
                    text = "".join(out.get("text", ""))
                elif "text/plain" in data and not {"text/html", "image/png"} & set(data):
                    text = "".join(data["text/plain"])
                else:
                    continue
                rows.setdefault(path.name, []).extend(
                    line for line in text.splitlines() if MIN_ROW <= len(line) <= MAX_ROW
                )
    return rows


def _one_line(text: str) -> str:
    return " ".join(text.replace("\u00ad", "").split())


def test_wide_printed_rows_stay_on_one_line(pdf):
    """A wide column output (a table printed by a chapter) keeps each row on one line of
    the PDF, as ``pdftotext -layout`` reads it, instead of wrapping it mid-row."""
    _, _, layout, _ = pdf
    lines = {_one_line(line) for line in layout.splitlines()}
    rows = wide_rows()
    name, marker = KNOWN_TABLE
    assert any(marker in row for row in rows.get(name, [])), (
        f"{name} no longer prints a row of {MIN_ROW}..{MAX_ROW} characters with "
        f"{marker!r}: pick another known wide table for this test"
    )
    # A row counts where the PDF prints it at all (its start is in the text; an output in
    # a collapsed solution is not printed), so a row wrapped mid-way still counts.
    flat = _one_line(layout)
    checked = [
        (nb, row) for nb, nb_rows in rows.items() for row in nb_rows
        if _one_line(row)[:40] in flat
    ]
    assert any(nb == name and marker in row for nb, row in checked), (
        f"the PDF does not print {name}'s rows with {marker!r}"
    )
    broken = [
        f"{nb}: {row}" for nb, row in checked
        if not any(_one_line(row) in line for line in lines)
    ]
    SITE_REPORT["pdf: wide rows checked"] = len(checked)
    assert not broken, (
        f"{len(broken)} of {len(checked)} wide printed rows are not on one line of the "
        "PDF's text (wrapped mid-row?):\n" + "\n".join(broken)
    )


# ------------------------------------------------------------ a PDF you would print ----

#: What the screen shows for a reader to click and paper must not: the hidden install
#: cell's toggle, the atlas's sort arrows and filter box, a slider's label.
CONTROLS_ON_PAPER = ("Show code cell source", "\u2195", "\u25b2", "\u25bc", "Filter rows")


def chapter_heading_titles() -> list[str]:
    """The titles of the chapters (one notebook each), as :func:`chapter_titles` reads
    them."""
    titles = []
    for page in toc_pages():
        stem = page.removeprefix("book/").removesuffix(".html")
        nb = BOOK / f"{stem}.ipynb"
        if nb.is_file():
            cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
            heading = next(line for line in "".join(cells[0]["source"]).splitlines()
                           if line.startswith("# "))
            titles.append(heading[2:].replace("`", "").strip())
    return titles


def print_problems(pages: list[str], chapters: list[str]) -> list[str]:
    """What is wrong with a PDF, read as ``pages`` (the text of each page, in order), for
    a book whose chapters are titled ``chapters``: controls printed
    (:data:`CONTROLS_ON_PAPER`); no printed table of contents (a page under "Chapter
    map" listing every chapter); a chapter that does not start a page (its title in the
    first lines of some page)."""
    problems = []
    for control in CONTROLS_ON_PAPER:
        where = [i + 1 for i, page in enumerate(pages) if control in page]
        if where:
            problems.append(f"{control!r} printed on pages {where[:8]}")
    flat = [_flat(page) for page in pages]
    contents = next((page for page in flat if "Chapter map" in page), "")
    listed = contents.split("Chapter map", 1)[-1]
    missing = [c for c in chapters if _flat(c) not in listed]
    if missing:
        problems.append(f"no printed table of contents under 'Chapter map' for {missing}")
    for title in chapters:
        start = _flat(title)[:40]
        if not any(page[:200].find(start) >= 0 for page in flat):
            problems.append(f"chapter {title!r} does not start a new page")
    return problems


def test_pdf_prints_like_a_book(pdf):
    """No controls on paper, a printed table of contents, each chapter on a new page."""
    _, text, _, _ = pdf
    pages = text.split("\f")
    problems = print_problems(pages, chapter_heading_titles())
    assert not problems, "the PDF as printed:\n" + "\n".join(problems)


def test_the_print_check_catches_a_badly_printed_book():
    """The checker itself, on the pages of a book printed badly: a control printed, no
    table of contents, a chapter that starts mid-page (and on those of one printed well)."""
    chapters = ["1. Why positions", "2. Sinusoidal"]
    good = ["Title", "Chapter map 1. Why positions 2. Sinusoidal",
            "1. Why positions\ntext", "more", "2. Sinusoidal\ntext"]
    bad = ["Title", "Chapter map", "1. Why positions\nShow code cell source\n" + "x " * 200
           + "2. Sinusoidal\nmodel \u2195"]
    assert print_problems(good, chapters) == []
    found = print_problems(bad, chapters)
    assert any("Show code cell source" in p for p in found)
    assert any("\u2195" in p for p in found)
    assert any("table of contents" in p for p in found)
    assert any("2. Sinusoidal" in p and "new page" in p for p in found)
