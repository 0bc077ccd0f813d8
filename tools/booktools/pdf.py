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
the page become links inside the PDF. On paper the text is narrower than on screen: code
is printed in one size at which the chapters' 88-character lines fit (no code line wraps);
every printed output or table wider than the page gets a font just small enough for its
longest line to fit, down to MIN_PRINT_FONT_PX (7 pt), and a line still too wide wraps
with a hanging indent; a display equation wider than the page is scaled to fit, and the
build fails if one would still be cut off. Before printing, code blocks of up to
KEEP_WHOLE_LINES lines are kept on one page, the landing page's empty "Chapter map" gets a
printed, linked table of contents, and the API reference becomes a compact index (each
module's public names and one-line summaries; the full pages stay on the site). The print
styles (_ext/posenc_site.css) start each chapter on a new page, leave the on-screen
controls off the paper, and let long tables, outputs and solutions run on over a page
break instead of moving whole to the next page.

With ``--language zh_CN`` the single page is the Chinese edition's
(:mod:`booktools.zh_build`, same sources, translated prose; the CJK glyphs come from the
system's Noto CJK fonts, ``fonts-noto-cjk``), and the printed PDF must hold the
edition's own words (:func:`check_language`, read back with poppler's ``pdftotext``).

The single page uses the same committed notebook outputs as the site. Exit status 0 and
the PDF's path on success; a non-zero status with the reason otherwise.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from booktools.chromium import find_chromium, launch, serve
from booktools.stamp import pdf_digest
from booktools.stamp import pdf_stamp_path as stamp_path

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
#: The smallest font size, in CSS pixels, a wide output or table is shrunk to on paper:
#: 9.4 px is 7.05 pt, the smallest print a reader reads without a lens.
MIN_PRINT_FONT_PX = 9.4
#: The widest code line the chapters hold (CONTRIBUTING: code lines stay within 88
#: characters): code is printed in one font size at which this many characters fit.
CODE_COLUMNS = 88
#: A wrapped line of code or output continues this many characters to the right of the
#: line's own indentation (a hanging indent), so that it cannot be read as a new line.
HANG_COLUMNS = 4
#: Runs in the page laid out for print. Code: every code block in one font size, at which
#: CODE_COLUMNS characters fit the narrowest code box (no smaller than minPx). Printed
#: outputs (``pre``) and tables wider than their box get a smaller font, just small enough
#: for their longest line or row to fit, but no smaller than minPx: a column table keeps
#: one row per line. What is still too wide wraps (a table between words, a ``pre`` by the
#: print CSS) and each wrapped line of a ``pre`` hangs HANG_COLUMNS characters right of its
#: own indentation. A display equation wider than its box is scaled down to fit (MathJax 3
#: cannot break a line). Returns how many blocks were shrunk, hung and scaled.
_FIT_WIDE_BLOCKS = r"""
({minPx, columns, hang}) => {
  const counts = {shrunk: 0, hung: 0, scaled: 0, codePx: 0};
  const isOutput = (pre) => !!pre.closest("div.cell_output, div.output");
  const padding = (el) => {
    const style = getComputedStyle(el);
    return parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  };
  const charWidth = (el) => {  // the width of one character of el's (monospace) font
    const probe = document.createElement("span");
    probe.textContent = "0".repeat(100);
    probe.style.whiteSpace = "pre";
    el.appendChild(probe);
    const w = probe.getBoundingClientRect().width / 100;
    probe.remove();
    return w;
  };
  // The longest line of a pre, in characters (CJK characters take two columns).
  const wide = /[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFF60]/g;
  const columnsOf = (pre) => Math.max(...pre.textContent.replace(/\n$/, "").split("\n")
    .map((line) => line.length + (line.match(wide) || []).length));
  const fit = (el, avail, need) => {
    if (need <= avail + 1 || avail <= 0) return;
    const size = parseFloat(getComputedStyle(el).fontSize);
    el.style.fontSize = Math.max(minPx, Math.floor(size * avail / need * 0.97 * 10) / 10) + "px";
    counts.shrunk += 1;
  };
  // Each line of a pre as its own block, indented as a hanging paragraph.
  const hangLines = (pre) => {
    const lines = [[]];
    const push = (node, text) => {
      text.split("\n").forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (!part) return;
        if (node.nodeType === Node.TEXT_NODE) {
          lines[lines.length - 1].push(document.createTextNode(part));
        } else {
          const copy = node.cloneNode(false);
          copy.textContent = part;
          lines[lines.length - 1].push(copy);
        }
      });
    };
    for (const node of Array.from(pre.childNodes)) push(node, node.textContent);
    if (lines.length > 1 && lines[lines.length - 1].length === 0) lines.pop();
    pre.textContent = "";
    for (const parts of lines) {
      const line = document.createElement("span");
      line.className = "posenc-line";
      const text = parts.map((n) => n.textContent).join("");
      const indent = text.length - text.trimStart().length + hang;
      line.style.cssText = `display:block; padding-left:${indent}ch; text-indent:-${indent}ch`;
      parts.forEach((n) => line.appendChild(n));
      line.appendChild(document.createTextNode("\n"));
      pre.appendChild(line);
    }
    counts.hung += 1;
  };
  const pres = Array.from(document.querySelectorAll("article div.highlight pre"))
    .filter((pre) => pre.offsetParent);
  const avail = (pre) => pre.clientWidth - padding(pre);
  // Code: in each box, the size at which `columns` characters fit (the same for every
  // box of the same width), no larger than the screen's.
  for (const pre of pres.filter((p) => !isOutput(p))) {
    const size = parseFloat(getComputedStyle(pre).fontSize);
    const px = Math.floor(size * avail(pre) / (columns * charWidth(pre)) * 0.97 * 10) / 10;
    if (px < size) pre.style.fontSize = Math.max(minPx, px) + "px";
    counts.codePx = Math.max(counts.codePx, Math.min(size, Math.max(minPx, px)));
  }
  // Outputs: just small enough for the longest line to fit, down to minPx.
  for (const pre of pres.filter(isOutput)) fit(pre, avail(pre), columnsOf(pre) * charWidth(pre));
  // What still does not fit wraps, each line hanging right of its own indentation.
  for (const pre of pres) {
    if (columnsOf(pre) * charWidth(pre) > avail(pre) + 1) hangLines(pre);
  }
  for (const table of document.querySelectorAll("article table")) {
    const box = table.parentElement;
    if (!table.offsetParent || !box) continue;
    fit(table, box.clientWidth - padding(table), table.scrollWidth - padding(table));
  }
  for (const math of document.querySelectorAll('article mjx-container[display="true"]')) {
    const box = math.closest("div.math") || math.parentElement;
    // an equation number (span.eqno) shares the box's row
    const others = Array.from(box.children).filter((el) => el !== math)
      .reduce((sum, el) => sum + el.getBoundingClientRect().width + 8, 0);
    const avail = box.clientWidth - others, need = math.scrollWidth;
    if (!math.offsetParent || need <= avail + 1 || avail <= 0) continue;
    const size = parseFloat(getComputedStyle(math).fontSize);
    math.style.fontSize = Math.floor(size * avail / need * 0.97 * 10) / 10 + "px";
    counts.scaled += 1;
  }
  return counts;
}
"""
#: Runs in the page laid out for print, after _FIT_WIDE_BLOCKS: what paper would cut off.
#: Returns one line per display equation still wider than its box (``div.math`` clips).
_CLIPPED = r"""
() => {
  const found = [];
  for (const math of document.querySelectorAll('article mjx-container[display="true"]')) {
    const box = math.closest("div.math") || math.parentElement;
    if (!math.offsetParent) continue;
    const over = math.getBoundingClientRect().right - box.getBoundingClientRect().right;
    if (over > 1 || math.scrollWidth > box.clientWidth + 1) {
      const tex = (math.querySelector("mjx-assistive-mml") || math).textContent;
      found.push(`equation ${Math.round(over)} px wider than its box: ${tex.slice(0, 60)}`);
    }
  }
  return found;
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
#: The sentence that points a reader of the PDF from the API index to the full pages.
API_POINTER = (
    "On paper this reference is an index: each module of posenc, its public names and the "
    "first line of each docstring. The full pages (signatures, arguments and shapes, the "
    "errors raised, sources) are on the book's site, under API reference "
    "(book/api/<module>.html), and in each docstring: help(posenc.rope.apply_rope)."
)
#: Runs in the single page before printing: each API module's page (the marker span
#: ``document-book/api/<module>`` and its section) becomes a compact index, its heading,
#: the module's one-line summary and one line per public name (a class with its public
#: methods) with the first sentence of its docstring; the full pages stay on the site.
#: Every anchor of a removed definition stays on its index line, so the chapters' links
#: still land. Returns the number of names listed.
_API_INDEX = r"""
(pointer) => {
  const firstSentence = (dd) => {
    const p = Array.from(dd ? dd.querySelectorAll(":scope > p") : [])
      .find((el) => !el.textContent.startsWith("Bases:"));
    if (!p) return "";
    const text = p.textContent.replace(/\s+/g, " ").trim();
    const end = text.search(/\.(\s|$)/);
    return end >= 0 ? text.slice(0, end + 1) : text;
  };
  let listed = 0;
  const home = document.querySelector('span[id="document-book/api"] + section');
  if (home) {
    const note = document.createElement("p");
    note.className = "posenc-api-pointer";
    note.textContent = pointer;
    (home.querySelector("h1, h2, h3, h4") || home).after(note);
  }
  for (const mark of document.querySelectorAll('span[id^="document-book/api/"]')) {
    const section = mark.nextElementSibling;
    if (!section || section.tagName !== "SECTION") continue;
    const heading = section.querySelector("h1, h2, h3, h4, h5, h6");
    const summary = section.querySelector(":scope > p");
    const list = document.createElement("ul");
    list.className = "posenc-api-index";
    for (const dl of section.querySelectorAll(":scope > dl.py")) {
      const dt = dl.querySelector(":scope > dt");
      const dd = dl.querySelector(":scope > dd");
      if (!dt) continue;
      const item = document.createElement("li");
      if (dt.id) item.id = dt.id;
      const name = document.createElement("code");
      name.textContent = (dt.querySelector(".sig-name") || dt).textContent.trim();
      item.appendChild(name);
      const kind = dl.classList.contains("class") ? "class " : "";
      if (kind) item.insertBefore(document.createTextNode(kind), name);
      item.appendChild(document.createTextNode(" \u2014 " + firstSentence(dd)));
      const members = Array.from(dd ? dd.querySelectorAll(":scope > dl.py > dt[id]") : []);
      const names = members.map((m) => (m.querySelector(".sig-name") || m).textContent.trim())
        .filter((n) => !n.startsWith("_"));
      if (names.length) {
        item.appendChild(document.createTextNode(" Members: " + names.join(", ") + "."));
      }
      for (const m of members) {  // keep the members' anchors
        const anchor = document.createElement("span");
        anchor.id = m.id;
        item.appendChild(anchor);
      }
      list.appendChild(item);
      listed += 1;
    }
    const keep = new Set([heading, summary].filter(Boolean));
    for (const child of Array.from(section.children)) {
      if (!keep.has(child) && !child.contains(heading)) child.remove();
    }
    section.appendChild(list);
  }
  return listed;
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
        page.evaluate(_API_INDEX, API_POINTER)
        # Let the page's own print handlers run first (sphinx-togglebutton opens the
        # exercises' solutions, narrowing their boxes), so that what is measured below
        # is what is printed.
        page.evaluate('() => window.dispatchEvent(new Event("beforeprint"))')
        page.evaluate(_FIT_WIDE_BLOCKS, {"minPx": MIN_PRINT_FONT_PX,
                                         "columns": CODE_COLUMNS, "hang": HANG_COLUMNS})
        clipped = page.evaluate(_CLIPPED)
        if clipped:
            raise RuntimeError("paper would cut these off:\n" + "\n".join(clipped))
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
    stamp = stamp_path(output.resolve())
    stamp.unlink(missing_ok=True)  # a failed build leaves no stamp behind
    try:
        path = build_pdf(output.resolve(), language=args.language)
    except RuntimeError as err:
        print(err, file=sys.stderr)
        return 1
    digest = inputs(ROOT)
    if digest is not None:  # tests/test_pdf.py checks this PDF instead of printing one
        stamp.write_text(json.dumps({"inputs": digest}), encoding="utf-8")
    print(f"{path} ({path.stat().st_size / 2**20:.1f} MiB)")
    return 0


def browser_version() -> str:
    """``chromium --version`` of the browser that prints the PDF (part of its stamp)."""
    executable = find_chromium()
    if executable is None:
        return "no browser"
    return subprocess.run([executable, "--version"], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def inputs(root: Path) -> str | None:
    """The digest a PDF built now from ``root`` is stamped with
    (:func:`booktools.stamp.pdf_digest`)."""
    return pdf_digest(root, browser_version())
