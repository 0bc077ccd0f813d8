"""What the build cut from the site to make its pages lighter changes nothing a reader
sees, checked in a real browser (Debian's Chromium driven by Playwright, as
tests/test_browser.py):

- a code token whose span booktools.site.highlight removed looks exactly as it would
  inside its span, in both themes, on a chapter and on a highlighted source page, and a
  printed output keeps the page's text colour;
- no rule that the build cut from the theme's stylesheet (booktools.site.theme_css, and
  the unused icons' rules booktools.site.icons cut) matches any element of a page, in
  both themes, at 1280 px and on a phone, and with the download menu open: each selector
  of the theme's own stylesheet (as pydata-sphinx-theme ships it) that the page's
  edition's copy lacks, widened to any element that could be hovered, focused or the
  like, is looked up in the page.

Each check is made to fail on purpose. The unit tests of the rules themselves are in
tests/test_site_weight.py.

Without Chromium or Playwright the tests are skipped with a message, except under
``CI=true``, where they fail.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re

import pytest

from booktools import zh_build
from booktools.axe import SET_THEME
from booktools.browser import DESKTOP, PHONE_VIEWPORT
from booktools.site import highlight, theme_css
from booktools.site.icons import THEME_CSS

pytestmark = pytest.mark.slow

#: A chapter's code cells and printed outputs (chapter 1: a light page, quick to load),
#: and a module's highlighted source.
PAGES = ("book/01_why_positions.html", "_modules/posenc/rope.html")
THEMES = ("light", "dark")
#: What a reader sees of a token: how its text is drawn.
LOOKS = ("color", "font-weight", "font-style", "background-color", "text-decoration-line",
         "opacity")

#: For each class, how a span of that class inside the page's first code block looks,
#: and how the block's own text (a text node, as an unwrapped token is) looks: the block's
#: inherited text properties, with nothing drawn behind or on the text itself.
LOOK = r"""
([classes, looks]) => {
  const pre = document.querySelector('div.highlight pre');
  const style = getComputedStyle(pre);
  const bare = {color: style.color, 'font-weight': style.fontWeight,
                'font-style': style.fontStyle, 'background-color': 'rgba(0, 0, 0, 0)',
                'text-decoration-line': 'none', opacity: '1'};
  const out = {bare: looks.map((p) => bare[p]).join(' | ')};
  for (const cls of classes) {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = 'x';
    pre.appendChild(span);
    const cs = getComputedStyle(span);
    out[cls] = looks.map((p) => cs.getPropertyValue(p)).join(' | ');
    span.remove();
  }
  return out;
}
"""
#: How many spans of the given classes are left inside the page's code blocks.
LEFT = """(classes) => classes.reduce((n, c) =>
  n + document.querySelectorAll('div.highlight pre span.' + CSS.escape(c)).length, 0)"""


@pytest.fixture(scope="module")
def plain(site) -> list[str]:
    _, html = site
    classes = sorted(highlight.site_plain_classes(html / "_static"))
    assert {"n", "p"} <= set(classes), classes  # names and punctuation, the bulk of code
    return classes


def looks(browser, url: str, classes: list[str], extra_css: str = "") -> dict:
    """Per theme, :data:`LOOK` on the page at ``url`` (with ``extra_css`` added), and the
    number of spans of ``classes`` left in its code blocks."""
    page = browser.new_page()
    try:
        page.goto(url, wait_until="load")
        if extra_css:
            page.add_style_tag(content=extra_css)
        out = {"left": page.evaluate(LEFT, classes)}
        for theme in THEMES:
            page.evaluate(SET_THEME, theme)
            out[theme] = page.evaluate(LOOK, [classes, list(LOOKS)])
        return out
    finally:
        page.close()


def differences(seen: dict, classes: list[str]) -> list[str]:
    return [f"{theme}: span.{cls} is drawn as {seen[theme][cls]!r}, the code's own text "
            f"as {seen[theme]['bare']!r}"
            for theme in THEMES for cls in classes if seen[theme][cls] != seen[theme]["bare"]]


#: The colour of a printed output's text, and of a ``pre`` the theme draws with no rule
#: of the site's (added to the article), per theme.
OUTPUT_COLOUR = r"""
() => {
  const output = document.querySelector('div.output div.highlight pre');
  const bare = document.createElement('pre');
  document.querySelector('article').appendChild(bare);
  const out = [getComputedStyle(output).color, getComputedStyle(bare).color];
  bare.remove();
  return out;
}
"""


def output_colours(browser, url: str, extra_css: str = "") -> dict[str, list[str]]:
    page = browser.new_page()
    try:
        page.goto(url, wait_until="load")
        if extra_css:
            page.add_style_tag(content=extra_css)
        colours = {}
        for theme in THEMES:
            page.evaluate(SET_THEME, theme)
            colours[theme] = page.evaluate(OUTPUT_COLOUR)
        return colours
    finally:
        page.close()


def test_printed_outputs_keep_the_pages_text_colour(site, browser):
    base, _ = site
    colours = output_colours(browser, base + PAGES[0])
    assert all(output == bare for output, bare in colours.values()), colours
    # on purpose: the code style's colour given to outputs too is caught
    broken = output_colours(browser, base + PAGES[0],
                            "div.highlight pre { color: inherit !important; }")
    assert any(output != bare for output, bare in broken.values()), broken


@pytest.mark.parametrize("path", PAGES)
def test_an_unwrapped_token_looks_as_it_did(site, browser, plain, path):
    base, _ = site
    seen = looks(browser, base + path, plain)
    assert seen["left"] == 0, f"{seen['left']} spans of {plain} left in {path}'s code"
    assert not differences(seen, plain)


def test_self_test_the_look_check_sees_a_difference(site, browser, plain):
    base, _ = site
    # a keyword is drawn in a style of its own: the check tells it from plain text
    assert differences(looks(browser, base + PAGES[0], ["k"]), ["k"])
    # on purpose: code text in the page's colour, as the theme's rule for every pre had
    # it before the site's CSS gave code blocks the code style's colour
    broken = "div.highlight pre { color: rgb(34, 40, 50) !important; }"
    assert differences(looks(browser, base + PAGES[0], plain, broken), plain)


# ------------------------------------------------------ the theme's stylesheet, cut ----

#: Pages of every kind: the landing page, a chapter (code, math, figures), an API page,
#: a module's highlighted source, the index, the atlas (its table and script), the search
#: page, and the Chinese landing page and a Chinese chapter (the Chinese edition cuts its
#: own copy of the stylesheet, from its own pages).
STYLE_PAGES = ("book/intro.html", "book/02_sinusoidal.html", "book/api/scaling.html",
               "_modules/posenc/rope.html", "genindex.html", "book/atlas.html",
               "search.html", "zh_CN/book/intro.html", "zh_CN/book/03_learned.html")
#: ``(name, viewport, theme, open the download menu)``, taken in this order on one load
#: of a page (the menu stays open in the states after it).
STATES = (("1280 px, light", DESKTOP, "light", False),
          ("1280 px, dark", DESKTOP, "dark", False),
          ("1280 px, dark, download menu open", DESKTOP, "dark", True),
          ("phone, light", PHONE_VIEWPORT, "light", False))
#: A pseudo-element, or a pseudo-class that holds only while a reader interacts with an
#: element (or that a page's state may change): widened away (:func:`widen`), so the
#: selector matches every element that could ever be in that state (a superset).
_TRANSIENT = re.compile(
    r"::?(?:before|after|placeholder|selection|marker|backdrop|file-selector-button|"
    r"first-letter|first-line|-webkit-[\w-]+|-moz-[\w-]+|-ms-[\w-]+)(?![\w-])|"
    r":(?:hover|focus|focus-visible|focus-within|active|visited|link|checked|disabled|"
    r"enabled|indeterminate|invalid|valid|required|optional|read-only|read-write|target|"
    r"placeholder-shown|autofill|default|empty|defined)(?![\w-])")
#: The selectors (of ``selectors``) that match an element of the page now open, or that
#: the browser cannot read (each reported with the reason). All of them are looked up at
#: once first, as one selector list (which matches where any of them does): in most
#: states none matches, and one look-up says so; a list the browser cannot read (one
#: unreadable selector makes the whole list so) is looked up selector by selector.
MATCHING = r"""
(selectors) => {
  try {
    if (!selectors.length || document.querySelector(selectors.join(", ")) === null) return [];
  } catch (e) { /* one of them is unreadable: each is looked up below */ }
  return selectors.flatMap((s) => {
    try { return document.querySelector(s) !== null ? [s] : []; }
    catch (e) { return [s + ' (unreadable: ' + e.name + ')']; }
  });
}
"""


def rule_selectors(css: str) -> set[str]:
    """Every selector of every style rule in ``css``, ``@media`` blocks included."""
    out: set[str] = set()
    for prelude, body in theme_css._blocks(css):
        if body is None:
            continue
        if prelude.startswith(theme_css.NESTING):
            out |= rule_selectors(body)
        elif not prelude.startswith("@"):
            out.update(sel.strip() for sel in theme_css._split_top(prelude, ","))
    return out


def removed_selectors(whole: str, served: str) -> list[str]:
    """The selectors of the theme's own stylesheet that the served one no longer has,
    each widened to every element that could ever take that state (:data:`_TRANSIENT`)."""
    gone = rule_selectors(whole) - rule_selectors(served)
    return sorted({widen(sel) for sel in gone})


def widen(selector: str) -> str:
    """``selector`` matching every element that could ever match it: each ``:not(...)``,
    pseudo-element and :data:`_TRANSIENT` pseudo-class becomes ``:is(*)``, which holds
    anywhere in a compound selector and matches any element."""
    out, i = [], 0
    while i < len(selector):
        if selector.startswith(":not(", i):
            depth, j = 1, i + 5
            while j < len(selector) and depth:
                depth += {"(": 1, ")": -1}.get(selector[j], 0)
                j += 1
            out.append(":is(*)")
            i = j
        else:
            out.append(selector[i])
            i += 1
    return _TRANSIENT.sub(":is(*)", "".join(out)).strip()


def matching(browser, url: str, selectors: list[str], states=STATES) -> dict[str, list]:
    """Per state of ``states`` (taken in turn on one load of the page at ``url``), the
    selectors of ``selectors`` that match an element of the page (:data:`MATCHING`)."""
    page = browser.new_page()
    found = {}
    try:
        page.goto(url, wait_until="load")
        for name, viewport, theme, menu in states:
            page.set_viewport_size(viewport)
            page.evaluate(SET_THEME, theme)
            toggle = page.locator(".dropdown-download-buttons button.dropdown-toggle")
            if menu and toggle.count():  # the pages with a download menu
                toggle.first.click()
                page.wait_for_selector(".dropdown-download-buttons .dropdown-menu.show")
            if hits := page.evaluate(MATCHING, selectors):
                found[name] = hits
        return found
    finally:
        page.close()


def edition_sheet(html, path: str):
    """The theme's stylesheet the page at ``path`` links: its edition's copy."""
    edition = html / zh_build.FOLDER if path.startswith(zh_build.FOLDER + "/") else html
    return edition / "_static" / THEME_CSS


@pytest.fixture(scope="module")
def gone(site):
    """Per edition's stylesheet, the selectors its build removed from the theme's own
    (theme_css, and the unused icons' rules that booktools.site.icons removed)."""
    _, html = site
    whole = theme_stylesheet()

    @functools.cache
    def removed(sheet) -> tuple[str, ...]:
        served_sheet = sheet.read_text(encoding="utf-8")
        assert len(served_sheet) < 0.6 * len(whole), f"{sheet} was not cut"
        return tuple(removed_selectors(whole, served_sheet))

    return removed


def theme_stylesheet() -> str:
    """The theme's stylesheet as pydata-sphinx-theme ships it."""
    package = importlib.resources.files("pydata_sphinx_theme")
    return (package / "theme" / "pydata_sphinx_theme" / "static" / THEME_CSS).read_text(
        encoding="utf-8")


@pytest.mark.parametrize("path", STYLE_PAGES)
def test_no_rule_cut_from_the_theme_stylesheet_matches_the_page(site, browser, gone,
                                                               path):
    base, html = site
    problems = matching(browser, base + path, list(gone(edition_sheet(html, path))))
    assert not problems, json.dumps(problems, indent=1)


def test_self_test_the_cut_check_sees_a_rule_a_page_uses(site, browser):
    base, html = site
    served_sheet = (html / "_static" / THEME_CSS).read_text(encoding="utf-8")
    # on purpose: a stylesheet without the rule for the article's column (on every page),
    # and the theme's own with a rule for a cross-reference while hovered, which the
    # served one lacks
    column = ".bd-main .bd-content .bd-article-container"
    assert served_sheet.count("}" + column + "{") == 1  # the whole rule, not a longer one
    broken = served_sheet.replace("}" + column + "{", "}.never-on-a-page{")
    gone = removed_selectors(served_sheet + "a.reference:hover::after{color:red}", broken)
    assert gone == [column, "a.reference:is(*):is(*)"]
    assert matching(browser, base + STYLE_PAGES[1], gone, STATES[:1]) == {
        STATES[0][0]: gone}
    # one unreadable selector among them: still reported, and the others looked up
    assert matching(browser, base + STYLE_PAGES[1], [*gone, "a:unknown-state"],
                    STATES[:1]) == {STATES[0][0]: [
                        *gone, "a:unknown-state (unreadable: SyntaxError)"]}
    assert widen(".f>:not(:placeholder-shown)~label") == ".f>:is(*)~label"
