"""The whole book as one PDF (booktools.pdf: scripts/build_pdf.py, the README's PDF command).

The PDF is the one README command 1 has just built (``python scripts/build_pdf.py``) when
its stamp names the current inputs (:func:`booktools.stamp.current_pdf`: the site's
inputs, the PDF's own tools and the browser's version; ``POSENC_FRESH_BUILD=1`` forces a
build); else it is built once per session as that command builds it (Sphinx's single
page, printed by Debian's Chromium), into the session's book build (the ``book_build``
fixture). It is then read back with poppler's ``pdfinfo`` and ``pdftotext`` (apt
package ``poppler-utils``, installed by ``.ci/run``). It must have a book's length, every
chapter's title in its text, math typeset (no raw ``$$``, ``\\frac``, ``\\(`` or ``\\[``
left), links inside the document, and wide printed outputs whose rows read as rows.
Without Chromium or poppler the tests are skipped with a message, or fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

import pytest
from conftest import BOOK, ROOT, SITE_REPORT, missing_tool, toc_pages

from booktools import pdf as build_pdf
from booktools.stamp import current_pdf

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
    made = build_pdf.DEFAULT_OUTPUT
    if os.environ.get("POSENC_FRESH_BUILD") != "1" and current_pdf(made, build_pdf.inputs(ROOT)):
        shutil.copy2(made, path)
        SITE_REPORT["pdf"] = "reused README command 1's PDF (its stamp is current)"
    else:
        build_pdf.build_pdf(path, work=html.parent.parent)  # the build's --path-output
        SITE_REPORT["pdf"] = "built in this run"
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
#: (88 characters fill the printed code box); up to MAX_ROW they fit at the smallest print
#: font (7 pt, booktools.pdf.MIN_PRINT_FONT_PX). A wider row wraps, with a hanging indent
#: (a real reshape of those tables is the chapters' business: 24 rows of chapters 6, 7, 10
#: and 12, 108 to 145 characters, as of this writing).
MIN_ROW, MAX_ROW = 89, 105
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


# ------------------------------------------ type size, code lines, blank pages, API ----

#: The smallest type on paper, in points. ``pdftohtml`` reports each font's size in whole
#: points (rounded), so 7 means nothing under 6.5 pt: outputs and tables are shrunk to no
#: less than booktools.pdf.MIN_PRINT_FONT_PX (7.05 pt), and what is still too wide wraps.
MIN_TEXT_PT = 7
#: Sizes above this are MathJax's stretched delimiters (a brace drawn as one glyph scaled
#: by thousands), not text.
MAX_TEXT_PT = 200
#: The text box of a printed page, as fractions of its height (booktools.pdf's 16 mm top
#: and bottom margins on A4's 297 mm).
TEXT_TOP, TEXT_BOTTOM = 16 / 297, 1 - 16 / 297
#: A page whose text box is blank below this fraction of its height is "half blank".
MAX_BLANK = 0.5
#: The API reference on paper is an index (booktools.pdf's _API_INDEX): a page or so per
#: few modules, not the site's 129 pages of signatures.
MAX_API_PAGES = 20


def pdf_text_sizes(path) -> list[tuple[int, int, str]]:
    """``(page, size in points, text)`` for every line of text in the PDF at ``path``,
    read with poppler's ``pdftohtml -xml`` (sizes rounded to whole points)."""
    xml = subprocess.run(
        ["pdftohtml", "-xml", "-i", "-zoom", "1", "-stdout", "-q", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout
    sizes = dict(re.findall(r'<fontspec id="(\d+)" size="(-?\d+)"', xml))
    found, page = [], 0
    for line in xml.splitlines():
        if m := re.match(r'<page number="(\d+)"', line):
            page = int(m[1])
        elif m := re.match(r'<text [^>]*font="(\d+)">(.*)</text>', line):
            found.append((page, int(sizes[m[1]]), re.sub(r"<[^>]+>", "", m[2])))
    return found


def small_text_problems(path) -> list[str]:
    """Text under MIN_TEXT_PT in the PDF at ``path``, one line per page."""
    small: dict[int, list[str]] = {}
    for page, size, text in pdf_text_sizes(path):
        if 0 < size < MIN_TEXT_PT and text.strip():
            small.setdefault(page, []).append(f"{size} pt {text.strip()[:40]!r}")
    return [f"page {page}: {', '.join(lines[:3])}" for page, lines in small.items()]


def ink_bottoms(path, tmp) -> list[float | None]:
    """Per page of the PDF at ``path``, the lowest inked row as a fraction of the page's
    height (None for a blank page), from a coarse greyscale rendering (poppler's
    ``pdftoppm``, 12 dpi)."""
    subprocess.run(["pdftoppm", "-r", "12", "-gray", str(path), str(tmp / "p")], check=True)
    bottoms = []
    for image in sorted(tmp.glob("p-*.pgm")):
        magic, width, height, _, pixels = image.read_bytes().split(maxsplit=4)
        width, height = int(width), int(height)
        inked = [row for row in range(height)
                 if min(pixels[row * width:(row + 1) * width]) < 200]
        bottoms.append(max(inked) / height if inked else None)
    return bottoms


def blank_page_problems(bottoms: list[float | None], pages: list[str],
                        starts: list[str]) -> list[str]:
    """Pages more than MAX_BLANK blank, given each page's lowest ink (``bottoms``) and
    text (``pages``): allowed only for the title page, the last page and a page followed
    by a forced break (the next page starts with one of the titles ``starts``, as each
    chapter and back-matter page does). A page with no ink at all is always wrong."""
    problems = []
    heads = [_flat(page)[:200] for page in pages]
    for i, bottom in enumerate(bottoms):
        if bottom is None:
            problems.append(f"page {i + 1} is blank")
            continue
        blank = (TEXT_BOTTOM - bottom) / (TEXT_BOTTOM - TEXT_TOP)
        before_break = i + 1 < len(heads) and any(
            _flat(title)[:40] in heads[i + 1] for title in starts)
        if blank > MAX_BLANK and i not in (0, len(bottoms) - 1) and not before_break:
            problems.append(f"page {i + 1} is {blank:.0%} blank (not a chapter's end)")
    return problems


def code_lines() -> list[str]:
    """Every line of the chapters' code cells, as printed (no line is over 88 characters:
    booktools.pdf prints code at the size where 88 fit)."""
    lines = []
    for path in sorted(BOOK.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                lines.extend("".join(cell["source"]).splitlines())
    return lines


#: Code lines this long or longer are checked (a shorter line cannot wrap).
MIN_CODE_CHECKED = 50


def wrapped_code_problems(layout: str, lines: list[str]) -> list[str]:
    """Lines of code (of MIN_CODE_CHECKED characters or more) that the PDF prints but not
    on one line of ``layout`` (``pdftotext -layout``): a wrapped line, which on paper
    reads as a new line of Python at the wrong indentation."""
    def bare(text: str) -> str:  # pdftotext spaces CJK and code columns its own way
        return re.sub(r"\s+", "", text.replace("\u00ad", ""))

    joined = "\n".join(bare(line) for line in layout.splitlines())
    flat = bare(layout)
    problems = []
    for line in lines:
        one = bare(line)
        if re.search(r"[\u2e80-\u9fff]", line):
            continue  # pdftotext sets CJK glyphs (a fallback font) on a line of their own
        if len(line) >= MIN_CODE_CHECKED and one[:30] in flat and one not in joined:
            problems.append(line)
    return problems


def api_titles() -> list[str]:
    """The modules of the API reference, as their pages name them (``posenc.rope``)."""
    names = []
    for page in sorted((BOOK / "api").glob("*.md")):
        heading = next(line for line in page.read_text(encoding="utf-8").splitlines()
                       if line.startswith("# "))
        names.append(heading[2:].split(":")[0].replace("`", "").strip())
    return names


def api_index_problems(pages: list[str], modules: list[str]) -> list[str]:
    """The API reference as printed on ``pages``: from the page that starts with "API
    reference" to the one that starts with "References" (the next page of the book), at
    most MAX_API_PAGES, with every module in ``modules`` and the pointer to the site's
    full pages (booktools.pdf.API_POINTER), without the full pages' argument lists."""
    starts = [i for i, page in enumerate(pages) if _flat(page).startswith("API reference")]
    ends = [i for i, page in enumerate(pages) if _flat(page).startswith("References")]
    if not starts or not ends or ends[-1] <= starts[0]:
        return ["no API reference followed by References in the PDF"]
    part = pages[starts[0]:ends[-1]]
    flat = _flat(" ".join(part))
    problems = []
    if len(part) > MAX_API_PAGES:
        problems.append(f"the API reference takes {len(part)} pages (> {MAX_API_PAGES})")
    if _flat(build_pdf.API_POINTER)[:60] not in flat:
        problems.append("no pointer to the site's full API pages")
    missing = [m for m in modules if m not in flat]
    if missing:
        problems.append(f"modules missing from the API index: {missing}")
    if "Parameters:" in flat or "Raises:" in flat:
        problems.append("the API reference prints the full pages (Parameters:, Raises:)")
    return problems


#: TeX that MathJax printed as typed: an escaped underscore (``\text{max\_distance}``
#: without MathJax's textmacros package, booktools.site.mathjax).
RAW_TEX_ESCAPES = ("\\_",)


def test_no_tex_escapes_in_the_pdf(pdf):
    _, text, _, _ = pdf
    found = {e: text[max(0, text.index(e) - 40): text.index(e) + 40]
             for e in RAW_TEX_ESCAPES if e in text}
    assert not found, f"TeX escapes printed as typed: {found}"


def test_no_text_under_seven_points(pdf):
    path, *_ = pdf
    problems = small_text_problems(path)
    assert not problems, f"text under {MIN_TEXT_PT} pt:\n" + "\n".join(problems[:20])


def test_printed_code_lines_are_not_wrapped(pdf):
    _, _, layout, _ = pdf
    lines = code_lines()
    assert any(len(line) >= 85 for line in lines), "no long code line left to check"
    problems = wrapped_code_problems(layout, lines)
    assert not problems, (
        f"{len(problems)} code lines wrapped on paper:\n" + "\n".join(problems[:20]))


def test_no_page_is_half_blank_mid_chapter(pdf, tmp_path):
    path, text, _, _ = pdf
    problems = blank_page_problems(ink_bottoms(path, tmp_path), text.split("\f"),
                                   chapter_titles())
    assert not problems, "half-blank pages:\n" + "\n".join(problems)


def test_api_reference_is_a_compact_index(pdf):
    _, text, _, _ = pdf
    problems = api_index_problems(text.split("\f"), api_titles())
    assert not problems, "\n".join(problems)


#: A page printed badly on purpose: a code line wrapped at column 0, 5 pt type, a page
#: half blank in mid-chapter, a display equation wider than its box (the DOM MathJax 3
#: writes: mjx-container in a clipping div.math).
BROKEN_PAGE = """<!doctype html><html><head><style>
@page { size: A4; margin: 16mm 14mm; }
body { font-family: sans-serif; font-size: 12pt; margin: 0; }
div.math { display: flex; overflow: hidden; width: 300px; }
mjx-container { display: block; white-space: nowrap; }
</style></head><body><article><section>
<h1>1. A chapter</h1>
<div class="highlight"><pre style="white-space: pre-wrap; width: 300px">def f(x):
    return some_long_function_name(argument_one, argument_two, argument_three)
</pre></div>
<p style="font-size: 5pt">a table shrunk to fit the page</p>
<div class="math"><mjx-container display="true">x = a + b + c + d + e + f + g + h + i + j
 + k + l + m + n + o + p + q + r + s + t + u + v + w + x + y + z</mjx-container></div>
<p style="break-before: page">A short page, then a forced break in mid-chapter.</p>
<p style="break-before: page">The chapter goes on.</p>
</section></article></body></html>"""


def test_the_paper_checks_catch_a_badly_printed_page(tmp_path):
    """Each check above, on a page printed badly on purpose (BROKEN_PAGE, printed by
    Chromium as booktools.pdf prints the book, without its fixes): small type, a wrapped
    code line, a half-blank page; and the build's clipped-equation check (booktools.pdf
    ._CLIPPED) before and after the fix (_FIT_WIDE_BLOCKS) that scales the equation."""
    chromium = build_pdf.find_chromium()
    if chromium is None:
        missing_tool("PDF self-test", "no Chromium found (apt-get install chromium)")
    for tool in ("pdftohtml", "pdftoppm", "pdftotext"):
        if shutil.which(tool) is None:
            missing_tool("PDF self-test", f"no {tool} (apt-get install poppler-utils)")
    path = tmp_path / "broken.pdf"
    with build_pdf.launch(chromium) as browser:
        page = browser.new_page(viewport={"width": build_pdf.PRINT_WIDTH_PX, "height": 900})
        page.set_content(BROKEN_PAGE)
        page.emulate_media(media="print")
        clipped_before = page.evaluate(build_pdf._CLIPPED)
        page.pdf(path=str(path), format="A4", print_background=True)
        page.evaluate(build_pdf._FIT_WIDE_BLOCKS, {
            "minPx": build_pdf.MIN_PRINT_FONT_PX, "columns": build_pdf.CODE_COLUMNS,
            "hang": build_pdf.HANG_COLUMNS})
        clipped_after = page.evaluate(build_pdf._CLIPPED)
        fixed = tmp_path / "fixed.pdf"
        page.pdf(path=str(fixed), format="A4", print_background=True)
    assert clipped_before and not clipped_after, (clipped_before, clipped_after)
    # Fixed, the code line too long for its box hangs: it goes on right of its indent.
    fixed_layout = subprocess.run(["pdftotext", "-layout", str(fixed), "-"],
                                  capture_output=True, text=True, check=True).stdout
    lines = fixed_layout.splitlines()
    start = next(i for i, line in enumerate(lines) if "return some_long" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    after = lines[start + 1]
    assert len(after) - len(after.lstrip()) > indent, lines[start:start + 2]
    layout = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(path), "-"],
                            capture_output=True, text=True, check=True).stdout
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert any("5 pt" in p for p in small_text_problems(path))
    code = "    return some_long_function_name(argument_one, argument_two, argument_three)"
    assert wrapped_code_problems(layout, [code]) == [code]
    (tmp_path / "pages").mkdir()
    blank = blank_page_problems(ink_bottoms(path, tmp_path / "pages"), text.split("\f"),
                                ["1. A chapter"])
    assert any(p.startswith("page 2 ") for p in blank), blank


def test_the_api_check_catches_the_full_reference():
    """api_index_problems on the pages of a PDF that prints the full API pages (long,
    with argument lists, no pointer) and of one that prints the index."""
    index = ["API reference\n" + build_pdf.API_POINTER + "\nposenc.rope apply_rope",
             "References\n..."]
    full = ["API reference\nposenc.rope", *["Parameters: x"] * 30, "References"]
    assert api_index_problems(index, ["posenc.rope"]) == []
    found = api_index_problems(full, ["posenc.rope", "posenc.alibi"])
    assert any("pages" in p for p in found) and any("pointer" in p for p in found)
    assert any("posenc.alibi" in p for p in found)
    assert any("full pages" in p for p in found)
