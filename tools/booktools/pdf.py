"""Build the whole book as one PDF, offline: Sphinx's single-page HTML, printed by Chromium.

    python scripts/build_pdf.py                  # -> _build/pdf/positional-encoding-executed.pdf
    python scripts/build_pdf.py --output book.pdf
    python scripts/build_pdf.py --language zh_CN # -> _build/pdf/...executed.zh_CN.pdf

(``scripts/build_pdf.py`` is the entry point; this module, :mod:`booktools.pdf`, the logic.)

Steps: ``jupyter-book build`` with Sphinx's ``singlehtml`` builder puts every chapter on
one page (internal links become ``#anchor`` links on that page); the page is served on
127.0.0.1 and opened in Debian's Chromium (the browser the site tests use, driven by
Playwright; nothing is downloaded), which waits until MathJax has typeset every formula
and the interactive figures are drawn, then prints it to PDF with bookmarks. Links inside
the page become links inside the PDF. On paper the text is narrower than on screen, so
every printed output or table wider than the page gets a font just small enough for its
longest line to fit (down to MIN_PRINT_FONT_PX): a column table keeps one row per line.
Before printing, code blocks of up to KEEP_WHOLE_LINES lines are kept on one page, and the
landing page's empty "Chapter map" gets a printed, linked table of contents; the print
styles (_ext/posenc_site.css) start each chapter on a new page and leave the on-screen
controls off the paper.

With ``--language zh_CN`` the single page is the Chinese edition's
(:mod:`booktools.zh_build`, same sources, translated prose; the CJK glyphs come from the
system's Noto CJK fonts, ``fonts-noto-cjk``), and the printed PDF must hold the
edition's own words (:func:`check_language`, read back with poppler's ``pdftotext``).

The single page uses the same committed notebook outputs as the site. Exit status 0 and
the PDF's path on success; a non-zero status with the reason otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from booktools.browser import find_chromium, launch, serve

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = ROOT / "_build" / "pdf" / "positional-encoding-executed.pdf"
#: The single page, copied to the root of the singlehtml output (see build_single_page).
SINGLE_PAGE = "book.html"
#: Runs in the page before printing: every formula typeset, fonts and images loaded,
#: every interactive figure drawn.
_READY = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await document.fonts.ready;
  await Promise.all(Array.from(document.images).map(async (img) => {
    img.loading = "eager";
    try { await img.decode(); } catch (e) { /* a broken image prints as one */ }
  }));
  const blocks = Array.from(document.querySelectorAll(".posenc-interactive"));
  const start = Date.now();
  while (blocks.some((b) => !b.dataset.mounted) && Date.now() - start < 20000) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return blocks.filter((b) => !b.dataset.mounted).map((b) => b.id);
}
"""


#: Redraws every interactive figure at its container's current width.
_RESIZE = r"""
async () => {
  if (window.posencInteractive && window.posencInteractive.redraw) {
    window.posencInteractive.redraw();
  }
}
"""
#: The smallest font size, in CSS pixels, a wide output or table is shrunk to on paper
#: (6.5 px is about 4.9 pt: the size of a dense printed table's footnotes).
MIN_PRINT_FONT_PX = 6.5
#: Runs in the page laid out for print: every printed output (``pre``) or table wider than
#: its box gets a smaller font, just small enough for its longest line or row to fit, so
#: a column table keeps one row per line instead of wrapping each row in the middle. Only
#: what is still too wide at MIN_PRINT_FONT_PX wraps (by the site's CSS: outputs wrap,
#: code stays within 88 characters). Returns how many blocks were shrunk.
_FIT_WIDE_BLOCKS = r"""
(minPx) => {
  let shrunk = 0;
  const fit = (el, box, measure) => {
    const style = getComputedStyle(el);
    const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    const avail = box.clientWidth - pad, need = measure() - pad;
    if (need <= avail + 1 || avail <= 0) return;
    const size = parseFloat(style.fontSize);
    el.style.fontSize = Math.max(minPx, Math.floor(size * avail / need * 0.98 * 10) / 10) + "px";
    shrunk += 1;
  };
  for (const pre of document.querySelectorAll("div.cell_output pre, div.output pre")) {
    if (!pre.offsetParent) continue;
    pre.style.whiteSpace = "pre";  // measure the longest line unwrapped
    fit(pre, pre, () => pre.scrollWidth);
    pre.style.whiteSpace = "";
  }
  for (const table of document.querySelectorAll("article table")) {
    const box = table.parentElement;
    if (!table.offsetParent || !box) continue;
    fit(table, box, () => table.scrollWidth);
  }
  return shrunk;
}
"""
#: Code blocks of at most this many lines are kept on one page (``break-inside: avoid``):
#: Chromium otherwise may print a block's empty top edge at the foot of a page and its code
#: on the next. Longer blocks may break (keeping them whole would leave pages half blank).
KEEP_WHOLE_LINES = 20
#: Runs in the page laid out for print: marks each short code block to be kept whole.
#: Returns how many were marked.
_KEEP_SHORT_CODE_WHOLE = r"""
(maxLines) => {
  let kept = 0;
  for (const code of document.querySelectorAll("article div.highlight")) {
    // A notebook cell's input box (its border) wraps the code: keep the box whole too.
    const box = code.closest("div.cell_input") || code;
    const pre = code.querySelector("pre");
    if (!pre || !box.offsetParent) continue;
    if (pre.textContent.replace(/\n$/, "").split("\n").length <= maxLines) {
      box.style.breakInside = "avoid";
      kept += 1;
    }
  }
  return kept;
}
"""
#: Runs in the single page before printing: the landing page's "Chapter map" (a
#: ``tableofcontents`` directive, which Sphinx's single page leaves empty because the pages
#: follow inline) gets a printed table of contents: one linked line per page of the book
#: (the marker spans ``document-<name>`` Sphinx puts before each), the API modules'
#: pages left out (the API reference is one entry). Returns the number of entries.
_PRINTED_CONTENTS = r"""
() => {
  const map = document.getElementById("chapter-map");
  if (!map) return 0;
  const list = document.createElement("ol");
  list.className = "posenc-printed-contents";
  list.style.listStyle = "none";
  for (const mark of document.querySelectorAll('span[id^="document-"]')) {
    if (mark.id.startsWith("document-book/api/") || mark.id === "document-book/intro") {
      continue;
    }
    const section = mark.nextElementSibling;
    const heading = section && section.querySelector("h1, h2, h3");
    if (!heading || !section.id) continue;
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = "#" + section.id;
    link.textContent = heading.textContent.replace(/#$/, "").trim();
    item.appendChild(link);
    list.appendChild(item);
  }
  const heading = map.querySelector("h1, h2, h3");
  if (heading) heading.after(list); else map.prepend(list);
  return list.children.length;
}
"""
#: A4 (210 mm) less the 14 mm side margins, in CSS pixels (96 per inch).
PRINT_WIDTH_PX = round((210 - 2 * 14) / 25.4 * 96)


def build_single_page(out: Path, language: str | None = None) -> Path:
    """Run Sphinx's ``singlehtml`` builder through jupyter-book (for ``language``, the
    edition's build, :mod:`booktools.zh_build`); return the page's folder."""
    page_dir = out / "_build" / "singlehtml"
    if language:
        from booktools import zh_build

        if language != zh_build.LANGUAGE:
            raise RuntimeError(f"no edition in {language!r}; there is {zh_build.LANGUAGE}")
        status, warnings = zh_build.build(ROOT, page_dir, builder="singlehtml",
                                          doctrees=out / "_build" / f".doctrees-{language}")
        if status:
            raise RuntimeError("single-page build failed:\n" + "\n".join(warnings[-40:]))
    else:
        jb = shutil.which("jupyter-book") or str(Path(sys.executable).with_name("jupyter-book"))
        cmd = [
            jb, "build", str(ROOT), "--path-output", str(out), "--builder", "custom",
            "--custom-builder", "singlehtml", "-n", "-W", "--keep-going",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise RuntimeError(
                f"single-page build failed:\n{(proc.stdout + proc.stderr)[-4000:]}")
    source = page_dir / root_document()
    if not source.is_file():
        raise RuntimeError(f"no single page at {source}")
    # Sphinx writes the page's links to _static/ and _images/ relative to the output's
    # root, but Jupyter Book names the page after the root document (book/intro.html):
    # a copy at the root is the page those links were written for.
    shutil.copy2(source, page_dir / SINGLE_PAGE)
    return page_dir


def root_document() -> str:
    """The book's root document (``_toc.yml``) as an HTML path, e.g. ``book/intro.html``."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return f"{toc['root']}.html"


def print_pdf(page_dir: Path, output: Path) -> None:
    """Serve ``page_dir`` on 127.0.0.1 and print its single page to ``output``."""
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium found: apt-get install chromium (Debian)")
    with serve(page_dir) as base, launch(chromium) as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(120_000)
        page.goto(f"{base}{SINGLE_PAGE}", wait_until="load")
        # Lay the page out as printed: print styles, and the paper's text width,
        # so the interactive figures are drawn at the size they are printed.
        page.emulate_media(media="print")
        page.set_viewport_size({"width": PRINT_WIDTH_PX, "height": 900})
        missing = page.evaluate(_READY)
        if missing:
            raise RuntimeError(f"interactive figures not drawn: {missing}")
        page.evaluate(_RESIZE)
        page.evaluate(_FIT_WIDE_BLOCKS, MIN_PRINT_FONT_PX)
        page.evaluate(_KEEP_SHORT_CODE_WHOLE, KEEP_WHOLE_LINES)
        page.evaluate(_PRINTED_CONTENTS)
        output.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(output), format="A4", print_background=True, outline=True,
                 tagged=True, margin={"top": "16mm", "bottom": "16mm",
                                      "left": "14mm", "right": "14mm"})


#: Per edition: words its printed PDF must hold (its title of chapter 4 and a glossary
#: term), read back from the PDF's text.
EDITION_WORDS = {"zh_CN": ("旋转位置编码", "位置编码", "外推")}


def check_language(text: str, language: str) -> list[str]:
    """The words of ``language``'s edition (:data:`EDITION_WORDS`) missing from ``text``
    (a PDF's text): a PDF printed without the CJK font, or from the English, misses them."""
    return [w for w in EDITION_WORDS.get(language, ()) if w not in text]


def build_pdf(output: Path = DEFAULT_OUTPUT, work: Path | None = None,
              language: str | None = None) -> Path:
    """Build the single page (under ``work``, default ``_build/pdf``, or
    ``_build/pdf-<language>``), print it to ``output``; for an edition, check its words."""
    work = work or (DEFAULT_OUTPUT.parent.with_name(f"pdf-{language}") if language
                    else DEFAULT_OUTPUT.parent)
    page_dir = build_single_page(work, language)
    print_pdf(page_dir, output)
    if language:
        pdftotext = shutil.which("pdftotext")
        if pdftotext is None:
            raise RuntimeError("pdftotext not found (apt-get install poppler-utils): the "
                               "edition's PDF cannot be checked")
        text = subprocess.run([pdftotext, str(output), "-"], capture_output=True,
                              text=True, check=True).stdout
        missing = check_language(text, language)
        if missing:
            raise RuntimeError(f"{output} lacks the {language} edition's words {missing}")
    return output


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None, help="PDF path")
    parser.add_argument("--language", default=None,
                        help="an edition other than the English (zh_CN)")
    args = parser.parse_args(argv)
    output = args.output or (DEFAULT_OUTPUT.with_suffix(f".{args.language}.pdf")
                             if args.language else DEFAULT_OUTPUT)
    try:
        path = build_pdf(output.resolve(), language=args.language)
    except RuntimeError as err:
        print(err, file=sys.stderr)
        return 1
    print(f"{path} ({path.stat().st_size / 2**20:.1f} MiB)")
    return 0
