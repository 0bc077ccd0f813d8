"""The site checks' crawl: what the checks of ``tests/test_browser.py`` assert, recorded
page by page in Debian's Chromium driven by Playwright.

* :func:`serve`, :data:`CHROMIUM_ARGS`, :func:`find_chromium`, :func:`launch`: the server
  and the browser set-up, shared with the PDF, are :mod:`booktools.chromium` (imported
  here too, so the site checks take them from one place); every host but localhost is
  unresolvable, and the crawl records each request to one;
* :func:`crawl_site`: every HTML page loaded once at 1280 px, recorded in a
  :class:`PageRecord` (HTTP status, uncaught errors, console errors, failed and
  third-party requests, math, images and alt text, links and ids, code and outputs that
  scroll sideways, axe-core's WCAG 2.1 A/AA report in both themes, run by
  :mod:`booktools.axe`, and which of the rules cut from the theme's stylesheet match an
  element in each state the page is taken in, :data:`CUT_STATES`, looked up by
  :mod:`booktools.cut_rules`);
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

from booktools.axe import axe_violations
from booktools.chromium import (  # noqa: F401 - the site checks import them from here
    CHROMIUM_ARGS,
    LOCAL_HOSTS,
    find_chromium,
    launch,
    serve,
)
from booktools.cut_rules import SelectorLookup

#: The crawl's window: a laptop's.
DESKTOP = {"width": 1280, "height": 900}
PAGE_TIMEOUT_MS = 30_000
RAW_TEX = ("$$", "\\(", "\\[")

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
    #: Per state the crawl took the page in (:data:`CUT_STATES`), the selectors of
    #: ``crawl_site``'s ``cut(path)`` that matched an element there, then those the
    #: browser cannot read (:class:`booktools.cut_rules.SelectorLookup`; an empty list
    #: where none did).
    cut: dict[str, list[str]] = field(default_factory=dict)

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
               leave_out=lambda path: (), on_a_phone=frozenset(),
               cut=lambda path: ()) -> dict[str, PageRecord]:
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

    ``cut(path)``: CSS selectors that must match no element of that page (the rules the
    build cut from the theme's stylesheet). They are looked up
    (:class:`booktools.cut_rules.SelectorLookup`) in each state the crawl takes the page in
    (:data:`CUT_STATES`), into ``PageRecord.cut``.

    Raises:
        MissingAxe: axe-core's script is not installed.
    """
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    context.add_init_script("performance.setResourceTimingBufferSize(10000)")
    records: dict[str, PageRecord] = {}
    root = urlsplit(base).path

    last: list[PageRecord | None] = [None]  # the page crawled last

    def owner() -> PageRecord | None:
        # Playwright delivers events in the order the browser sent them, so page.url is the
        # page that was showing when the event happened (not the one the crawl is now on);
        # on the blank page between two pages, the late events are the last page's.
        url = urlsplit(page.url)
        if url.scheme == "about":
            return last[0]
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
    lookups: dict[tuple[str, ...], SelectorLookup] = {}
    page.on(
        "response",
        lambda resp: resp.status >= 400 and record("HTTP error", f"{resp.status} {resp.url}"),
    )

    for path in site_pages(html) if pages is None else pages:
        rec = records[path] = PageRecord(path)
        last[0] = rec
        phone = path in on_a_phone
        selectors = tuple(cut(path))
        if selectors not in lookups:
            lookups[selectors] = SelectorLookup(selectors)

        def look_up(state: str, rec=rec, lookup=lookups[selectors]) -> None:
            if lookup.selectors:
                rec.cut[state] = lookup(page)

        cdp.send("Network.setCacheDisabled", {"cacheDisabled": phone})
        if phone:  # narrowed on a blank page, not by laying the last page out again
            page.goto("about:blank")
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
            if rec.phone["icon"] is False:
                rec.add("failed request", "the page's icon: not fetched within 20 s, so "
                        "the page was weighed without it")
            look_up(CUT_STATES[0])
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
        found = axe_violations(page, seen_styles, tuple(leave_out(path)),
                               on_theme=lambda theme: look_up(CUT_STATES[THEME_STATE[theme]]))
        for kind, lines in found.items():
            for line in lines:
                rec.add(kind, line)
        # last, as it leaves the menu open; a menu a click does not open is not looked up
        # in, which the test of the look-ups reports
        if selectors and page.evaluate(OPEN_MENU, [MENU_TOGGLE, MENU_OPEN]):
            look_up(CUT_STATES[-1])
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


#: The states the crawl takes a page in, in order, where it looks up ``cut``'s selectors:
#: on a phone as loaded (the pages it opens on a phone), at 1280 px in each theme (as the
#: colour runs switch to it, :data:`booktools.axe.AXE_RUNS`), and at 1280 px in the dark
#: theme with the download menu open (the pages that have one).
CUT_STATES = ("phone, as loaded", "1280 px, light", "1280 px, dark",
              "1280 px, dark, download menu open")
#: The index in CUT_STATES of each colour run's theme.
THEME_STATE = {"light": 1, "dark": 2}
#: A chapter's download menu: its button, and the menu shown.
MENU_TOGGLE = ".dropdown-download-buttons button.dropdown-toggle"
MENU_OPEN = ".dropdown-download-buttons .dropdown-menu.show"
#: Clicks the page's menu button (if it has one) and says whether the menu is open (the
#: theme's Bootstrap opens it in the click's handler); ``null`` for a page without one.
OPEN_MENU = r"""
([toggle, open]) => {
  const button = document.querySelector(toggle);
  if (!button) return null;
  button.click();
  return document.querySelector(open) !== null;
}
"""

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
#: After the window is resized: the CSS transitions the resize started are ended (run to
#: their end at once: the theme slides its primary sidebar in over 0.25 s when the window
#: widens past its breakpoint, narrowing the column frame by frame, and a page measured
#: mid-slide is wider than the page at rest; a script of the page that measures it
#: mid-slide, as the theme's tab stops did on a busy machine, is the test's business,
#: test_a_block_that_scrolls_keeps_its_tab_stop_when_the_sidebar_slides_in_late); then
#: two frames (layout, then the interactive figures' and the tab stops' ResizeObserver
#: callbacks, ``_ext/posenc_tabstops.js``), then the redraw's own frame.
SETTLE = r"""
async () => {
  await new Promise((r) => requestAnimationFrame(r));
  document.getAnimations().filter((a) => a instanceof CSSTransition)
      .forEach((a) => a.finish());
  for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
}
"""

#: Runs in a page opened at PHONE_WIDTH: waits as INSPECT does (and for the interactive
#: figures, the fonts and the page's icon, the last request a first visit makes), then
#: returns the page's width, its viewport meta tag, the bytes it loaded (Resource Timing:
#: the document and every resource, decoded sizes; every request goes to the same origin).
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
    await new Promise((r) => setTimeout(r, 10));
  }
  // the fonts a layout asks for only when it runs: lay the page out, let two frames draw
  // it and wait for the fonts requested, until a round starts no request
  for (let i = 0; i < 10; i++) {
    const before = performance.getEntriesByType("resource").length;
    document.body.getBoundingClientRect();
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await document.fonts.ready;
    if (performance.getEntriesByType("resource").length === before) break;
  }
  // the page's icon, which the browser fetches after the load event
  // (none to wait for: no icon, or one written into the page, which is not fetched)
  const link = document.querySelector('link[rel~="icon"]');
  const icon = link && /^https?:/.test(link.href) ? link.href : null;
  const since = Date.now();
  const fetched = () => performance.getEntriesByType("resource").some(
      (e) => e.name === icon);
  while (icon && !fetched() && Date.now() - since < 20000) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const entries = performance.getEntriesByType("navigation")
      .concat(performance.getEntriesByType("resource"));
  const meta = document.querySelector('meta[name="viewport"]');
  return {
    width: document.documentElement.scrollWidth,
    viewport: meta ? meta.content : null,
    bytes: entries.reduce((sum, e) => sum + (e.decodedBodySize || 0), 0),
    largest: entries.map((e) => [e.name, e.decodedBodySize || 0])
        .sort((a, b) => b[1] - a[1]).slice(0, 4),
    icon: icon ? fetched() : null,
  };
}
"""
