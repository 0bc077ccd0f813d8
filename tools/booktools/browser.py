"""The site checks' crawl: what the checks of ``tests/test_browser.py`` assert, recorded
page by page in Debian's Chromium driven by Playwright.

* :func:`serve`, :data:`CHROMIUM_ARGS`, :func:`find_chromium`, :func:`launch`: the server
  and the browser set-up, shared with the PDF, are :mod:`booktools.chromium` (imported
  here too, so the site checks take them from one place); every host but localhost is
  unresolvable, and the crawl records each request to one;
* :func:`crawl_site`: every HTML page loaded once at 1280 px, recorded in a
  :class:`PageRecord` (HTTP status, uncaught errors, console errors, failed and
  third-party requests, math, images and alt text, links and ids, code and outputs that
  scroll sideways, and axe-core's WCAG 2.1 A/AA report in both themes, :data:`AXE_RUNS`);
* the phone: the crawl opens a reader's page at :data:`PHONE_WIDTH` first and measures
  its width and weight there (:data:`PHONE`), then widens the window.

The tests decide what is a failure; this module only opens pages and measures them.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from booktools.chromium import (  # noqa: F401 - the site checks import them from here
    CHROMIUM_ARGS,
    LOCAL_HOSTS,
    find_chromium,
    launch,
    serve,
)

#: The crawl's window: a laptop's.
DESKTOP = {"width": 1280, "height": 900}
PAGE_TIMEOUT_MS = 30_000
RAW_TEX = ("$$", "\\(", "\\[")

#: axe-core's rules for WCAG 2.0 and 2.1, levels A and AA (axe's own tag names).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: Options for ``axe.run`` on every page. No rule is disabled. ``preload: false`` keeps
#: axe from fetching the stylesheets itself: its CSSOM preload resolves the theme's
#: ``@import "../basic.css"`` against the page's URL instead of the stylesheet's, so it
#: requests ``book/basic.css`` (a 404 the crawl would report against the site). The one
#: rule that needs that preload, ``css-orientation-lock`` (WCAG 1.3.4), then has nothing
#: to read; test_no_stylesheet_locks_the_orientation checks the same thing (no
#: ``orientation`` media query in any stylesheet the site serves) on the files.
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": WCAG_TAGS},
    "resultTypes": ["violations"],
    "preload": False,
}
#: Heading order and landmarks: axe files these under "best-practice", not under a WCAG
#: tag, so they are named here. All of them run, except ``region`` (all content inside
#: some landmark): sphinx-book-theme's template puts the book's title link at the top of
#: the sidebar outside its ``<nav>``, and this project does not override theme templates;
#: the same link is the first entry of the navigation, which is a landmark.
STRUCTURE_RULES = (
    "heading-order", "empty-heading", "page-has-heading-one", "landmark-one-main",
    "landmark-unique", "landmark-no-duplicate-banner", "landmark-no-duplicate-contentinfo",
    "landmark-no-duplicate-main", "landmark-main-is-top-level",
    "landmark-banner-is-top-level", "landmark-contentinfo-is-top-level",
    "landmark-complementary-is-top-level",
)
#: Each page is checked in three runs of axe (one injection): every WCAG rule but
#: ``color-contrast``, and the heading and landmark rules (named with ``enabled: true``,
#: which axe honours over the tag filter), on the whole page; ``color-contrast``, by far
#: the slowest rule, in the light theme; and ``color-contrast`` again in the dark theme
#: (the only rule the theme's colours change).
#:
#: The contrast runs check each *style* once per theme, not each of its thousands of
#: repeats: a text's contrast is a function of its style alone, so a second element with
#: the same style adds no check. Before each contrast run :data:`MARK_SEEN_STYLES` computes,
#: for every visible element that holds text of its own, a signature of everything axe's
#: contrast rule reads: the text's colour, size, weight, shadow, fill and stroke, and, for
#: the element and each ancestor up to the first opaque static one, its background colour
#: and image, position, opacity, blend mode and filters. An element (with all inside it) is
#: left out of the run only when neither it nor anything inside it shows a signature that
#: no earlier element of the crawl, on this page or an earlier one, has shown in that
#: theme; every other element is checked. Every page and every rule still run; a style
#: first met on page 30 is checked on page 30. The two runs also leave out MathJax's
#: assistive MathML (``mjx-assistive-mml``): that copy of each formula is clipped to one
#: pixel for screen readers only, so it has no visible text whose contrast could fail;
#: every other rule reads it. (test_the_contrast_check_reads_styles_not_elements makes
#: the dedupe miss nothing it should catch.)
SEEN_STYLE = "data-axe-seen"
CONTRAST_CONTEXT = {"exclude": [["mjx-assistive-mml"], [f"[{SEEN_STYLE}]"]]}
CONTRAST = {**AXE_OPTIONS, "runOnly": {"type": "rule", "values": ["color-contrast"]}}
#: ``kind: (context, options, theme)``; ``theme`` is ``None`` for the runs that read no
#: colour (they see the page as loaded), else the theme the run switches to first and
#: whose styles it dedupes.
AXE_RUNS = {
    "axe": (None, {**AXE_OPTIONS, "rules": {
        "color-contrast": {"enabled": False},
        **{rule: {"enabled": True} for rule in STRUCTURE_RULES}}}, None),
    "axe, contrast": (CONTRAST_CONTEXT, CONTRAST, "light"),
    "axe, dark theme": (CONTRAST_CONTEXT, CONTRAST, "dark"),
}


# ----------------------------------------------------------------------------- crawl ----

@dataclass
class PageRecord:
    path: str
    status: int | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)
    math: int = 0
    math_rendered: int = 0
    images: list[tuple[str, bool]] = field(default_factory=list)
    alts: list[tuple[str, str | None]] = field(default_factory=list)
    math_spoken: int = 0
    sideways: list[str] = field(default_factory=list)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    math_containers: int = 0
    links: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    #: What :data:`PHONE` (and :data:`OUTPUT_LINES`) measured with the page just loaded at
    #: PHONE_WIDTH, for the pages the crawl opens on a phone first; else ``None``.
    phone: dict | None = None

    def add(self, kind: str, message: str) -> None:
        self.problems.setdefault(kind, []).append(message)




INSPECT = r"""
async (rawTex) => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await document.fonts.ready;
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(async (img) => {
    if (!img.complete || img.naturalWidth === 0) {
      img.loading = "eager";
      try { await img.decode(); } catch (e) { /* reported below as not loaded */ }
    }
  }));
  const maths = Array.from(document.querySelectorAll(".math"));
  const text = document.body.cloneNode(true);
  text.querySelectorAll("pre, code, script, style, textarea, mjx-container, .highlight")
      .forEach((n) => n.remove());
  const plain = text.textContent;
  const raw = [];
  for (const token of rawTex) {
    let at = plain.indexOf(token);
    if (at >= 0) raw.push(plain.slice(Math.max(0, at - 40), at + 40).replace(/\s+/g, " "));
  }
  return {
    math: maths.length,
    mathRendered: maths.filter((m) => m.querySelector("mjx-container")).length,
    texErrors: Array.from(document.querySelectorAll("mjx-merror"))
        .map((e) => e.getAttribute("data-mjx-error") || e.textContent),
    raw: raw,
    images: imgs.map((i) => [i.currentSrc || i.src, i.complete && i.naturalWidth > 0]),
    alts: imgs.map((i) => [i.currentSrc || i.src, i.getAttribute("alt")]),
    mathSpoken: Array.from(document.querySelectorAll("mjx-container")).filter((m) =>
        m.querySelector("mjx-assistive-mml math")
        && m.querySelector(":scope > mjx-math[aria-hidden='true']")).length,
    mathContainers: document.querySelectorAll("mjx-container").length,
    links: Array.from(document.querySelectorAll("a[href]")).map((a) => a.href),
    ids: Array.from(document.querySelectorAll("[id], a[name]"))
        .map((e) => e.id || e.getAttribute("name")),
  };
}
"""


# Runs axe-core (injected just before) with a context and options and returns its
# violations, one line per element.
AXE_RUN = r"""
async ([context, options]) => {
  const result = await axe.run(context || document, options);
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(" ") + " " + n.html.slice(0, 160)),
  }));
}
"""

# Puts the page in a theme the way the theme's own toggle does (``data-mode`` and
# ``data-theme`` on <html>) and waits until the colours have settled. The theme animates
# its colours on a switch; transitions are turned off first (a style sheet added to the
# page, which changes no colour at rest), so the colours settle in the next frame instead
# of after each transition's duration; then two frames, and any animation still running.
SET_THEME = r"""
async (theme) => {
  const html = document.documentElement;
  if (!document.getElementById("posenc-no-transitions")) {
    const style = document.createElement("style");
    style.id = "posenc-no-transitions";
    style.textContent = "*, *::before, *::after { transition: none !important; }";
    document.head.appendChild(style);
  }
  if (html.dataset.theme !== theme) {
    html.dataset.mode = theme;
    html.dataset.theme = theme;
  }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));
}
"""


# Marks (with the attribute ``attr``) each element that the next contrast run can leave
# out, as the comment on AXE_RUNS says: one whose subtree shows no text signature outside
# ``seen``; returns the signatures met here for the first time. Marks of an earlier run
# are removed first.
MARK_SEEN_STYLES = r"""
([seen, attr]) => {
  const known = new Set(seen), fresh = [];
  document.querySelectorAll(`[${attr}]`).forEach((e) => e.removeAttribute(attr));
  const style = new Map(), layers = new Map();
  const cs = (el) => {
    let s = style.get(el);
    if (!s) { s = getComputedStyle(el); style.set(el, s); }
    return s;
  };
  const opaque = (s) => {
    const m = s.backgroundColor.match(/^rgba?\(([^)]*)\)$/);
    const alpha = m && m[1].split(",").length === 4 ? parseFloat(m[1].split(",")[3]) : 1;
    return m && alpha === 1 && s.backgroundImage === "none" && s.position === "static";
  };
  const behind = (el) => {
    if (!el || el.nodeType !== 1) return "";
    let l = layers.get(el);
    if (l === undefined) {
      const s = cs(el);
      l = [s.backgroundColor, s.backgroundImage, s.position, s.opacity, s.mixBlendMode,
           s.filter, s.backdropFilter].join(" ");
      if (!opaque(s)) l += " / " + behind(el.parentElement);
      layers.set(el, l);
    }
    return l;
  };
  const ownText = (el) => {
    for (const n of el.childNodes) if (n.nodeType === 3 && n.textContent.trim()) return true;
    return false;
  };
  const all = new Map();
  const walk = (el) => {
    let repeat = true;
    for (const child of el.children) if (!walk(child)) repeat = false;
    if (ownText(el) && el.getClientRects().length) {
      const s = cs(el);
      if (s.visibility === "visible") {
        const sig = [s.color, s.fontSize, s.fontWeight, s.textShadow,
                     s.webkitTextFillColor, s.webkitTextStrokeWidth, behind(el)].join("|");
        if (!known.has(sig)) { known.add(sig); fresh.push(sig); repeat = false; }
      }
    }
    all.set(el, repeat);
    return repeat;
  };
  walk(document.body);
  for (const [el, repeat] of all) {
    if (repeat && !all.get(el.parentElement)) el.setAttribute(attr, "");
  }
  return fresh;
}
"""


class MissingAxe(RuntimeError):
    """axe-core's script is not installed (``axe-playwright-python``, a Python requirement)."""


@functools.cache
def axe_script() -> str:
    """axe-core's ``axe.min.js``, as shipped by the pinned ``axe-playwright-python``.

    Raises:
        MissingAxe: the package is not installed.
    """
    try:
        from axe_playwright_python.base import AXE_SCRIPT
    except ImportError as err:
        raise MissingAxe("axe-playwright-python is not installed "
                         "(pip install -r requirements.txt)") from err
    return AXE_SCRIPT


def axe_violations(page, seen_styles: dict[str, set[str]],
                   leave_out: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """axe-core's WCAG 2.1 A/AA violations on the page now open, per run of
    :data:`AXE_RUNS`, one line per rule (the page is left in the dark theme).

    ``seen_styles``: per theme, the text-style signatures whose contrast earlier pages
    (or earlier elements) checked; the signatures this page shows for the first time are
    added to it. ``leave_out``: CSS selectors of content every run leaves out, because
    another page of the crawl holds it byte for byte and its runs check it there.
    """
    page.evaluate(axe_script())
    found = {}
    for kind, (context, options, theme) in AXE_RUNS.items():
        if theme is not None:
            page.evaluate(SET_THEME, theme)
            seen = seen_styles.setdefault(theme, set())
            fresh = page.evaluate(MARK_SEEN_STYLES, [sorted(seen), SEEN_STYLE])
            seen.update(fresh)
            if not fresh:  # every text style here was checked before: the whole body is
                found[kind] = []  # marked, and the run would check nothing
                continue
        found[kind] = [
            f"{v['id']} ({v['impact']}): {v['help']}; " + " | ".join(v["nodes"][:5])
            + (f" | ... {len(v['nodes']) - 5} more" if len(v["nodes"]) > 5 else "")
            for v in page.evaluate(AXE_RUN, [_without(context, leave_out), options])
        ]
    return found


def _without(context: dict | None, leave_out: tuple[str, ...]) -> dict | None:
    if not leave_out:
        return context
    exclude = [[selector] for selector in leave_out]
    if context is None:
        return {"exclude": exclude}
    return {**context, "exclude": [*context.get("exclude", []), *exclude]}


REFRESH = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.I)


def redirect_target(page: Path) -> str | None:
    """Where a page that only redirects (a meta refresh, as Jupyter Book writes the root
    ``index.html`` of each edition) sends the reader, relative to it; ``None`` for a page."""
    try:
        head = page.read_text(encoding="utf-8", errors="replace")[:500]
    except OSError:
        return None
    found = REFRESH.match(head.strip())
    return found.group(1) if found else None


def site_pages(html: Path) -> list[str]:
    """Every page of the site, as paths relative to the HTML root: each edition's, the
    theme's Jinja templates copied into a ``_static`` folder (the English site's or the
    Chinese edition's) excluded."""
    return sorted(
        p.relative_to(html).as_posix()
        for p in html.rglob("*.html")
        if "_static" not in p.relative_to(html).parts
    )


def balanced_groups(costs: dict[str, float], groups: int) -> dict[str, int]:
    """Split pages into ``groups`` crawls of about equal cost: each page, costliest first
    (ties by path), to the group with the least cost so far. Returns ``{page: group}``,
    the same on every worker for the same ``costs``."""
    load = [0.0] * groups
    out = {}
    for page in sorted(costs, key=lambda p: (-costs[p], p)):
        g = min(range(groups), key=lambda i: (load[i], i))
        out[page] = g
        load[g] += costs[page]
    return out


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"])
        if tag == "a" and found.get("name"):
            self.ids.add(found["name"])


@functools.cache
def static_ids(page: Path) -> frozenset[str]:
    """Every element id (and ``<a name>``) in the HTML file as served, before any script
    runs: the anchors a link from another crawl group can be checked against. Each file
    is read once per process (a built site does not change during a run)."""
    parser = _Ids()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


def crawl_site(browser, base: str, html: Path, pages: list[str] | None = None,
               leave_out=lambda path: (), on_a_phone=frozenset()) -> dict[str, PageRecord]:
    """Load every page of the site in ``html`` (:func:`site_pages`; or only ``pages``, paths
    relative to ``html``), served at ``base``, once, and record each in a
    :class:`PageRecord`, keyed by its path. ``leave_out(path)``: the CSS selectors of the
    content of that page that axe leaves out (:func:`axe_violations`).

    A page is checked in a 1280 px window. A page in ``on_a_phone`` is loaded in a
    PHONE_WIDTH window first and measured there as a phone shows it (:data:`PHONE`, into
    ``PageRecord.phone``), then the window is widened to 1280 px for everything else: the
    site's layout is CSS and its interactive figures redraw when their box is resized, so
    the widened page is the page a 1280 px window loads. For those pages the browser's
    cache is off, so a page's weight counts every byte it loads, as a first visit does;
    the other pages (whose weight is not recorded) load with the cache on.

    Raises:
        MissingAxe: axe-core's script is not installed.
    """
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    context.add_init_script("performance.setResourceTimingBufferSize(10000)")
    records: dict[str, PageRecord] = {}
    root = urlsplit(base).path

    def owner() -> PageRecord | None:
        # Playwright delivers events in the order the browser sent them, so page.url is the
        # page that was showing when the event happened (not the one the crawl is now on).
        url = urlsplit(page.url)
        return records.get(unquote(url.path[len(root):]) or "index.html")

    def record(kind: str, message: str) -> None:
        rec = owner()
        if rec is not None:
            rec.add(kind, message)

    def third_party(req) -> None:
        url = urlsplit(req.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.hostname not in LOCAL_HOSTS:
            record("third-party request", req.url)

    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    page.on("request", third_party)
    page.on("pageerror", lambda err: record("uncaught error", str(err)))
    page.on("console", lambda msg: msg.type == "error" and record("console error", msg.text))
    aborted: dict[str, PageRecord] = {}

    def failed(req) -> None:
        if urlsplit(req.url).hostname not in LOCAL_HOSTS:
            return  # unresolvable by design, reported as a third-party request
        if req.failure == "net::ERR_ABORTED" and owner() is not None:
            aborted[req.url] = owner()  # cut off by the next navigation: re-fetched below
        else:
            record("failed request", f"{req.url} ({req.failure})")

    page.on("requestfailed", failed)
    seen_styles: dict[str, set[str]] = {}
    page.on(
        "response",
        lambda resp: resp.status >= 400 and record("HTTP error", f"{resp.status} {resp.url}"),
    )

    for path in site_pages(html) if pages is None else pages:
        rec = records[path] = PageRecord(path)
        phone = path in on_a_phone
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": phone})
        if phone:
            page.set_viewport_size(PHONE_VIEWPORT)
        response = page.goto(base + path, wait_until="load")
        rec.status = response.status if response else None
        target = redirect_target(html / path)
        if target is not None:  # an edition's root: a meta refresh to its landing page
            page.wait_for_url(re.compile(".*/" + re.escape(
                posixpath.normpath(posixpath.join(posixpath.dirname(path), target))) + "$"))
            page.wait_for_load_state("load")
        if phone:
            rec.phone = {**page.evaluate(PHONE), "outputs": page.evaluate(OUTPUT_LINES)}
            page.set_viewport_size(DESKTOP)
            page.evaluate(SETTLE)
        info = page.evaluate(INSPECT, list(RAW_TEX))
        rec.math, rec.math_rendered = info["math"], info["mathRendered"]
        for err in info["texErrors"]:
            rec.add("TeX error", err)
        for snippet in info["raw"]:
            rec.add("raw TeX", snippet)
        rec.images = [(src, ok) for src, ok in info["images"]]
        rec.alts = [(src, alt) for src, alt in info["alts"]]
        rec.math_spoken, rec.math_containers = info["mathSpoken"], info["mathContainers"]
        rec.sideways = page.evaluate(SIDEWAYS)  # at 1280 px, before axe touches the page
        rec.outputs = page.evaluate(OUTPUT_LINES)
        rec.links = info["links"]
        rec.ids = {i for i in info["ids"] if i}
        for kind, lines in axe_violations(page, seen_styles, tuple(leave_out(path))).items():
            for line in lines:
                rec.add(kind, line)
    page.goto("about:blank")  # deliver the last page's remaining events
    # A request still in flight when the crawl moves on (typically the favicon, which
    # Chromium fetches after "load") is aborted by the navigation, not by the site: fetch
    # each such URL once more and require it to be served.
    for url, rec in aborted.items():
        status = context.request.get(url).status
        if status != 200:
            rec.add("failed request", f"{url} (aborted, then HTTP {status})")
    context.close()
    return records


#: Reports every code block and table of the article that scrolls sideways (content
#: wider than its box), with its width in characters where it is code. Output blocks are
#: not in it: an output keeps its lines and may scroll (see :data:`OUTPUT_LINES`).
SIDEWAYS = r"""
() => {
  const article = document.querySelector("article") || document.body;
  const found = [];
  for (const el of article.querySelectorAll("div.highlight pre, table")) {
    if (!el.offsetParent) continue;  // hidden (e.g. a collapsed hide-input cell)
    if (el.closest("div.cell_output, div.output")) continue;  // an output: measured apart
    const box = el.tagName === "TABLE" ? (el.parentElement || el) : el;
    const wide = el.tagName === "TABLE" ? el.scrollWidth > box.clientWidth + 1
                                        : el.scrollWidth > el.clientWidth + 1;
    if (wide) {
      const line = (el.innerText || "").split("\n")
          .reduce((a, b) => (b.length > a.length ? b : a), "");
      found.push(`${el.tagName.toLowerCase()} ${el.scrollWidth}px in ${box.clientWidth}px: `
                 + line.slice(0, 100));
    }
  }
  return found;
}
"""
#: Measures every visible output block (what a cell printed) of the article: whether its
#: lines wrap (the block is taller than the same text laid out with ``white-space: pre``,
#: one line per printed line) and whether it scrolls sideways inside its own box. Returns
#: ``{wrapped: [...], scrolls: [...]}``, one line per block: its number on the page
#: (1-based, among output blocks), its widths and its first line.
OUTPUT_LINES = r"""
() => {
  const article = document.querySelector("article") || document.body;
  const wrapped = [], scrolls = [];
  const blocks = Array.from(article.querySelectorAll("div.cell_output pre, div.output pre"))
      .filter((pre, i, all) => !all.some((o) => o !== pre && o.contains(pre)));
  blocks.forEach((pre, i) => {
    if (!pre.offsetParent) return;
    const first = pre.textContent.split("\n")[0].slice(0, 80);
    const height = pre.scrollHeight;
    const style = pre.style.whiteSpace;
    pre.style.whiteSpace = "pre";
    const unwrapped = pre.scrollHeight;
    pre.style.whiteSpace = style;
    const what = `output ${i + 1}: ${pre.scrollWidth}px in ${pre.clientWidth}px: ${first}`;
    if (height > unwrapped + 1) wrapped.push(what);
    if (pre.scrollWidth > pre.clientWidth + 1) scrolls.push(what);
  });
  return {wrapped: wrapped, scrolls: scrolls};
}
"""


# ------------------------------------------------------------------------------ phone ----

#: The phone's width in CSS pixels (an iPhone 12-15's portrait viewport).
PHONE_WIDTH = 390
PHONE_VIEWPORT = {"width": PHONE_WIDTH, "height": 844}
#: After the window is resized: two frames (layout, then the interactive figures'
#: ResizeObserver redraw), then the redraw's own frame.
SETTLE = r"""
async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
}
"""

#: Runs in a page opened at PHONE_WIDTH: waits as INSPECT does, then returns the page's
#: width, its viewport meta tag, the bytes it loaded (Resource Timing: the document and
#: every resource, decoded sizes; every request goes to the same origin).
PHONE = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await Promise.all(Array.from(document.images).map(async (img) => {
    img.loading = "eager";
    try { await img.decode(); } catch (e) { /* test_every_image_loads reports it */ }
  }));
  const blocks = Array.from(document.querySelectorAll(".posenc-interactive"));
  const start = Date.now();
  while (blocks.some((b) => !b.dataset.mounted) && Date.now() - start < 20000) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await document.fonts.ready;
  await new Promise((r) => setTimeout(r, 200));  // requests the fonts just started
  const entries = performance.getEntriesByType("navigation")
      .concat(performance.getEntriesByType("resource"));
  const meta = document.querySelector('meta[name="viewport"]');
  return {
    width: document.documentElement.scrollWidth,
    viewport: meta ? meta.content : null,
    bytes: entries.reduce((sum, e) => sum + (e.decodedBodySize || 0), 0),
    largest: entries.map((e) => [e.name, e.decodedBodySize || 0])
        .sort((a, b) => b[1] - a[1]).slice(0, 4),
  };
}
"""
